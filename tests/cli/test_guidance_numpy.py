#!/usr/bin/env python3
"""test_guidance_numpy.py — class-conditional networks and classifier-free guidance (SEMANTICS §2, §12) through
`diffscope sample` on the CPU, against float64 numpy: a class-conditional network written here in the reference
module's state_dict layout (eps_net.{0,2,4}.{weight,bias}, class_emb.weight (C + 1, hidden), row C the null class)
loads as is and its ddim run equals §2's network with the class's row added to the first layer's pre-activation;
the guided run equals ddim on eps_u + w (eps_c - eps_u), with the guidance interval (w = 1 outside [lo, hi] in VE
sigma) and guidance rescale (Lin et al.: phi eps_w std(eps_c) / std(eps_w) + (1 - phi) eps_w); w = 0 equals the
unconditional run and w = 1 the conditional run bit for bit for every solver; every bad flag and bad tensor is
refused with exit 2 naming it. The start state is given (--noise); ddim with eta 0 draws no random numbers.

Environment (tests/CMakeLists.txt): DIFFSCOPE_BIN the CLI.
"""
import json
import os
import subprocess
import tempfile
import unittest

import numpy as np

BIN = os.environ["DIFFSCOPE_BIN"]
DIM, HIDDEN, C, T = 2, 16, 3, 1000


def write_safetensors(path, tensors, metadata=None):
    """A safetensors file of float32 tensors (numpy arrays) and optional __metadata__ strings."""
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def class_network(seed=3):
    """Random weights of a class-conditional network in the reference module's layout (float32 values)."""
    rng = np.random.default_rng(seed)
    shapes = {"eps_net.0.weight": (HIDDEN, DIM + 1), "eps_net.0.bias": (HIDDEN,), "eps_net.2.weight": (HIDDEN, HIDDEN),
              "eps_net.2.bias": (HIDDEN,), "eps_net.4.weight": (DIM, HIDDEN), "eps_net.4.bias": (DIM,),
              "class_emb.weight": (C + 1, HIDDEN)}
    return {k: (rng.standard_normal(s) * 0.7).astype(np.float32) for k, s in shapes.items()}


def silu(z):
    with np.errstate(over="ignore"):  # exp(-z) = inf for z << 0 gives the limit 0 exactly
        return z / (1 + np.exp(-z))


def network_eps(w, x, t, c):
    """SEMANTICS §2 in float64: SiLU MLP on u = [x, t / T], class_emb[c] added before the first SiLU (c = C: null)."""
    g = {k: v.astype(np.float64) for k, v in w.items()}
    u = np.concatenate([x, np.full((x.shape[0], 1), t / T)], 1)
    h1 = silu(u @ g["eps_net.0.weight"].T + g["eps_net.0.bias"] + g["class_emb.weight"][c])
    h2 = silu(h1 @ g["eps_net.2.weight"].T + g["eps_net.2.bias"])
    return h2 @ g["eps_net.4.weight"].T + g["eps_net.4.bias"]


def guided_eps(w, x, t, c, scale, abar_t, interval=None, phi=0.0):
    """SEMANTICS §12: eps_u + w (eps_c - eps_u), w = 1 outside the interval, then the rescale."""
    S = np.sqrt((1 - abar_t) / abar_t)
    if interval and not interval[0] <= S <= interval[1]:
        scale = 1.0
    e_c, e_u = network_eps(w, x, t, c), network_eps(w, x, t, C)
    e = e_u + scale * (e_c - e_u)
    if phi and scale != 1.0:
        r = e * (e_c.std(1, keepdims=True) / e.std(1, keepdims=True))
        e = phi * r + (1 - phi) * e
    return e


def linear_abar():
    return np.cumprod(1 - np.linspace(1e-4, 0.02, T))


def ddim(x, timesteps, abar, eps_of):
    """DDIM with eta 0 on the VP state, the last step to abar = 1 (SEMANTICS §3); every frame 0 .. N."""
    frames = [x]
    for i, t in enumerate(timesteps):
        a, a_prev = abar[t], abar[timesteps[i + 1]] if i + 1 < len(timesteps) else 1.0
        e = eps_of(x, t, a)
        x0 = (x - np.sqrt(1 - a) * e) / np.sqrt(a)
        x = np.sqrt(a_prev) * x0 + np.sqrt(1 - a_prev) * e
        frames.append(x)
    return np.stack(frames)


