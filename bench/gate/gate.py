#!/usr/bin/env python3
"""gate.py — the speed gate's verdict (docs/PERFORMANCE.md "Speed gate").

Reads k `diffscope bench --json` outputs and the headless logs of the live-loop scripts (gui_moons.txt,
gui_digits.txt and, optional, gui_moons_dpmpp.txt and gui_million.txt, each run in k processes; their `measure_json:` lines), takes the median of the k repeats of every metric, compares each
with bench/baseline.json and prints one table with the ratio to the stored best PyTorch figure
(bench/gate/torch_best.json; PyTorch is not re-run). Exit 0: no regression; 1: a metric is slower than its
baseline beyond the tolerance; 2: bad input (a missing file, a metric missing from the measurements).

Tolerances (stated in the baseline and PERFORMANCE.md): kernel medians may be 5% slower (the spread of k = 3
repeats on the H200 was under 2%), GUI frame medians 10%, the frame time outside the denoiser
max(0.5 ms, 25%) (a few ms whose spread is larger in relative terms), playback frames/s 10% lower.

With --history FILE it appends one JSON line per run to FILE (bench/history.jsonl): date, commit, device, k, the
verdict ("pass" or "regression"), every metric's median and spread, and the baseline's commit. A run that cannot
compare (exit 2) appends nothing.

  gate.py --bench b1.json b2.json b3.json --gui-moons m1.log m2.log m3.log --gui-digits d1.log d2.log d3.log \
          [--baseline bench/baseline.json] [--write-baseline NEW.json] [--history bench/history.jsonl] [--commit SHA]
"""
import argparse
import datetime
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEVICE = "NVIDIA H200"


def fail(msg, code=2):
    print(f"gate: {msg}", file=sys.stderr)
    sys.exit(code)


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"cannot read {path}: {e}")


def kernel_metrics(bench_files):
    """{'workload | precision': [median_us per repeat]} for the fused rows."""
    out = {}
    for path in bench_files:
        for r in load_json(path).get("rows", []):
            if r.get("impl") != "fused" or r.get("median_us") is None:
                continue
            out.setdefault(f"{r['workload']} | {r['precision']}", []).append(float(r["median_us"]))
    return out


def measure_lines(log_path):
    try:
        with open(log_path, errors="replace") as f:
            return [json.loads(l.split("measure_json:", 1)[1]) for l in f if l.startswith("measure_json:")]
    except (OSError, ValueError) as e:
        fail(f"cannot read the measures in {log_path}: {e}")


def gui_metrics(name, log_paths, looping):
    """The looping measures (k per log) and (moons) the playback measure, one per log: each log is one process of
    the script, and the frame phases on the CPU differ between processes of one binary (playback 433 and 499
    frames/s in two runs of 249ebc1), so the gate runs each script in several processes and takes the median."""
    out, waits = {}, 0
    for log_path in log_paths:
        m = measure_lines(log_path)
        if len(m) < looping:
            fail(f"{log_path}: {len(m)} measure lines, expected at least {looping}")
        loop = m[:looping]
        for key, field in ((f"gui {name}: frame ms (loop, median)", "median_ms"),
                           (f"gui {name}: outside the denoiser ms", "outside_kernel_ms"),
                           (f"gui {name}: denoiser ms per frame", "kernel_ms")):
            out.setdefault(key, []).extend(x[field] for x in loop)
        if len(m) > looping:
            out.setdefault(f"gui {name}: playback frames/s", []).append(m[looping]["fps"])
        waits += sum(x["readbacks"] + x["syncs"] + x["camera_fits"] for x in m)
    return out, waits


def tolerance(key):
    if key.endswith("frames/s"):
        return {"kind": "lower_is_worse", "rel": 0.10}
    if "outside the denoiser" in key:
        return {"kind": "abs_or_rel", "abs": 0.5, "rel": 0.25}
    if key.startswith("gui "):
        return {"kind": "rel", "rel": 0.10}
    return {"kind": "rel", "rel": 0.05}


def regressed(now, base, tol):
    if tol["kind"] == "lower_is_worse":
        return now < base * (1 - tol["rel"])
    if tol["kind"] == "abs_or_rel":
        return now > base + max(tol["abs"], tol["rel"] * base)
    return now > base * (1 + tol["rel"])


def history_record(date, commit, device, k, verdict, med, spread, baseline_commit):
    """One line of bench/history.jsonl: a gate run's medians and spreads and its verdict."""
    return {
        "date": date, "commit": commit, "device": device, "k": k, "verdict": verdict,
        "metrics": {m: {"value": med[m], "spread": round(spread[m], 4)} for m in sorted(med)},
        "baseline_commit": baseline_commit,
    }


