"""quality_table.py — sample quality of the bundled models, measured with OUR sampler (`diffscope sample`).

    python3 tools/quality_table.py --bin build/bin/diffscope [--models assets/models] [--seed 0]

For every model with `data_samples` (held-out points): half A = the first half of them, half B = the second.
Energy distance (V-statistic, Euclidean: 2 E|X-Y| - E|X-X'| - E|Y-Y'|, means over all pairs) against half A,
every comparison at the same n = min(1000, |half B|): samples of `diffscope sample --backend cpu` for ddim
(eta 0), ddpm and ddpm-mean from t_start 999 with 1000 steps and a fixed seed; half B (data vs data); pure
noise (the sampler's own start noise, tools/philox.py, step_key T). Needs numpy only (no torch; scikit-learn for
the digits' fresh-data reference). --repeat K also runs ddim and ddpm at seeds seed..seed+K-1 (mean ± sd), and
every row gets a fresh-data reference: 20 new data sets of n points vs half A (mean ± sd), which shows how
much the single half-B figure varies. A last column gives the mean distance from each sample to its
nearest point of half A (ddim / ddpm / half B): it shows samples that sit off the data (between rings,
between squares), which the energy distance at this n hardly sees.

Writes <models>/quality.json and prints a markdown table; with --card it replaces the table between the
markers `<!-- quality-table -->` and `<!-- /quality-table -->` in <models>/README.md. For digits8x8 it also
writes <models>/digits8x8_samples.png: the first 64 ddim samples as an 8x8 grid; for the 2D sets
<models>/samples_2d.png: per set, n held-out points (left) beside the n ddim samples (right), [-2.6, 2.6]^2.
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


def mean_nn_distance(X, A):
    """Mean over rows of X of the Euclidean distance to the nearest row of A: how far samples sit off the data
    (a precision-like check the energy distance lacks)."""
    X = np.asarray(X, np.float64)
    A = np.asarray(A, np.float64)
    d2 = (X * X).sum(1)[:, None] + (A * A).sum(1)[None, :] - 2 * X @ A.T
    return float(np.sqrt(np.maximum(d2.min(1), 0)).mean())


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


def scatter_panel(pts, size=200, lim=2.6):
    """(n, 2) points in [-lim, lim]^2 -> (size, size) image in [0, 1]: dark dots on white."""
    img = np.ones((size, size))
    ij = np.floor((np.asarray(pts)[:, :2] + lim) / (2 * lim) * size).astype(int)
    ok = (ij >= 0).all(1) & (ij < size).all(1)
    for di in (0, 1):
        for dj in (0, 1):
            img[np.clip(size - 1 - ij[ok, 1] - di, 0, size - 1), np.clip(ij[ok, 0] + dj, 0, size - 1)] = 0.15
    img[0, :] = img[-1, :] = img[:, 0] = img[:, -1] = 0.6
    return img


def run_sample(binary, model, sampler, n, seed, out, steps=1000):
    cmd = [binary, "sample", "--model", model, "--n", str(n), "--sampler", sampler, "--eta", "0",
           "--steps", str(steps), "--t-start", "999", "--seed", str(seed), "--backend", "cpu", "--out", out]
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return np.load(out).astype(np.float64), time.time() - t0


def fresh_data_reference(meta, A, n, draws=20):
    """Energy distance of `draws` fresh data sets of n points vs half A: (mean, sd). 2D sets: new draws from
    the generator (tools/toy_data.py) normalised with the file's data_offset/data_scale; digits8x8: random
    n-image subsets of the 1437 training images. Shows how much the single data-vs-data figure varies."""
    import toy_data
    name = meta.get("dataset", "")
    vals = []
    if name in toy_data.DATASETS_2D:
        off = np.array([float(v) for v in meta["data_offset"].split(",")])
        scale = float(meta["data_scale"])
        for k in range(draws):
            raw = toy_data.raw_2d(name, n, np.random.default_rng([4242, k]))
            vals.append(energy_distance((raw - off) * scale, A))
    elif name == "digits8x8":
        train = toy_data.load_dataset(name, 0)["train"].astype(np.float64)
        for k in range(draws):
            idx = np.random.default_rng([4242, k]).choice(len(train), n, replace=False)
            vals.append(energy_distance(train[idx], A))
    else:
        return None
    return float(np.mean(vals)), float(np.std(vals, ddof=1))


def measure(binary, path, seed, n_max, steps=1000, samplers=SAMPLERS, repeat=1):
    data, meta = read_safetensors_np(path, {"data_samples"})
    if "data_samples" not in data:
        return None
    held = data["data_samples"]
    half = held.shape[0] // 2
    A, B = held[:half], held[half:2 * half]
    n = min(n_max, half)
    T = int(meta.get("T", "1000"))
    row = {"dataset": meta.get("dataset", os.path.basename(path)), "dim": held.shape[1], "n": n,
           "n_half_a": half, "seed": seed, "steps": steps,
           "data_vs_data": energy_distance(B[:n], A), "data_nn": mean_nn_distance(B[:n], A),
           "noise": energy_distance(philox.normal_noise(seed, T, n, held.shape[1]), A)}
    with tempfile.TemporaryDirectory() as tmp:
        for s in samplers:
            x, secs = run_sample(binary, path, s, n, seed, os.path.join(tmp, "x.npy"), steps)
            row[s] = energy_distance(x, A)
            row[s + "_nn"] = mean_nn_distance(x, A)
            row[s + "_seconds"] = round(secs, 2)
            if s == "ddim":
                row["_ddim_samples"] = x
            if repeat > 1 and s != "ddpm-mean":  # the same sampler at seeds seed+1 .. seed+repeat-1
                vals = [row[s]] + [energy_distance(run_sample(binary, path, s, n, seed + k, os.path.join(
                    tmp, "x.npy"), steps)[0], A) for k in range(1, repeat)]
                row[s + "_seeds"] = [round(v, 6) for v in vals]
    ref = fresh_data_reference(meta, A, n)
    if ref is not None:
        row["fresh_data_mean"], row["fresh_data_sd"] = ref
    return row


def _mean_sd(v):
    return "%.4f ± %.4f" % (np.mean(v), np.std(v, ddof=1)) if v and len(v) > 1 else "—"


def markdown(rows):
    lines = ["| model | n (vs half A) | ddim | ddpm | ddpm-mean | data vs data (half B) | pure noise | ddim / data "
             "| ddpm / data | ddim, %s seeds | ddpm, same seeds | fresh data, 20 draws | nearest-data distance: ddim / ddpm / data |" % (
                 len(rows[0].get("ddim_seeds", [])) or "—"),
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        fresh = "%.4f ± %.4f" % (r["fresh_data_mean"], r["fresh_data_sd"]) if "fresh_data_mean" in r else "—"
        nn = "%.3f / %.3f / %.3f" % (r["ddim_nn"], r["ddpm_nn"], r["data_nn"]) if "ddpm_nn" in r else "—"
        lines.append("| %s | %d (%d) | %.4f | %.4f | %.3f | %.4f | %.3f | %.2f | %.2f | %s | %s | %s | %s |" % (
            r["dataset"], r["n"], r["n_half_a"], r["ddim"], r["ddpm"], r["ddpm-mean"], r["data_vs_data"],
            r["noise"], r["ddim"] / r["data_vs_data"], r["ddpm"] / r["data_vs_data"],
            _mean_sd(r.get("ddim_seeds")), _mean_sd(r.get("ddpm_seeds")), fresh, nn))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="the diffscope executable")
    ap.add_argument("--models", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "models"))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--steps", type=int, default=1000, help="steps N from t_start 999")
    ap.add_argument("--samplers", default=",".join(SAMPLERS))
    ap.add_argument("--repeat", type=int, default=1, help="also run ddim and ddpm at this many seeds (mean ± sd)")
    ap.add_argument("--json", default="quality.json", help="output file name inside --models ('' for none)")
    ap.add_argument("--only", default="", help="comma list of data sets (default: every model with data_samples)")
    ap.add_argument("--card", action="store_true", help="write the table into <models>/README.md")
    ap.add_argument("--merge", action="store_true",
                    help="with --only: keep the other data sets' rows of the existing --json file (their ddim samples "
                         "are drawn again, seed --seed, for samples_2d.png)")
    args = ap.parse_args()
    models = os.path.normpath(args.models)
    names = sorted(f[:-len(".safetensors")] for f in os.listdir(models) if f.endswith(".safetensors"))
    kept = {}
    if args.merge:
        with open(os.path.join(models, args.json)) as f:
            kept = {r["dataset"]: r for r in json.load(f)["rows"]}
    elif args.only:
        names = [n for n in names if n in args.only.split(",")]
    rows, panels = [], []
    for name in names:
        if args.merge and name not in args.only.split(","):
            if name not in kept:
                continue
            r = dict(kept[name])
            if r["dim"] == 2 and args.steps == 1000:  # the picture needs its samples again
                with tempfile.TemporaryDirectory() as tmp:
                    x = run_sample(args.bin, os.path.join(models, name + ".safetensors"), "ddim", r["n"], args.seed,
                                   os.path.join(tmp, "x.npy"))[0]
                held = read_safetensors_np(os.path.join(models, name + ".safetensors"), {"data_samples"})[0]
                panels.append(np.concatenate([scatter_panel(held["data_samples"][:r["n"]]), np.ones((200, 4)),
                                              scatter_panel(x)], axis=1))
            print("%-13s kept from %s" % (name, args.json), flush=True)
            rows.append(r)
            continue
        r = measure(args.bin, os.path.join(models, name + ".safetensors"), args.seed, args.n, args.steps,
                    args.samplers.split(","), args.repeat)
        if r is None:
            print("%s: no data_samples, skipped" % name)
            continue
        x = r.pop("_ddim_samples")
        if name == "digits8x8" and args.steps == 1000:
            write_png_gray(os.path.join(models, "digits8x8_samples.png"), digit_grid(x[:64]))
        elif r["dim"] == 2 and args.steps == 1000:
            held = read_safetensors_np(os.path.join(models, name + ".safetensors"), {"data_samples"})[0]
            panels.append(np.concatenate([scatter_panel(held["data_samples"][:r["n"]]), np.ones((200, 4)),
                                          scatter_panel(x)], axis=1))
        print("%-13s n=%d steps=%d %s data %.5f noise %.5f" % (
            name, r["n"], args.steps, " ".join("%s %.5f (%.1fs)" % (s, r[s], r[s + "_seconds"])
                                               for s in args.samplers.split(",")),
            r["data_vs_data"], r["noise"]) + "  nn %s data %.4f" % (
                " ".join("%s %.4f" % (s, r[s + "_nn"]) for s in args.samplers.split(",")), r["data_nn"]) + ("  fresh data %.5f ± %.5f" % (r["fresh_data_mean"], r["fresh_data_sd"])
                                             if "fresh_data_mean" in r else "") +
              "".join("  %s seeds %s" % (s, r[s + "_seeds"]) for s in SAMPLERS if s + "_seeds" in r), flush=True)
        rows.append(r)
    if panels:  # one row per 2D set: held-out data (left) and ddim samples (right), same axes
        gap = np.ones((4, panels[0].shape[1]))
        write_png_gray(os.path.join(models, "samples_2d.png"),
                       np.concatenate([p for q in panels for p in (q, gap)][:-1], axis=0))
    if not args.json:
        return
    table = markdown(rows)
    print(table)
    with open(os.path.join(models, args.json), "w") as f:
        json.dump({"command": "tools/quality_table.py --seed %d --n %d --steps %d" % (args.seed, args.n, args.steps),
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
