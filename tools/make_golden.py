"""make_golden.py — golden data for the C++ tests: float64 PyTorch outputs of the reference modules.

    python3 tools/make_golden.py [--out tests/data/golden]

Writes model/weight files (.safetensors: float32 weights unless the case says F16/BF16; schedule buffers
float32 as the module's state_dict() has them), inputs (.npy: x float32, t_start int64), expected outputs
(.npy float64) and manifest.json (the list of cases; tests/data/golden/README.md describes the fields).

How the expected values are computed: the module (tools/reference_module.py) is loaded with the weights
exactly as stored (F16/BF16 weights rounded first), moved to float64 with .double(), and its schedule
buffers are recomputed in float64 from the file's float32 betas (what the C++ loader does, SEMANTICS §1);
inputs are the float32 arrays as stored, widened to float64. Stochastic samplers draw their noise from
tools/philox.py (SEMANTICS §7): start noise with step_key T, the noise of the step at t with step_key t.
Nothing here comes from our C++ program.
"""
import argparse
import datetime
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import philox  # noqa: E402
import safetensors_io  # noqa: E402
from reference_module import Mlp3, ReferenceDenoiser, sample  # noqa: E402


def make_denoiser(dim, hidden, seed):
    """PyTorch default init (nn.Linear: uniform +-1/sqrt(fan_in)) under torch.manual_seed(seed)."""
    torch.manual_seed(seed)
    return ReferenceDenoiser(dim, hidden)


def to_float64_module(model, weight_dtype=torch.float32):
    """A float64 copy whose weights are the stored (possibly F16/BF16-rounded) values and whose schedule is
    recomputed in float64 from the float32 betas."""
    m = ReferenceDenoiser(model.dim, model.hidden, steps=model.steps, T=model.T)
    m.load_state_dict(model.state_dict())
    with torch.no_grad():
        for p in m.eps_net.parameters():
            p.copy_(p.to(weight_dtype).to(torch.float32))
    betas32 = model.betas.to(torch.float32)
    m = m.double()
    m.recompute_schedule(betas32.double())
    return m


def model_file_tensors(model, weight_dtype=torch.float32):
    sd = model.state_dict()
    out = {}
    for k, v in sd.items():
        out[k] = v.to(weight_dtype) if k.startswith("eps_net.") else v.to(torch.float32)
    return out


