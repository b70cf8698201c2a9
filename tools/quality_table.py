"""quality_table.py — sample quality of the bundled models, measured with OUR sampler (`diffscope sample`).

    python3 tools/quality_table.py --bin build/bin/diffscope [--models assets/models] [--seeds 5] [--card]
    python3 tools/quality_table.py --calibrate [--k 3,5] [--sets 250]    # CI thresholds, no sampling

The measure (tools/quality_measure.py, issue 18): split-averaged energy distance at the same n on both
sides — samples (n) vs half A and half B (n) vs half A, the held-out `data_samples` split into halves 100
times; n = 1000 for the 2D sets, 180 for digits8x8. Samples come from `diffscope sample --backend cpu`, ddim
(eta 0) and ddpm from t_start 999 with 1000 steps at seeds 0..--seeds-1; each seed's figure is averaged over
the splits, and the table gives mean ± sd over the seeds (the data row: mean ± sd over the splits) and the
ratio of the means. The shape checks (rings, checkerboard) pool every seed's samples. Pure noise: the
sampler's own start noise (tools/philox.py, step_key T), seed 0. Needs numpy only (scikit-learn for the
digits' --calibrate). --cache DIR keeps the sampled .npy files (named model_sampler_nN_sSTEPS_seedS.npy) and
reuses those already there. A model in another family than epsilon (`prediction_type`, SEMANTICS §2) is sampled in
its family: flow models from the start of FlowMatchEuler's list (t_start 0), their ddim column flow-euler.

Writes <models>/quality.json and prints a markdown table; with --card it replaces the table between the
markers `<!-- quality-table -->` and `<!-- /quality-table -->` in <models>/README.md. For digits8x8 it also
writes <models>/digits8x8_samples.png: the first 64 seed-0 ddim samples as an 8x8 grid; for the 2D sets
<models>/samples_2d.png: per set, n held-out points (left) beside the n seed-0 ddim samples (right), [-2.6, 2.6]^2.

--calibrate estimates what a sampler as good as the data scores on the statistic at k seeds (k sets of n
fresh points of the data distribution — 2D: tools/toy_data.py; digits: training images — their mean
split-averaged energy distance over the data-vs-data mean; the shape checks on the k*n pooled points),
from --sets fresh sets per model combined k at a time (quality_measure.calibrate), and prints the 99th
percentile: the CI thresholds must lie above it (an ideal sampler then fails for < 1% of seed choices).
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
import quality_measure as qm  # noqa: E402


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


BACKEND = "cpu"  # --backend: the CLI's backend for every sample (cpu: float64-checked reference path)


def run_sample(binary, model, sampler, n, seed, out, steps=1000, family="epsilon"):
    """`diffscope sample` from pure noise: the VP families from t_start 999; a flow model from the start of
    FlowMatchEuler's list (t_start 0, its `--steps` levels), its deterministic sampler flow-euler (ddim with
    eta 0 on that list)."""
    sampler_args = ["--sampler", sampler, "--eta", "0", "--t-start", "999"]
    if family in ("flow", "flow_prediction"):
        sampler_args = ["--sampler", "flow-euler" if sampler == "ddim" else sampler, "--t-start", "0"]
    cmd = [binary, "sample", "--model", model, "--n", str(n), *sampler_args, "--steps", str(steps),
           "--seed", str(seed), "--backend", BACKEND, "--out", out]
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return np.load(out).astype(np.float64), time.time() - t0


def samples(binary, path, model, sampler, n, seed, steps, cache, family="epsilon"):
    """The model's samples: from --cache if present there, else sampled (and kept in the cache). model: the
    file's name (moons, moons_v, ...), which names the cached file."""
    name = "%s_%s_n%d_s%d_seed%d.npy" % (model, sampler, n, steps, seed)
    if cache and os.path.exists(os.path.join(cache, name)):
        return np.load(os.path.join(cache, name)).astype(np.float64)
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(cache, name) if cache else os.path.join(tmp, name)
        x, secs = run_sample(binary, path, sampler, n, seed, out + ".tmp.npy", steps, family)
        os.replace(out + ".tmp.npy", out)
        print("  sampled %s (%.1f s)" % (name, secs), flush=True)
        return x


