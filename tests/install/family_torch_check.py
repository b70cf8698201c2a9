"""family_torch_check.py — the bundled moons models of every family sampled on the GPU (`diffscope sample --backend
cuda --precision fp32`) against the PyTorch reference (tools/reference_module.py, float64, from the same start
noise): ddim in the VP families (epsilon, sample, v_prediction) from t_start T - 1, flow-euler on FlowMatchEuler's
list for flow; and every solver of the flow model on the GPU against the CPU backend. Needs torch and a CUDA device
(the H200); DIFFSCOPE_BIN names the CLI. Prints one line per check; exit 1 when one is off.

    DIFFSCOPE_BIN=build/bin/diffscope python3 tests/install/family_torch_check.py
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import reference_module  # noqa: E402

BIN = os.environ.get("DIFFSCOPE_BIN", os.path.join(ROOT, "build", "bin", "diffscope"))
MODELS = os.path.join(ROOT, "assets", "models")


def cli_sample(model, noise_path, out, *args):
    cmd = [BIN, "sample", "--model", model, "--noise", noise_path, "--n", "512", "--out", out] + [str(a) for a in args]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(" ".join(cmd) + ": " + r.stderr)
    return np.load(out).astype(np.float64)


def main():
    failures = 0
    steps = 50
    with tempfile.TemporaryDirectory() as d:
        noise = np.random.default_rng(7).standard_normal((512, 2)).astype(np.float32)
        noise_path = os.path.join(d, "noise.npy")
        np.save(noise_path, noise)
        for name, sampler in [("moons", "ddim"), ("moons_sample", "ddim"), ("moons_v", "ddim"),
                              ("moons_flow", "flow-euler")]:
            path = os.path.join(MODELS, name + ".safetensors")
            model, _ = reference_module.load_reference(path)
            model = model.double()
            x = torch.from_numpy(noise).double()
            ref = reference_module.sample_family(model, x, sampler, steps, noise=None).numpy()
            got = cli_sample(path, noise_path, os.path.join(d, name + ".npy"), "--backend", "cuda", "--precision",
                             "fp32", "--steps", steps, "--sampler", sampler)
            err = float(np.abs(got - ref).max())
            ok = err < 2e-3
            failures += not ok
            print("%s %s %s, %d steps, GPU fp32 vs PyTorch float64: max |diff| %.2e" % (
                "ok  " if ok else "FAIL", name, sampler, steps, err))
        flow = os.path.join(MODELS, "moons_flow.safetensors")
        for sampler in ["ddim", "flow-euler", "flow-heun", "heun", "dpmpp-2m", "dpmpp-2m-sde", "euler-ancestral",
                        "ddpm"]:
            args = ["--steps", 40, "--sampler", sampler, "--seed", 3, "--precision", "fp32"]
            g = cli_sample(flow, noise_path, os.path.join(d, "g.npy"), "--backend", "cuda", *args)
            c = cli_sample(flow, noise_path, os.path.join(d, "c.npy"), "--backend", "cpu", *args)
            err = float(np.abs(g - c).max())
            ok = err < 1e-3 and np.isfinite(g).all()
            failures += not ok
            print("%s moons_flow %s, 40 steps, GPU vs CPU backend: max |diff| %.2e" % (
                "ok  " if ok else "FAIL", sampler, err))
    print("family_torch_check: %d failure(s)" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
