#!/usr/bin/env python3
"""test_family_ddim_numpy.py — `diffscope sample --sampler ddim` on a v-prediction model against a float64 numpy
re-implementation of diffusers' DDIMScheduler.step with prediction_type "v_prediction" (diffusers
schedulers/scheduling_ddim.py: pred_original_sample = alpha_t^0.5 x - beta_t^0.5 v, pred_epsilon = alpha_t^0.5 v +
beta_t^0.5 x, prev = alpha_prev^0.5 x0 + (1 - alpha_prev)^0.5 eps; eta 0, set_alpha_to_one), every kept frame
within float32 rounding (relative Frobenius 1e-5, as the goldens). Two models: the analytic mixture gaussians8-exact
run with --prediction-type v_prediction (its v = alpha eps* - sigma x0 from the exact eps*, SEMANTICS §6), and a
random 2-16-16-2 network whose file says prediction_type v_prediction (SEMANTICS §2: SiLU MLP on [x, t / T]).
The start state is given (--noise), so no random numbers are involved.

Environment (tests/CMakeLists.txt): DIFFSCOPE_BIN the CLI, DIFFSCOPE_ROOT the repository.
"""
import json
import os
import struct
import subprocess
import tempfile
import unittest

import numpy as np

ROOT = os.environ["DIFFSCOPE_ROOT"]
BIN = os.environ["DIFFSCOPE_BIN"]
DTYPES = {"F64": np.float64, "F32": np.float32}


def read_safetensors(path):
    """The tensors (float64) and __metadata__ of a safetensors file."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, t in header.items():
        a, b = t["data_offsets"]
        tensors[name] = np.frombuffer(raw[8 + n + a:8 + n + b], DTYPES[t["dtype"]]).reshape(t["shape"]).astype(np.float64)
    return tensors, meta


def mixture_eps(tensors, x, abar):
    """eps* = -sqrt(1 - abar) grad log p_t(x) of the mixture sum_k w_k N(sqrt(abar) mu_k, (abar s_k^2 + 1 - abar) I)."""
    mu, s, w = tensors["means"], tensors["stds"], tensors["weights"] / tensors["weights"].sum()
    v = abar * s ** 2 + 1 - abar                                      # (K,)
    r = x[:, None, :] - np.sqrt(abar) * mu[None, :, :]                # (n, K, dim)
    logg = np.log(w) - 0.5 * x.shape[1] * np.log(v) - (r ** 2).sum(-1) / (2 * v)
    g = np.exp(logg - logg.max(1, keepdims=True))
    g /= g.sum(1, keepdims=True)
    return np.sqrt(1 - abar) * (g[:, :, None] * r / v[None, :, None]).sum(1)


def mixture_v(tensors, x, abar):
    """The v-prediction output from the exact eps: v = alpha eps - sigma x0, x0 = (x - sigma eps) / alpha."""
    a, b = np.sqrt(abar), np.sqrt(1 - abar)
    eps = mixture_eps(tensors, x, abar)
    return a * eps - b * (x - b * eps) / a


def silu(z):
    return z / (1 + np.exp(-z))


def network_v(tensors, x, t, T):
    """SEMANTICS §2's MLP on u = [x, t / T] with SiLU."""
    u = np.concatenate([x, np.full((x.shape[0], 1), t / T)], 1)
    h1 = silu(u @ tensors["eps_net.0.weight"].T + tensors["eps_net.0.bias"])
    h2 = silu(h1 @ tensors["eps_net.2.weight"].T + tensors["eps_net.2.bias"])
    return h2 @ tensors["eps_net.4.weight"].T + tensors["eps_net.4.bias"]


def ddim_v(x, timesteps, abar, v_of):
    """DDIMScheduler.step, prediction_type v_prediction, eta 0, the last step to alpha_prod_t_prev = 1. Returns
    every state: frames 0 .. N."""
    frames = [x]
    for i, t in enumerate(timesteps):
        alpha_t = abar[t]
        alpha_prev = abar[timesteps[i + 1]] if i + 1 < len(timesteps) else 1.0
        v = v_of(x, t)
        x0 = np.sqrt(alpha_t) * x - np.sqrt(1 - alpha_t) * v
        eps = np.sqrt(alpha_t) * v + np.sqrt(1 - alpha_t) * x
        x = np.sqrt(alpha_prev) * x0 + np.sqrt(1 - alpha_prev) * eps
        frames.append(x)
    return np.stack(frames)


def rel_frobenius(a, b):
    return np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(b)


class DdimVPrediction(unittest.TestCase):
    N, T_START = 10, 999  # default spacing: t_i = round(999 (9 - i) / 9) = 111 (9 - i), no ties

    def run_cli(self, model, extra, x_T):
        with tempfile.TemporaryDirectory() as tmp:
            noise, out, traj = (os.path.join(tmp, f) for f in ("noise.npy", "x.npy", "t.npy"))
            np.save(noise, x_T.astype(np.float32))
            p = subprocess.run([BIN, "sample", "--model", model, "--noise", noise, "--steps", str(self.N), "--t-start",
                                str(self.T_START), "--out", out, "--trajectory", traj, *extra],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            return np.load(traj), p.stderr

    def timesteps(self):
        return [round(self.T_START * (self.N - 1 - i) / (self.N - 1)) for i in range(self.N)]

    def test_analytic_mixture_with_prediction_type_v(self):
        model = os.path.join(ROOT, "assets", "models", "gaussians8-exact.safetensors")
        tensors, _ = read_safetensors(model)
        abar = np.cumprod(1 - tensors["betas"])
        x_T = np.random.default_rng(7).standard_normal((64, 2))
        frames, err = self.run_cli(model, ["--prediction-type", "v_prediction"], x_T)
        self.assertIn("v_prediction", err)  # the note: the file names no prediction_type
        want = ddim_v(x_T.astype(np.float32).astype(np.float64), self.timesteps(), abar,
                      lambda x, t: mixture_v(tensors, x, abar[t]))
        self.assertEqual(frames.shape, want.shape)
        for k in range(1, len(want)):
            self.assertLess(rel_frobenius(frames[k], want[k]), 1e-5, f"frame {k}")

    def test_network_whose_file_says_v_prediction(self):
        model = os.path.join(ROOT, "tests", "data", "reported", "prediction-type", "v_prediction.safetensors")
        tensors, meta = read_safetensors(model)
        T = int(meta.get("T", 1000))
        abar = np.cumprod(1 - np.linspace(1e-4, 0.02, T))  # SEMANTICS §1's default linear schedule
        x_T = np.random.default_rng(8).standard_normal((64, 2))
        frames, _ = self.run_cli(model, [], x_T)
        want = ddim_v(x_T.astype(np.float32).astype(np.float64), self.timesteps(), abar,
                      lambda x, t: network_v(tensors, x, t, T))
        self.assertEqual(frames.shape, want.shape)
        for k in range(1, len(want)):
            self.assertLess(rel_frobenius(frames[k], want[k]), 1e-5, f"frame {k}")


if __name__ == "__main__":
    unittest.main()
