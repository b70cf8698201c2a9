#!/usr/bin/env python3
"""time_to_quality.py — issue 30's "time to a good model": `diffscope train` on the moons data with a recipe
(default: the trainer's defaults), then the model card's measure on its samples (assets/models/README.md "Quality":
tools/quality_measure.py's split-averaged energy distance against the held-out half A, as a ratio to data vs data;
the bar for a 2D model's deterministic sampler is 1.5x).

Per objective (epsilon: ddim; flow: flow-euler; 1000 steps, 1000 samples, seeds 0..4): the wall time of the train
process (start-up, data, steps, files), the trainer's own step time, the ratio and the raw distances. The held-out
rows are the model's own data_samples (--holdout, default 0.5: 1024 of moons' 2048 rows, so the measure's n is 512;
the trainer never sees them). Writes DIR/time_to_quality.json and prints one line per objective.

Usage (repository root, on the GPU machine):
  python3 bench/train/time_to_quality.py --diffscope .gpu/bin-k/diffscope --out "$OUT" [--backend cuda]
      [--objectives epsilon,flow] [--recipe "--batch 4096 --steps 4000 --lr 1e-3"] [--holdout 0.5]
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import quality_measure  # noqa: E402
import safetensors_io  # noqa: E402

SAMPLERS = {"epsilon": "ddim", "sample": "ddim", "v_prediction": "ddim", "flow": "flow-euler"}
BAR = 1.5  # the card's bar for a 2D model's deterministic sampler: within 1.5x of data vs data


def run(cmd):
    t0 = time.time()
    res = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    if res.returncode != 0:
        sys.exit("failed (rc %d): %s\n%s" % (res.returncode, " ".join(map(shlex.quote, cmd)), res.stderr[-2000:]))
    return res, wall


def held_out(model_path):
    tensors, _ = safetensors_io.load(model_path)
    return tensors["data_samples"].double().numpy()


def one_objective(args, objective):
    model = os.path.join(args.out, "moons_%s.safetensors" % objective)
    cmd = [args.diffscope, "train", "--quiet", "--data", "moons", "--backend", args.backend, "--objective", objective,
           "--holdout", str(args.holdout), "--out", model] + shlex.split(args.recipe)
    res, wall = run(cmd)
    m = re.search(r"(\d+)/\d+ steps in .*\(([0-9.]+) steps/s\)", res.stderr)
    steps, rate = (int(m.group(1)), float(m.group(2))) if m else (0, float("nan"))
    ref = quality_measure.SplitReference(held_out(model))
    data = ref.data_vs_data().mean()
    per_seed = []
    for seed in range(args.seeds):
        samples = os.path.join(args.out, "moons_%s_s%d.npy" % (objective, seed))
        run([args.diffscope, "sample", "--model", model, "--backend", args.backend, "--sampler", SAMPLERS[objective],
             "--steps", "1000", "--n", "1000", "--seed", str(seed), "--out", samples])
        per_seed.append(ref.samples_vs_a(np.load(samples)).mean())
    ratio = float(np.mean(per_seed) / data)
    row = {"objective": objective, "recipe": args.recipe or "(defaults)", "backend": args.backend,
           "train_wall_s": round(wall, 3), "train_steps": steps, "train_step_s": steps / rate if m else None,
           "steps_per_s": rate, "energy": float(np.mean(per_seed)), "energy_sd": float(np.std(per_seed)),
           "data_vs_data": float(data), "ratio": ratio, "meets_bar": ratio <= BAR, "n": ref.n,
           "held_out_rows": len(ref.held), "train_log": res.stderr.strip().splitlines()[-1:]}
    print("%-8s wall %6.2f s (steps %6.2f s, %d steps, %.0f steps/s)  energy %.4f +- %.4f  data %.4f  ratio %.2f "
          "(bar %.1f: %s)" % (objective, wall, row["train_step_s"] or float("nan"), steps, rate, row["energy"],
                              row["energy_sd"], data, ratio, BAR, "met" if row["meets_bar"] else "NOT met"),
          flush=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--diffscope", default=os.path.join(ROOT, ".gpu/bin-k/diffscope"))
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/time_to_quality"))
    ap.add_argument("--backend", default="cuda")
    ap.add_argument("--objectives", default="epsilon,flow")
    ap.add_argument("--recipe", default="", help="extra `diffscope train` options (default: none, its defaults)")
    ap.add_argument("--holdout", type=float, default=0.5)
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = [one_objective(args, o) for o in args.objectives.split(",") if o]
    with open(os.path.join(args.out, "time_to_quality.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
