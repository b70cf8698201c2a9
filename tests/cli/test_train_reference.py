#!/usr/bin/env python3
"""test_train_reference.py — the model file `diffscope train` writes, read three ways: the network of SEMANTICS §2
re-implemented in float64 numpy from the file's tensors; diffscope's own loader (`denoise`, one ddpm-mean step of an
epsilon model: x' = c1 (x - c2 eps), SEMANTICS §4); and, where PyTorch is installed, tools/reference_module.py's
load_reference (its output at the same level, every objective). CI has no torch: that part skips.

Environment (tests/CMakeLists.txt): DIFFSCOPE_BIN the CLI, DIFFSCOPE_ROOT the repository.
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

ROOT = os.environ["DIFFSCOPE_ROOT"]
BIN = os.environ["DIFFSCOPE_BIN"]
sys.path.insert(0, os.path.join(ROOT, "tests", "cli"))
sys.path.insert(0, os.path.join(ROOT, "tools"))
from test_family_ddim_numpy import read_safetensors  # noqa: E402

try:
    import torch  # noqa: F401
    HAVE_TORCH = True
except ImportError:
    HAVE_TORCH = False

OBJECTIVES = ("epsilon", "sample", "v_prediction", "flow")


def silu(z):
    return z / (1 + np.exp(-z))


def net_output(t, x, time):
    """SEMANTICS §2: W3 SiLU(W2 SiLU(W1 [x, time] + b1) + b2) + b3 in float64."""
    u = np.concatenate([x, time[:, None]], axis=1)
    h = silu(u @ t["eps_net.0.weight"].T + t["eps_net.0.bias"])
    h = silu(h @ t["eps_net.2.weight"].T + t["eps_net.2.bias"])
    return h @ t["eps_net.4.weight"].T + t["eps_net.4.bias"]


class TrainReference(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.files = {}
        for o in OBJECTIVES:
            path = os.path.join(cls.tmp.name, o + ".safetensors")
            subprocess.run([BIN, "train", "--quiet", "--data", "moons", "--objective", o, "--hidden", "64",
                            "--batch", "64", "--steps", "20", "--out", path], check=True, capture_output=True)
            cls.files[o] = path
        rng = np.random.default_rng(0)
        cls.x = rng.standard_normal((32, 2))
        cls.t = rng.integers(0, 1000, 32)

    def test_diffscope_denoise_reads_the_network_of_the_file(self):
        t, meta = read_safetensors(self.files["epsilon"])
        self.assertEqual(meta["time_input"], "t/T")
        betas = t["betas"]  # float32 in the file, as the reference module's state_dict
        abar = np.cumprod(1 - betas)
        eps = net_output(t, self.x, self.t / 1000.0)
        want = np.sqrt(1 / (1 - betas[self.t]))[:, None] * (self.x - (betas / np.sqrt(1 - abar))[self.t][:, None] * eps)
        xp, tp, out = (os.path.join(self.tmp.name, n) for n in ("x.npy", "t.npy", "out.npy"))
        np.save(xp, self.x.astype(np.float32))
        np.save(tp, self.t.astype(np.int64))
        subprocess.run([BIN, "denoise", "--model", self.files["epsilon"], "--x", xp, "--t-start", tp, "--steps", "1",
                        "--out", out], check=True, capture_output=True)
        got = np.load(out).astype(np.float64)
        self.assertLess(np.linalg.norm(got - want) / np.linalg.norm(want), 1e-5)

    @unittest.skipUnless(HAVE_TORCH, "PyTorch is not installed")
    def test_reference_module_gives_the_same_output(self):
        import torch
        import reference_module
        for o in OBJECTIVES:
            t, meta = read_safetensors(self.files[o])
            model, _ = reference_module.load_reference(self.files[o])
            model = model.double()
            self.assertEqual(model.prediction_type, o)
            if o == "flow":
                level = np.linspace(0.01, 0.99, 32)
                time = level
            else:
                level = self.t
                time = self.t / 1000.0
            with torch.no_grad():
                got = model.output(torch.from_numpy(self.x), torch.from_numpy(level)).numpy()
            want = net_output(t, self.x, time)
            self.assertLess(np.abs(got - want).max(), 1e-12, o)


if __name__ == "__main__":
    unittest.main()