def measure(binary, path, seeds, steps=1000, samplers=("ddim", "ddpm"), cache=""):
    data, meta = read_safetensors_np(path, {"data_samples"})
    if "data_samples" not in data:
        return None, None
    held = data["data_samples"]
    dataset = meta.get("dataset", os.path.basename(path))
    model = os.path.basename(path)[:-len(".safetensors")]
    family = meta.get("prediction_type", "epsilon")
    ref = qm.SplitReference(held)
    dd = ref.data_vs_data()
    T = int(meta.get("T", "1000"))
    row = {"dataset": dataset, "model": model, "family": family, "dim": held.shape[1], "n": ref.n, "n_half_a": len(held) // 2, "steps": steps,
           "splits": len(ref.splits), "data_vs_data": qm.mean_sd(dd),
           "noise": float(ref.samples_vs_a(philox.normal_noise(0, T, ref.n, held.shape[1])).mean())}
    first = None
    for s in samplers:
        xs = [samples(binary, path, model, s, ref.n, seed, steps, cache, family) for seed in range(seeds)]
        per_seed = [float(ref.samples_vs_a(x).mean()) for x in xs]
        row[s + "_seeds"] = per_seed
        row[s] = qm.mean_sd(per_seed)
        row[s + "_ratio"] = row[s][0] / row["data_vs_data"][0]
        if dataset in ("rings", "checkerboard"):
            ok, fig = qm.shape_check(dataset, qm.raw_units(np.concatenate(xs), meta))
            row[s + "_shape"] = dict(fig, passed=ok, points=sum(len(x) for x in xs))
        if s == "ddim":
            first = xs[0]
    if dataset in ("rings", "checkerboard"):
        ok, fig = qm.shape_check(dataset, qm.raw_units(held, meta))
        row["data_shape"] = dict(fig, passed=ok, points=len(held))
    return row, first


def _ms(v, digits=4):
    return "%.*f ± %.*f" % (digits, v[0], digits, v[1])


def _shape(r, s):
    f = r.get(s + "_shape")
    if f is None:
        return "—"
    if "outside" in f:
        return "%s: %.1f%% outside the squares" % ("pass" if f["passed"] else "**FAIL**", 100 * f["outside"])
    return "%s: %s (data %s)" % ("pass" if f["passed"] else "**FAIL**",
                                  " / ".join("%.1f%%" % (100 * v) for v in f["shares"]),
                                  " / ".join("%.1f%%" % (100 * v) for v in f["data_shares"]))


