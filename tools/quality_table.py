"""quality_table.py — sample quality of the bundled models, measured with OUR sampler (`diffscope sample`).

    python3 tools/quality_table.py --bin build/bin/diffscope [--models assets/models] [--seed 0]

For every model with `data_samples` (held-out points): half A = the first half of them, half B = the second.
Energy distance (V-statistic, Euclidean: 2 E|X-Y| - E|X-X'| - E|Y-Y'|, means over all pairs) against half A,
every comparison at the same n = min(1000, |half B|): samples of `diffscope sample --backend cpu` for ddim
(eta 0), ddpm and ddpm-mean from t_start 999 with 1000 steps and a fixed seed; half B (data vs data); pure
noise (the sampler's own start noise, tools/philox.py, step_key T). Needs numpy only (no torch).

Writes <models>/quality.json and prints a markdown table; with --card it replaces the table between the
markers `<!-- quality-table -->` and `<!-- /quality-table -->` in <models>/README.md. For digits8x8 it also
writes <models>/digits8x8_samples.png: the first 64 ddim samples as an 8x8 grid.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import philox  # noqa: E402

SAMPLERS = ("ddim", "ddpm", "ddpm-mean")


def read_safetensors_np(path, names=None):
    """{name: float array} for F32/F64 tensors (numpy only), plus the metadata dict."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__", {}) or {}
    out = {}
    for k, h in header.items():
        if names is not None and k not in names:
            continue
        dt = {"F32": "<f4", "F64": "<f8"}.get(h["dtype"])
        if dt is None:
            continue
        b, e = h["data_offsets"]
        out[k] = np.frombuffer(data[8 + n + b:8 + n + e], dtype=dt).reshape(h["shape"]).astype(np.float64)
    return out, meta


def pairwise_mean_dist(X, Y):
    xx = (X * X).sum(1)[:, None]
    yy = (Y * Y).sum(1)[None, :]
    return float(np.sqrt(np.maximum(xx + yy - 2 * X @ Y.T, 0)).mean())


def energy_distance(X, Y):
    """V-statistic energy distance (float64)."""
    X = np.asarray(X, np.float64)
    Y = np.asarray(Y, np.float64)
    return 2 * pairwise_mean_dist(X, Y) - pairwise_mean_dist(X, X) - pairwise_mean_dist(Y, Y)


def write_png_gray(path, img):
    """img: (H, W) floats in [0, 1] -> 8-bit grayscale PNG (zlib, no dependencies)."""
    a = (np.clip(img, 0, 1) * 255 + 0.5).astype(np.uint8)
    raw = b"".join(b"\x00" + a[r].tobytes() for r in range(a.shape[0]))

    def chunk(tag, body):
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", a.shape[1], a.shape[0], 8, 0, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def digit_grid(x, cells=8, zoom=6):
    """(cells^2, 64) in [-1, 1] -> image: 8x8 digits on a grey 1-pixel lattice, magnified `zoom` times."""
    img = np.full((cells * 9 + 1, cells * 9 + 1), 0.5)
    for k in range(cells * cells):
        r, c = divmod(k, cells)
        img[1 + r * 9:9 + r * 9, 1 + c * 9:9 + c * 9] = (np.clip(x[k].reshape(8, 8), -1, 1) + 1) / 2
    return np.kron(img, np.ones((zoom, zoom)))


def run_sample(binary, model, sampler, n, seed, out):
    cmd = [binary, "sample", "--model", model, "--n", str(n), "--sampler", sampler, "--eta", "0",
           "--steps", "1000", "--t-start", "999", "--seed", str(seed), "--backend", "cpu", "--out", out]
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return np.load(out).astype(np.float64), time.time() - t0


def measure(binary, path, seed, n_max):
    data, meta = read_safetensors_np(path, {"data_samples"})
    if "data_samples" not in data:
        return None
    held = data["data_samples"]
    half = held.shape[0] // 2
    A, B = held[:half], held[half:2 * half]
    n = min(n_max, half)
    T = int(meta.get("T", "1000"))
    row = {"dataset": meta.get("dataset", os.path.basename(path)), "dim": held.shape[1], "n": n,
           "n_half_a": half, "seed": seed,
           "data_vs_data": energy_distance(B[:n], A),
           "noise": energy_distance(philox.normal_noise(seed, T, n, held.shape[1]), A)}
    with tempfile.TemporaryDirectory() as tmp:
        for s in SAMPLERS:
            x, secs = run_sample(binary, path, s, n, seed, os.path.join(tmp, "x.npy"))
            row[s] = energy_distance(x, A)
            row[s + "_seconds"] = round(secs, 2)
            if s == "ddim":
                row["_ddim_samples"] = x
    return row


def markdown(rows):
    lines = ["| model | n (vs half A) | ddim | ddpm | ddpm-mean | data vs data | pure noise | ddim / data | ddpm / data |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append("| %s | %d (%d) | %.4f | %.4f | %.3f | %.4f | %.3f | %.2f | %.2f |" % (
            r["dataset"], r["n"], r["n_half_a"], r["ddim"], r["ddpm"], r["ddpm-mean"], r["data_vs_data"],
            r["noise"], r["ddim"] / r["data_vs_data"], r["ddpm"] / r["data_vs_data"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the diffscope executable")
    ap.add_argument("--models", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "models"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--only", default="", help="comma list of data sets (default: every model with data_samples)")
    ap.add_argument("--card", action="store_true", help="write the table into <models>/README.md")
    args = ap.parse_args()
    models = os.path.normpath(args.models)
    names = sorted(f[:-len(".safetensors")] for f in os.listdir(models) if f.endswith(".safetensors"))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    rows = []
    for name in names:
        r = measure(args.bin, os.path.join(models, name + ".safetensors"), args.seed, args.n)
        if r is None:
            print("%s: no data_samples, skipped" % name)
            continue
        x = r.pop("_ddim_samples")
        if name == "digits8x8":
            write_png_gray(os.path.join(models, "digits8x8_samples.png"), digit_grid(x[:64]))
        print("%-13s n=%d ddim %.4f ddpm %.4f ddpm-mean %.3f data %.4f noise %.3f (%.0fs)" % (
            name, r["n"], r["ddim"], r["ddpm"], r["ddpm-mean"], r["data_vs_data"], r["noise"],
            sum(r[s + "_seconds"] for s in SAMPLERS)), flush=True)
        rows.append(r)
    table = markdown(rows)
    print(table)
    with open(os.path.join(models, "quality.json"), "w") as f:
        json.dump({"command": "tools/quality_table.py --seed %d --n %d" % (args.seed, args.n),
                   "metric": "energy distance, V-statistic, Euclidean, vs half A of data_samples",
                   "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "rows": rows}, f, indent=1)
    if args.card:
        card = os.path.join(models, "README.md")
        text = open(card).read()
        a, b = "<!-- quality-table -->", "<!-- /quality-table -->"
        i, j = text.index(a) + len(a), text.index(b)
        open(card, "w").write(text[:i] + "\n" + table + "\n" + text[j:])


if __name__ == "__main__":
    main()