def append_history(path, record):
    with open(path, "a") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", nargs="+", required=True)
    ap.add_argument("--gui-moons", nargs="+", required=True, help="the moons script's logs, one per process")
    ap.add_argument("--gui-digits", nargs="+", required=True, help="the digits script's logs, one per process")
    ap.add_argument("--gui-solver", nargs="+", default=[],
                    help="the dpmpp-2m karras script's logs (gui_moons_dpmpp.txt), one per process")
    ap.add_argument("--gui-million", nargs="+", default=[],
                    help="the million-sample density script's logs (gui_million.txt), one per process")
    ap.add_argument("--looping", type=int, default=3, help="looping measures per GUI script (k)")
    ap.add_argument("--baseline", default=os.path.join(HERE, "..", "baseline.json"))
    ap.add_argument("--torch", default=os.path.join(HERE, "torch_best.json"))
    ap.add_argument("--write-baseline", help="write these measurements as a new baseline to this path")
    ap.add_argument("--history", help="append this run's record (one JSON line) to this file")
    ap.add_argument("--commit", default="", help="the commit measured (for --write-baseline and --history)")
    ap.add_argument("--device", default=DEVICE, help=f"the device measured (default: {DEVICE})")
    a = ap.parse_args()
    if a.history and not a.commit:
        fail("--history needs --commit SHA (the commit measured)")

    metrics = kernel_metrics(a.bench)
    if not metrics:
        fail("no fused rows in the bench output (a build without CUDA, or no device?)")
    g1, w1 = gui_metrics("moons 65536", a.gui_moons, a.looping)
    g2, w2 = gui_metrics("digits8x8 16384", a.gui_digits, a.looping)
    metrics.update(g1)
    metrics.update(g2)
    if a.gui_solver:
        g3, w3 = gui_metrics("moons 65536 dpmpp-2m karras 50", a.gui_solver, a.looping)
        metrics.update(g3)
        w2 += w3
    if a.gui_million:
        g4, w4 = gui_metrics("moons 1000000 dpmpp-2m karras 30 density", a.gui_million, a.looping)
        metrics.update(g4)
        w2 += w4
    med = {k: statistics.median(v) for k, v in metrics.items()}
    spread = {k: (max(v) - min(v)) / statistics.median(v) if len(v) > 1 and statistics.median(v) else 0.0
              for k, v in metrics.items()}
    torch = load_json(a.torch)

    if a.write_baseline:
        base = {
            "date": datetime.date.today().isoformat(), "commit": a.commit, "device": a.device,
            "k": len(a.bench), "note": "medians of k repeats; tolerances in bench/gate/gate.py and PERFORMANCE.md",
            "metrics": {k: {"value": med[k], "spread": round(spread[k], 4), "tolerance": tolerance(k)} for k in med},
        }
        with open(a.write_baseline, "w") as f:
            json.dump(base, f, indent=1, sort_keys=True)
            f.write("\n")
        print(f"gate: wrote the baseline {a.write_baseline} ({len(med)} metrics)")

    base = load_json(a.baseline) if os.path.exists(a.baseline) else {"metrics": {}}
    bm = base.get("metrics", {})
    print(f"baseline: {base.get('date', '-')} {base.get('commit', '-')}; k = {len(a.bench)} repeats")
    print(f"{'metric':58} {'now':>11} {'baseline':>11} {'ratio':>7} {'spread':>7} {'vs PyTorch':>12}  verdict")
    bad = []
    for k in sorted(med):
        now = med[k]
        b = bm.get(k, {}).get("value")
        t = torch.get(k)
        vs = f"{t['us'] / now:.2f}x ({t['mode']})" if t and now > 0 else "-"
        if b is None:
            verdict = "new"
        elif regressed(now, b, bm[k].get("tolerance", tolerance(k))):
            verdict = "REGRESSION"
            bad.append(k)
        else:
            verdict = "ok"
        ratio = f"{now / b:.3f}" if b else "-"
        print(f"{k:58} {now:11.2f} {b if b is not None else float('nan'):11.2f} {ratio:>7} {spread[k]:7.1%} {vs:>12}  {verdict}")
    missing = sorted(set(bm) - set(med))
    for k in missing:
        print(f"{k:58} {'missing':>11}")
    if w1 + w2:
        print(f"gate: the live loop waited on the GPU ({w1 + w2} read-backs/syncs/fits in the measures)")
        bad.append("GPU waits")
    if missing:
        fail(f"{len(missing)} baseline metrics were not measured: {', '.join(missing)}")
    if a.history:
        append_history(a.history, history_record(
            datetime.date.today().isoformat(), a.commit, a.device, len(a.bench), "regression" if bad else "pass",
            med, spread, base.get("commit")))
        print(f"gate: appended this run to {a.history}")
    if bad:
        print(f"gate: FAIL ({len(bad)}): {'; '.join(bad)}")
        return 1
    print("gate: pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