class Writer:
    def __init__(self, out):
        self.out = out
        self.cases = []
        os.makedirs(out, exist_ok=True)

    def npy(self, name, arr):
        np.save(os.path.join(self.out, name), arr)
        return name

    def model(self, name, model, weight_dtype=torch.float32, meta=None):
        meta = dict(meta or {})
        meta.update({"T": str(model.T), "schedule": "linear", "beta_start": "0.0001", "beta_end": "0.02",
                     "note": "golden test model, random weights (PyTorch default init)"})
        safetensors_io.save(model_file_tensors(model, weight_dtype), os.path.join(self.out, name), meta)
        return name

    def denoise_case(self, name, model_file, model64, x32, t_start, steps, weight_note=""):
        model64.steps = steps
        with torch.no_grad():
            y = model64(torch.from_numpy(x32).double(), torch.from_numpy(t_start))
        case = {"name": name, "kind": "denoise", "model": model_file,
                "x": self.npy(name + "_x.npy", x32), "t_start": self.npy(name + "_t_start.npy", t_start),
                "steps": steps, "expected": self.npy(name + "_expected.npy", y.numpy())}
        if weight_note:
            case["note"] = weight_note
        self.cases.append(case)
        print("%-28s out |y| max %.4f" % (name, float(y.abs().max())))

    def mlp3_case(self, name, sizes, B, seed):
        torch.manual_seed(seed)
        net = Mlp3(*sizes)
        x32 = torch.randn(B, sizes[0]).numpy().astype(np.float32)
        wfile = name + "_weights.safetensors"
        safetensors_io.save({k: v.float() for k, v in net.state_dict().items()}, os.path.join(self.out, wfile),
                            {"note": "golden test 3-layer MLP, PyTorch default init"})
        net64 = net.double()
        with torch.no_grad():
            y = net64(torch.from_numpy(x32).double())
        self.cases.append({"name": name, "kind": "mlp3", "weights": wfile,
                           "x": self.npy(name + "_x.npy", x32), "expected": self.npy(name + "_expected.npy", y.numpy())})
        print("%-28s out |y| max %.4f" % (name, float(y.abs().max())))

    def sample_case(self, name, model_file, model64, sampler, eta, t_start, steps, seed, n):
        T, dim = model64.T, model64.dim

        def noise(step_key, rows, d):
            return torch.from_numpy(philox.normal_noise(seed, step_key, rows, d))

        x0 = noise(T, n, dim)
        y = sample(model64, x0.clone(), sampler, t_start, steps, noise, eta=eta)
        self.cases.append({"name": name, "kind": "sample", "model": model_file, "sampler": sampler, "eta": eta,
                           "steps": steps, "t_start_scalar": t_start, "seed": seed, "n": n,
                           "x_start": self.npy(name + "_x_start.npy", x0.numpy()),
                           "expected": self.npy(name + "_expected.npy", y.numpy())})
        print("%-28s out |y| max %.4f" % (name, float(y.abs().max())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                                  "tests", "data", "golden"))
    args = ap.parse_args()
    torch.set_num_threads(min(4, torch.get_num_threads()))
    w = Writer(os.path.normpath(args.out))
    rng = np.random.default_rng(20261130)

    # Reference configuration: B=8, dim=64, hidden=256, 16 steps, random t_start in [15, 999].
    ref = make_denoiser(64, 256, seed=1001)
    ref_file = w.model("ref_d64_h256.safetensors", ref)
    ref64 = to_float64_module(ref)
    x = rng.standard_normal((8, 64)).astype(np.float32)
    t = rng.integers(15, 1000, size=8).astype(np.int64)
    w.denoise_case("ref_b8_d64_h256_s16", ref_file, ref64, x, t, 16)
    # The same model, every row from 999 for the whole 1000 steps (error accumulation).
    x = rng.standard_normal((8, 64)).astype(np.float32)
    w.denoise_case("ref_b8_d64_h256_s1000", ref_file, ref64, x, np.full(8, 999, np.int64), 1000)
    # Mixed t_start with rows below S-1 = 15: they freeze after their step at t = 0 (SEMANTICS §4).
    x = rng.standard_normal((9, 64)).astype(np.float32)
    t = np.array([999, 500, 16, 15, 14, 5, 1, 0, 999], np.int64)
    w.denoise_case("mixed_t_start_s16", ref_file, ref64, x, t, 16)
    # F16- and BF16-stored weights (golden from the rounded weights; schedule buffers stay float32).
    for tag, dt in (("f16", torch.float16), ("bf16", torch.bfloat16)):
        f = w.model("ref_d64_h256_%s.safetensors" % tag, ref, weight_dtype=dt)
        x = rng.standard_normal((8, 64)).astype(np.float32)
        t = rng.integers(15, 1000, size=8).astype(np.int64)
        w.denoise_case("ref_%s_weights_s16" % tag, f, to_float64_module(ref, dt), x, t, 16,
                       "eps_net.* stored %s; expected computed from the rounded weights" % tag.upper())
    # dim = 2, hidden = 256.
    d2 = make_denoiser(2, 256, seed=1002)
    d2_file = w.model("d2_h256.safetensors", d2)
    d2_64 = to_float64_module(d2)
    x = rng.standard_normal((16, 2)).astype(np.float32)
    t = rng.integers(15, 1000, size=16).astype(np.int64)
    w.denoise_case("d2_h256_s16", d2_file, d2_64, x, t, 16)
    # hidden != dim + 1 with a square middle layer (40 x 40): catches a transposed load.
    d3 = make_denoiser(3, 40, seed=1003)
    d3_file = w.model("d3_h40.safetensors", d3)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    t = np.array([999, 700, 300, 40, 15], np.int64)
    w.denoise_case("d3_h40_s16", d3_file, to_float64_module(d3), x, t, 16)

    # The 3-layer MLP: reference sizes and odd sizes.
    w.mlp3_case("mlp3_b16_48_64_40_24", (48, 64, 40, 24), 16, seed=2001)
    w.mlp3_case("mlp3_b1_7_33_5_3", (7, 33, 5, 3), 1, seed=2002)

    # Full sampling runs on the dim = 2 model, noise from Philox (seed 1234, n = 37).
    w.sample_case("sample_d2_ddim_eta0_n50", d2_file, d2_64, "ddim", 0.0, 999, 50, 1234, 37)
    w.sample_case("sample_d2_ddim_eta1_n50", d2_file, d2_64, "ddim", 1.0, 999, 50, 1234, 37)
    w.sample_case("sample_d2_ddim_eta05_t300_n7", d2_file, d2_64, "ddim", 0.5, 300, 7, 1234, 37)
    w.sample_case("sample_d2_ddpm_t999_n1000", d2_file, d2_64, "ddpm", 0.0, 999, 1000, 1234, 37)
    w.sample_case("sample_d2_ddpm_t99_n100", d2_file, d2_64, "ddpm", 0.0, 99, 100, 77, 37)
    w.sample_case("sample_d2_ddpm_mean_t999_n1000", d2_file, d2_64, "ddpm-mean", 0.0, 999, 1000, 1234, 37)

    with open(os.path.join(w.out, "manifest.json"), "w") as f:
        json.dump(w.cases, f, indent=1)
        f.write("\n")
    with open(os.path.join(w.out, "GENERATED.txt"), "w") as f:
        f.write("tools/make_golden.py, torch %s, numpy %s, python %s, %s UTC\n" % (
            torch.__version__, np.__version__, sys.version.split()[0],
            datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M")))
    print("wrote %d cases to %s" % (len(w.cases), w.out))


if __name__ == "__main__":
    main()