def heun(x, timesteps, abar, eps_of):
    """Karras et al. 2022 Algorithm 1 in the VE coordinate x / sqrt(abar), sigma = sqrt((1 - abar) / abar), the last
    step (to sigma 0) Euler only (SEMANTICS §3 heun); the guided eps read at each stage's own level."""
    frames = [x]
    for i, t in enumerate(timesteps):
        a = abar[t]
        S, xv = np.sqrt((1 - a) / a), x / np.sqrt(a)
        e1 = eps_of(x, t, a)
        if i + 1 == len(timesteps):
            x = xv - S * e1
        else:
            t2 = timesteps[i + 1]
            a2 = abar[t2]
            S2 = np.sqrt((1 - a2) / a2)
            y = (xv + (S2 - S) * e1) * np.sqrt(a2)
            x = (xv + (S2 - S) * (e1 + eps_of(y, t2, a2)) / 2) * np.sqrt(a2)
        frames.append(x)
    return np.stack(frames)


def rel_frobenius(a, b):
    return np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(b)


class Guidance(unittest.TestCase):
    N, T_START = 10, 999

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.weights = class_network()
        cls.model = os.path.join(cls.tmp.name, "classes.safetensors")
        write_safetensors(cls.model, cls.weights)
        cls.x_T = np.random.default_rng(7).standard_normal((64, DIM)).astype(np.float32)
        cls.noise = os.path.join(cls.tmp.name, "noise.npy")
        np.save(cls.noise, cls.x_T)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_cli(self, *extra, model=None, ok=True):
        out, traj = (os.path.join(self.tmp.name, f) for f in ("x.npy", "t.npy"))
        p = subprocess.run([BIN, "sample", "--model", model or self.model, "--noise", self.noise, "--steps", str(self.N),
                            "--t-start", str(self.T_START), "--out", out, "--trajectory", traj, *extra],
                           capture_output=True, text=True)
        if not ok:
            return p
        self.assertEqual(p.returncode, 0, p.stderr)
        return np.load(traj)

    def timesteps(self):
        return [round(self.T_START * (self.N - 1 - i) / (self.N - 1)) for i in range(self.N)]

    def check_against(self, frames, eps_of, scale=1.0):
        """Every frame within float32 rounding: 1e-5 relative (the goldens'), times |w| for a guided run (o_u + w
        (o_c - o_u) scales the rounding of both outputs by w)."""
        want = ddim(self.x_T.astype(np.float64), self.timesteps(), linear_abar(), eps_of)
        self.assertEqual(frames.shape, want.shape)
        for k in range(1, len(want)):
            self.assertLess(rel_frobenius(frames[k], want[k]), 1e-5 * max(1.0, abs(scale)), f"frame {k}")

    def test_class_network_loads_and_adds_the_class_row(self):
        w = self.weights
        for c in (0, 2):
            self.check_against(self.run_cli("--class", str(c)), lambda x, t, a: network_eps(w, x, t, c))
        self.check_against(self.run_cli(), lambda x, t, a: network_eps(w, x, t, C))  # no class: the null class

    def test_guided_ddim(self):
        w = self.weights
        frames = self.run_cli("--class", "1", "--guidance-scale", "3.5")
        self.check_against(frames, lambda x, t, a: guided_eps(w, x, t, 1, 3.5, a), scale=3.5)

    def test_guided_heun_guides_both_stages(self):
        """heun evaluates the guided eps at its Euler point too (with the class alone there the last frames are off
        by 100%; float32 rounding here is ~4e-6)."""
        w = self.weights
        frames = self.run_cli("--sampler", "heun", "--class", "1", "--guidance-scale", "4")
        want = heun(self.x_T.astype(np.float64), self.timesteps(), linear_abar(),
                    lambda x, t, a: guided_eps(w, x, t, 1, 4.0, a))
        self.assertEqual(frames.shape, want.shape)
        for k in range(1, len(want)):
            self.assertLess(rel_frobenius(frames[k], want[k]), 4e-5, f"frame {k}")

    def test_guidance_interval(self):
        w, iv = self.weights, (0.5, 4.0)  # the VE sigmas of the run span ~0.01 .. 157: some steps inside
        frames = self.run_cli("--class", "0", "--guidance-scale", "4", "--guidance-interval", "0.5,4")
        self.check_against(frames, lambda x, t, a: guided_eps(w, x, t, 0, 4.0, a, interval=iv), scale=4.0)

    def test_guidance_rescale(self):
        """One step to the clean level from t (out = x0 = (x - sqrt(1 - abar) eps) / sqrt(abar), so the eps the run
        used is (x - sqrt(abar) out) / sqrt(1 - abar)) at several t, per row. std(o_w) over dim = 2 coordinates is |o_0 - o_1| / 2: rows where it is below 5% of the output's size
        are ill-conditioned in float32 (the ratio amplifies the rounding) and left out."""
        w, abar, x = self.weights, linear_abar(), self.x_T.astype(np.float64)
        for t in (999, 600, 200, 20):
            out = os.path.join(self.tmp.name, "x.npy")
            p = subprocess.run([BIN, "sample", "--model", self.model, "--noise", self.noise, "--steps", "1", "--t-start",
                                str(t), "--out", out, "--class", "2", "--guidance-scale", "5", "--guidance-rescale", "0.7"],
                               capture_output=True, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            e_w = guided_eps(w, x, t, 2, 5.0, abar[t])
            want = guided_eps(w, x, t, 2, 5.0, abar[t], phi=0.7)
            good = e_w.std(1) > 0.05 * np.sqrt((e_w ** 2).mean(1))
            self.assertGreater(good.sum(), 32, t)
            got = (x - np.sqrt(abar[t]) * np.load(out).astype(np.float64)) / np.sqrt(1 - abar[t])  # the eps it used
            rel = np.linalg.norm(got - want, axis=1) / np.linalg.norm(want, axis=1)
            self.assertLess(rel[good].max(), 1e-4, t)
            self.assertGreater(np.abs(e_w - want)[good].max(), 1e-2, t)  # the rescale changed the result

    def test_scale_0_and_1_equal_one_model_bit_for_bit(self):
        for sampler in ("ddim", "heun", "dpmpp-2m", "euler-ancestral"):
            uncond = self.run_cli("--sampler", sampler)
            cond = self.run_cli("--sampler", sampler, "--class", "1")
            self.assertFalse(np.array_equal(uncond, cond), sampler)
            np.testing.assert_array_equal(self.run_cli("--sampler", sampler, "--class", "1", "--guidance-scale", "0"),
                                          uncond, sampler)
            np.testing.assert_array_equal(self.run_cli("--sampler", sampler, "--class", "1", "--guidance-scale", "1"),
                                          cond, sampler)

    def test_bad_flags_are_refused(self):
        plain = os.path.join(self.tmp.name, "plain.safetensors")
        write_safetensors(plain, {k: v for k, v in self.weights.items() if k != "class_emb.weight"})
        cases = [
            (["--class", "3"], "--class = 3", None),
            (["--class", "-2"], "--class = -2", None),
            (["--class", "0"], "--class = 0", plain),
            (["--guidance-scale", "2"], "--guidance-scale = 2", None),
            (["--class", "0", "--guidance-scale", "101"], "--guidance-scale = 101", None),
            (["--class", "0", "--guidance-scale", "nan"], "--guidance-scale", None),
            (["--class", "0", "--guidance-scale", "2", "--guidance-interval", "4,1"], "--guidance-interval = 4,1", None),
            (["--class", "0", "--guidance-scale", "2", "--guidance-interval", "1"], "--guidance-interval = '1'", None),
            (["--class", "0", "--guidance-scale", "2", "--guidance-interval", "-1,2"], "--guidance-interval = -1,2", None),
            (["--class", "0", "--guidance-interval", "1,2"], "--guidance-interval = 1,2", None),
            (["--class", "0", "--guidance-scale", "2", "--guidance-rescale", "1.5"], "--guidance-rescale = 1.5", None),
            (["--class", "0", "--guidance-rescale", "0.5"], "--guidance-rescale = 0.5", None),
            (["--class", "0", "--guidance-scale", "2", "--guide-model", plain], "--guide-model", None),
        ]
        for args, needle, model in cases:
            p = self.run_cli(*args, model=model, ok=False)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(needle, p.stderr, args)
            self.assertEqual(p.stderr.count("\n"), 1, (args, p.stderr))

    def test_grid_guidance_scale_axis(self):
        """Each cell of a guidance_scale grid equals `sample` with its w bit for bit (SEMANTICS §10), and counts its
        network evaluations (SEMANTICS §12)."""
        d, scales = self.tmp.name, ("0", "1", "3")
        common = ["--model", self.model, "--n", "64", "--steps", "6", "--seed", "4", "--class", "1"]
        p = subprocess.run([BIN, "sample", *common, "--grid", "cols=guidance_scale:" + ",".join(scales), "--out",
                            os.path.join(d, "cells.npy"), "--metrics-json", os.path.join(d, "m.json")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(d, "m.json")) as f:  # w = 0 and 1 evaluate one network per step, w = 3 two
            self.assertEqual([c["evaluations"] for c in json.load(f)["cells"]], [6, 6, 12])
        cells = np.load(os.path.join(d, "cells.npy"))
        self.assertEqual(cells.shape, (1, 3, 64, DIM))
        for i, w in enumerate(scales):
            out = os.path.join(d, "one.npy")
            p = subprocess.run([BIN, "sample", *common, "--guidance-scale", w, "--out", out], capture_output=True,
                               text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            np.testing.assert_array_equal(cells[0, i], np.load(out), w)

    def test_cuda_backend_refuses_classes(self):
        """The kernels do not add the class's row yet: refused before any work, never run without it."""
        for args in (["--class", "1"], []):
            p = self.run_cli("--backend", "cuda", *args, ok=False)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("--backend cuda does not run class-conditional models", p.stderr)
        p = subprocess.run([BIN, "denoise", "--model", self.model, "--x", self.noise, "--t-start", "5", "--steps", "2",
                            "--backend", "cuda", "--out", os.path.join(self.tmp.name, "d.npy")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("--backend cuda does not run class-conditional models", p.stderr)

    def test_sidecar_records_and_restores_guidance(self):
        if "--png" not in subprocess.run([BIN, "sample", "--help"], capture_output=True, text=True).stdout:
            self.skipTest("a build without pictures writes no sidecar")
        d = self.tmp.name
        args = ["--class", "1", "--guidance-scale", "2.5", "--guidance-interval", "0.1,inf", "--guidance-rescale", "0.25"]
        first = self.run_cli(*args, "--png", os.path.join(d, "g.png"), "--size", "64x64")
        with open(os.path.join(d, "g.json")) as f:
            j = json.load(f)
        self.assertEqual((j["class_label"], j["guidance_scale"], j["guidance_interval"], j["guidance_rescale"]),
                         (1, 2.5, [0.1, "inf"], 0.25))
        out = os.path.join(d, "again.npy")
        p = subprocess.run([BIN, "sample", "--config", os.path.join(d, "g.json"), "--out", out], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        np.testing.assert_array_equal(np.load(out), first[-1])

    def test_bad_class_tensor_is_refused(self):
        bad = os.path.join(self.tmp.name, "bad.safetensors")
        for emb, needle in ((np.zeros((1, HIDDEN)), "(1, 16)"), (np.zeros((3, HIDDEN + 1)), "(3, 17)"),
                            (np.full((3, HIDDEN), np.inf), "is inf")):
            write_safetensors(bad, {**self.weights, "class_emb.weight": emb})
            p = self.run_cli(model=bad, ok=False)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn("class_emb.weight", p.stderr)
            self.assertIn(needle, p.stderr)


if __name__ == "__main__":
    unittest.main()
