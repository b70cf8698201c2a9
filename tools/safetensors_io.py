"""safetensors_io.py — write (and read back) .safetensors files from torch tensors (SEMANTICS §6).

Uses the `safetensors` package when it is installed (as on the H200 machine); otherwise a small writer of
the same format: 8-byte little-endian header length, JSON header {name: {dtype, shape, data_offsets}} plus
optional "__metadata__" (strings), then the raw little-endian tensor bytes.
"""
import json
import struct

import torch

_DTYPES = {torch.float64: "F64", torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16",
           torch.int64: "I64", torch.int32: "I32"}
_VIEW = {torch.float64: torch.int64, torch.float32: torch.int32, torch.float16: torch.int16,
         torch.bfloat16: torch.int16, torch.int64: torch.int64, torch.int32: torch.int32}


def save(tensors, path, metadata=None):
    """tensors: dict name -> CPU tensor; metadata: dict of strings (or None)."""
    tensors = {k: v.detach().cpu().contiguous() for k, v in tensors.items()}
    metadata = {str(k): str(v) for k, v in (metadata or {}).items()}
    try:
        from safetensors.torch import save_file
    except ImportError:
        save_file = None
    if save_file is not None:
        save_file(tensors, path, metadata=metadata or None)
        return
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        t = tensors[name]
        raw = t.view(_VIEW[t.dtype]).numpy().tobytes()
        header[name] = {"dtype": _DTYPES[t.dtype], "shape": list(t.shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    js = json.dumps(header, separators=(",", ":")).encode()
    js += b" " * ((8 - len(js) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)))
        f.write(js)
        for b in blobs:
            f.write(b)


def load(path):
    """Returns (dict name -> tensor, metadata dict). Independent of the safetensors package."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {}) or {}
    inv = {v: k for k, v in _DTYPES.items()}
    out = {}
    for name, h in header.items():
        b, e = h["data_offsets"]
        dt = inv[h["dtype"]]
        buf = bytearray(data[8 + n + b:8 + n + e])
        t = torch.frombuffer(buf, dtype=_VIEW[dt]) if e > b else torch.zeros(0, dtype=_VIEW[dt])
        out[name] = t.view(dt).reshape(h["shape"]).clone()
    return out, meta
