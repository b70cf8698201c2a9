#!/usr/bin/env python3
"""test_guidance_mixture_numpy.py — analytic Gaussian mixtures with classes (SEMANTICS §6, §12) through
`diffscope sample` on the CPU, against float64 numpy closed forms: the conditional eps (the class's components,
weights renormalised), the unconditional eps (every component) and the guided eps_u + w (eps_c - eps_u) at given
points and levels, in the epsilon and v_prediction families; the guided exact ODE (the grid's exact_ode_rms) against
ddim and heun with their observed orders; bad classes tensors refused.

Environment (tests/CMakeLists.txt): DIFFSCOPE_BIN the CLI.
"""
import json
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_guidance_numpy import linear_abar, write_safetensors  # noqa: E402

BIN = os.environ["DIFFSCOPE_BIN"]
MEANS = np.array([[-1.0, 0.2], [-0.5, 0.8], [0.6, -0.4], [1.1, 0.1], [0.0, -1.0]])
STDS = np.array([0.15, 0.2, 0.1, 0.25, 0.3])
WEIGHTS = np.array([1.0, 2.0, 1.5, 1.0, 0.5])
CLASSES = np.array([0.0, 0.0, 1.0, 1.0, 2.0])


def mixture_eps(x, abar, cls=None):
    """eps* = sqrt(1 - abar) sum_k g_k (x - sqrt(abar) mu_k) / v_k over the components of class cls (None: all)."""
    keep = np.ones(len(STDS), bool) if cls is None else CLASSES == cls
    mu, s, w = MEANS[keep], STDS[keep], WEIGHTS[keep] / WEIGHTS[keep].sum()
    v = abar * s ** 2 + 1 - abar
    r = x[:, None, :] - np.sqrt(abar) * mu[None]
    logg = np.log(w) - 0.5 * x.shape[1] * np.log(v) - (r ** 2).sum(-1) / (2 * v)
    g = np.exp(logg - logg.max(1, keepdims=True))
    g /= g.sum(1, keepdims=True)
    return np.sqrt(1 - abar) * (g[:, :, None] * r / v[None, :, None]).sum(1)


class MixtureGuidance(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.model = os.path.join(cls.tmp.name, "classes.safetensors")
        write_safetensors(cls.model, {"means": MEANS, "stds": STDS, "weights": WEIGHTS, "classes": CLASSES},
                          {"kind": "gaussian_mixture"})
        cls.x = np.random.default_rng(11).standard_normal((128, 2)).astype(np.float32)
        cls.noise = os.path.join(cls.tmp.name, "noise.npy")
        np.save(cls.noise, cls.x)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def one_step(self, t, *extra, model=None):
        """One ddim step from t to the clean level: out = (x - sqrt(1 - abar) eps) / sqrt(abar); returns that eps."""
        out = os.path.join(self.tmp.name, "x.npy")
        p = subprocess.run([BIN, "sample", "--model", model or self.model, "--noise", self.noise, "--steps", "1",
                            "--t-start", str(t), "--out", out, *extra], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        a = linear_abar()[t]
        return (self.x.astype(np.float64) - np.sqrt(a) * np.load(out).astype(np.float64)) / np.sqrt(1 - a)

    def test_conditional_unconditional_and_guided_eps(self):
        x = self.x.astype(np.float64)
        for t in (900, 400, 100):
            a = linear_abar()[t]
            cases = [([], mixture_eps(x, a)), (["--class", "1"], mixture_eps(x, a, 1)),
                     (["--class", "2"], mixture_eps(x, a, 2))]
            e_u, e_c = mixture_eps(x, a), mixture_eps(x, a, 0)
            cases.append((["--class", "0", "--guidance-scale", "3"], e_u + 3 * (e_c - e_u)))
            cases.append((["--class", "0", "--guidance-scale", "3", "--prediction-type", "v_prediction"],
                          e_u + 3 * (e_c - e_u)))
            for extra, want in cases:
                got = self.one_step(t, *extra)
                err = np.linalg.norm(got - want) / np.linalg.norm(want)
                self.assertLess(err, 1e-5 if t > 100 else 1e-4, (t, extra, err))

    def grid_exact_rms(self, sampler, steps):
        path = os.path.join(self.tmp.name, "m.json")
        p = subprocess.run([BIN, "sample", "--model", self.model, "--n", "256", "--seed", "5", "--sampler", sampler,
                            "--spacing", "karras", "--class", "1", "--guidance-scale", "2.5", "--grid",
                            "cols=steps:" + ",".join(map(str, steps)), "--out", os.path.join(self.tmp.name, "g.npy"),
                            "--metrics-json", path], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(path) as f:
            cells = json.load(f)["cells"]
        return [c["exact_ode_rms"] for c in cells]

    def test_guided_exact_ode_and_observed_orders(self):
        """The deterministic solvers converge to the guided exact ODE at their orders (ddim 1, heun 2)."""
        steps = [10, 20, 40, 80]
        for sampler, order in (("ddim", 1), ("heun", 2)):
            rms = self.grid_exact_rms(sampler, steps)
            observed = [np.log2(rms[i] / rms[i + 1]) for i in range(len(rms) - 1)]
            self.assertLess(rms[-1], 0.05, (sampler, rms))
            self.assertGreater(observed[-1], order - 0.35, (sampler, rms, observed))

    def test_bad_classes_are_refused(self):
        bad = os.path.join(self.tmp.name, "bad.safetensors")
        for tensors, needle in (({"classes": np.array([0.0, 0.0, 2.0, 2.0, 2.0])}, "no component of class 1"),
                                ({"classes": np.array([0.0, 0.5, 1.0, 1.0, 1.0])}, "element 1 is 0.5"),
                                ({"classes": np.array([0.0, 1.0])}, "'classes' has shape (2,), expected (5,)"),
                                ({"classes": CLASSES, "covs": np.zeros((5, 2, 2))}, "'covs'")):
            write_safetensors(bad, {"means": MEANS, "stds": STDS, "weights": WEIGHTS, **tensors},
                              {"kind": "gaussian_mixture"})
            p = subprocess.run([BIN, "sample", "--model", bad, "--n", "4", "--out", os.path.join(self.tmp.name, "b.npy")],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(needle, p.stderr)
        p = subprocess.run([BIN, "sample", "--model", self.model, "--n", "4", "--class", "3", "--out",
                            os.path.join(self.tmp.name, "b.npy")], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--class = 3 is out of range; valid: [0, 2]", p.stderr)


if __name__ == "__main__":
    unittest.main()