def markdown(rows):
    k = len(rows[0].get("ddim_seeds", []))
    lines = ["| model | n (half A) | data vs data, %d splits | ddim, %d seeds | ddim / data | ddpm, %d seeds "
             "| ddpm / data | pure noise | shape check, ddim (%d x n samples) | shape check, ddpm |" % (
                 rows[0]["splits"], k, k, k),
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append("| %s | %d (%d) | %s | %s | %.2f | %s | %.2f | %.3f | %s | %s |" % (
            r.get("model", r["dataset"]), r["n"], r["n_half_a"], _ms(r["data_vs_data"]), _ms(r["ddim"]), r["ddim_ratio"],
            _ms(r["ddpm"]), r["ddpm_ratio"], r["noise"], _shape(r, "ddim"), _shape(r, "ddpm")))
    return "\n".join(lines)


def calibrate(models, ks, sets):
    """Print what a sampler as good as the data scores on the statistic at k seeds (module docstring)."""
    import toy_data
    out = {}
    for name in sorted(f[:-len(".safetensors")] for f in os.listdir(models) if f.endswith(".safetensors")):
        data, meta = read_safetensors_np(os.path.join(models, name + ".safetensors"), {"data_samples"})
        if "data_samples" not in data:
            continue
        ref = qm.SplitReference(data["data_samples"])
        train = toy_data.load_dataset(name, 0)["train"].astype(np.float64) if name == "digits8x8" else None
        t0 = time.time()
        for k, (ratios, shapes) in qm.calibrate(ref, meta, ks, sets, train_digits=train).items():
            r = {"k": k, "n": ref.n, "sets": sets, "ratio_mean": float(ratios.mean()),
                 "ratio_sd": float(ratios.std(ddof=1)), "ratio_p99": float(np.percentile(ratios, 99)),
                 "ratio_p999": float(np.percentile(ratios, 99.9)), "ratio_max": float(ratios.max())}
            if shapes is not None:
                r.update(shape_p99=float(np.percentile(shapes, 99)), shape_max=float(shapes.max()))
            out["%s_k%d" % (name, k)] = r
            print("%-13s k=%d n=%d sets=%d ratio %.3f ± %.3f p99 %.3f p99.9 %.3f max %.3f%s (%.0f s)" % (
                name, k, ref.n, sets, r["ratio_mean"], r["ratio_sd"], r["ratio_p99"], r["ratio_p999"],
                r["ratio_max"], "  shape p99 %.4f max %.4f" % (r["shape_p99"], r["shape_max"])
                if shapes is not None else "", time.time() - t0), flush=True)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", help="the diffscope executable")
    ap.add_argument("--models", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "assets", "models"))
    ap.add_argument("--seeds", type=int, default=5, help="seeds 0..SEEDS-1 per sampler")
    ap.add_argument("--steps", type=int, default=1000, help="steps N from t_start 999")
    ap.add_argument("--samplers", default="ddim,ddpm")
    ap.add_argument("--cache", default="", help="folder for the sampled .npy files (reused when present)")
    ap.add_argument("--json", default="quality.json", help="output file name inside --models ('' for none)")
    ap.add_argument("--backend", default="cpu", help="the CLI's --backend for sampling (cpu or cuda)")
    ap.add_argument("--only", default="", help="comma list of data sets (default: every model with data_samples)")
    ap.add_argument("--card", action="store_true", help="write the table into <models>/README.md")
    ap.add_argument("--calibrate", action="store_true", help="CI thresholds from data-vs-data draws (no sampling)")
    ap.add_argument("--k", default="3,5", help="--calibrate: seed counts of the statistic (CI: 3, card: 5)")
    ap.add_argument("--sets", type=int, default=250, help="--calibrate: fresh data sets per model")
    args = ap.parse_args()
    models = os.path.normpath(args.models)
    global BACKEND
    BACKEND = args.backend
    if args.calibrate:
        print(json.dumps(calibrate(models, [int(k) for k in args.k.split(",")], args.sets), indent=1))
        return
    if not args.bin:
        ap.error("--bin is required (the diffscope executable)")
    names = sorted(f[:-len(".safetensors")] for f in os.listdir(models) if f.endswith(".safetensors"))
    if args.only:
        names = [n for n in names if n in args.only.split(",")]
    rows, panels = [], []
    for name in names:
        path = os.path.join(models, name + ".safetensors")
        r, x = measure(args.bin, path, args.seeds, args.steps, args.samplers.split(","), args.cache)
        if r is None:
            print("%s: no data_samples, skipped" % name)
            continue
        if name == "digits8x8" and args.steps == 1000:
            write_png_gray(os.path.join(models, "digits8x8_samples.png"), digit_grid(x[:64]))
        elif r["dim"] == 2 and args.steps == 1000:
            held = read_safetensors_np(path, {"data_samples"})[0]
            panels.append(np.concatenate([scatter_panel(held["data_samples"][:r["n"]]), np.ones((200, 4)),
                                          scatter_panel(x)], axis=1))
        print("%-13s %s" % (name, json.dumps(r)), flush=True)
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
        json.dump({"command": "tools/quality_table.py --seeds %d --steps %d" % (args.seeds, args.steps),
                   "metric": "energy distance (V-statistic, Euclidean) vs half A of data_samples, both sides at "
                             "the same n, averaged over %d random half splits (tools/quality_measure.py)" % qm.N_SPLITS,
                   "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "rows": rows}, f, indent=1)
    if args.card:
        card = os.path.join(models, "README.md")
        text = open(card).read()
        a, b = "<!-- quality-table -->", "<!-- /quality-table -->"
        i, j = text.index(a) + len(a), text.index(b)
        open(card, "w").write(text[:i] + "\n" + table + "\n" + text[j:])


if __name__ == "__main__":
    main()
