#!/usr/bin/env python3
# make_corpus.py — writes the fuzzers' seed corpus (tests/fuzz/corpus/<target>/): tiny valid files and the
# broken cases of the design's bad-file list, built with the standard library only so the bytes are easy to audit.
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def f32(*v):
    return struct.pack("<%df" % len(v), *v)


def safetensors(tensors, meta=None, pad=0):
    """tensors: list of (name, dtype, shape, raw bytes); laid out back to back."""
    header, data = {}, b""
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    if meta:
        header["__metadata__"] = meta
    h = json.dumps(header, separators=(",", ":")).encode() + b" " * pad
    return struct.pack("<Q", len(h)) + h + data


def eps_net(dim=1, hidden=2, dtype="F32", extra=()):
    def t(name, shape):
        n = 1
        for d in shape:
            n *= d
        vals = [0.25 * (i + 1) for i in range(n)]
        raw = {"F32": f32(*vals), "F16": struct.pack("<%de" % n, *vals),
               "F64": struct.pack("<%dd" % n, *vals)}[dtype]
        return (name, dtype, shape, raw)
    return [t("eps_net.0.weight", [hidden, dim + 1]), t("eps_net.0.bias", [hidden]),
            t("eps_net.2.weight", [hidden, hidden]), t("eps_net.2.bias", [hidden]),
            t("eps_net.4.weight", [dim, hidden]), t("eps_net.4.bias", [dim])] + list(extra)


def npy(descr, shape, raw, fortran=False, version=1):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, repr(tuple(shape)))
    lb = 2 if version == 1 else 4
    d += " " * (64 - (8 + lb + len(d) + 1) % 64) + "\n"
    n = struct.pack("<H", len(d)) if version == 1 else struct.pack("<I", len(d))
    return b"\x93NUMPY" + bytes([version, 0]) + n + d.encode("latin1") + raw


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


betas = [0.1, 0.2, 0.3]
OVERLAP = (b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},'
           b'"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}}')
st = {
    "model_f32": safetensors(eps_net(), {"dataset": "moons"}),
    "model_f16": safetensors(eps_net(dtype="F16")),
    "model_betas_f64": safetensors(eps_net(dtype="F64", extra=[
        ("betas", "F64", [3], struct.pack("<3d", *betas)),
        ("alphas_cumprod", "F32", [3], f32(0.9, 0.72, 0.504)),
        ("data_samples", "F32", [2, 1], f32(1.0, -1.0))]), {"T": "3"}),
    "model_cosine_meta": safetensors(eps_net(dim=2, hidden=2), {"T": "8", "schedule": "cosine"}, pad=5),
    "model_linear_meta": safetensors(eps_net(), {"T": "4", "beta_start": "0.01", "beta_end": "0.2"}),
    "model_ignored": safetensors(eps_net(extra=[("step", "I64", [1], struct.pack("<q", 7)),
                                                ("flag", "BOOL", [1], b"\x01")])),
    "mlp3": safetensors([("fc1.weight", "F32", [2, 1], f32(1, 2)), ("fc2.weight", "BF16", [1, 2], b"\x80\x3f\x00\x40"),
                         ("fc3.weight", "F32", [1, 1], f32(3))]),
    "mlp3_bias": safetensors([("fc1.weight", "F32", [1, 1], f32(1)), ("fc1.bias", "F32", [1], f32(0))]),
    "bad_huge_header": struct.pack("<Q", 132095296) + b"{}      ",
    "bad_zip": b"PK\x03\x04\x14\x00\x00\x00\x08\x00" + b"\x01" * 20,
    "bad_i64_weight": safetensors([("eps_net.0.weight", "I64", [1, 2], struct.pack("<2q", 1, 2))]),
    "bad_f16_betas": safetensors(eps_net(extra=[("betas", "F16", [2], struct.pack("<2e", 0.001, 0.002))])),
    "bad_overlap": struct.pack("<Q", len(OVERLAP)) + OVERLAP + b"\0" * 12,
}
def raw_header(text, data_len):
    """A file from a header written by hand (for keys json.dumps cannot repeat), data of zeros."""
    h = text.encode()
    return struct.pack("<Q", len(h)) + h + b"\0" * data_len


# Duplicate keys at every level: the reader must refuse each, naming the tensor and the key.
DUP_ENTRY = '{"eps_net.0.weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},' \
            '"eps_net.4.bias":{"dtype":"F32","shape":[1],"data_offsets":[16,20],"data_offsets":[20,24]}}'
st["bad_dup_entry_key"] = raw_header(DUP_ENTRY, 24)
st["bad_dup_tensor"] = raw_header('{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},'
                                  '"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}', 8)
st["bad_dup_metadata"] = raw_header('{"__metadata__":{"T":"4","T":"8"},'
                                    '"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}', 4)

# Seeds for fuzz_safetensors' structured mode (first byte 'S': the rest drives a header builder).
st["structured_a"] = b"S" + bytes(range(96))
st["structured_b"] = b"S\x02\x04\x06" + bytes((7 * i) & 0xff for i in range(128))
for k, v in st.items():
    write("safetensors", k + ".safetensors", v)

nd = {
    "f4_2x3": npy("<f4", [2, 3], f32(1, 2, 3, 4, 5, 6)),
    "f8_scalar": npy("<f8", [], struct.pack("<d", 0.5)),
    "i8_tstart": npy("<i8", [4], struct.pack("<4q", 999, 500, 1, 0)),
    "i4_empty": npy("<i4", [0, 3], b""),
    "u1": npy("|u1", [2], b"\x01\xff"),
    "v2_f4": npy("<f4", [1], f32(7), version=2),
    "bad_big_endian": npy(">f4", [1], b"\0\0\0\1"),
    "bad_fortran": npy("<f4", [1, 1], f32(1), fortran=True),
    "bad_object": npy("|O", [1], b"\0" * 8),
    "bad_truncated": npy("<f8", [3], struct.pack("<2d", 1, 2)),
}
for k, v in nd.items():
    write("npy", k + ".npy", v)
