#!/usr/bin/env python3
"""test_grid_energy_numpy.py — `diffscope sample --grid` energy distances against an independent float64 numpy
computation (SEMANTICS §10 "Metrics"): every cell's energy_distance is the V-statistic 2 E|X-Y| - E|X-X'| - E|Y-Y'|
(all pairs, Euclidean) of its first m samples (read back from --out, shape (rows, cols, n, dim)) against half A of
the model's held-out data_samples (the first n_data // 2 rows, read from the .safetensors), and energy_floor the same
of half B's first m rows; m = min(n, n_data - n_data // 2, 1000).

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


def data_samples(path):
    """The data_samples tensor of a safetensors file as float64 (n_data, dim)."""
    with open(path, "rb") as f:
        raw = f.read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    t = header["data_samples"]
    a, b = t["data_offsets"]
    dtype = {"F32": np.float32, "F64": np.float64}[t["dtype"]]
    return np.frombuffer(raw[8 + n + a:8 + n + b], dtype).reshape(t["shape"]).astype(np.float64)


def mean_dist(x, y):
    return np.sqrt(((x[:, None, :] - y[None, :, :]) ** 2).sum(-1)).mean()


def energy(x, y):
    return 2 * mean_dist(x, y) - mean_dist(x, x) - mean_dist(y, y)


class GridEnergy(unittest.TestCase):
    def test_energy_and_floor(self):
        with tempfile.TemporaryDirectory() as d:
            out, js = os.path.join(d, "x.npy"), os.path.join(d, "m.json")
            n = 300
            subprocess.run([BIN, "sample", "--model", "moons", "--n", str(n), "--seed", "5", "--grid",
                            "rows=sampler:ddim,dpmpp-2m cols=steps:3,12", "--out", out, "--metrics-json", js],
                           check=True, capture_output=True)
            x = np.load(out).astype(np.float64)
            self.assertEqual(x.shape, (2, 2, n, 2))
            metrics = json.load(open(js))
        held = data_samples(os.path.join(ROOT, "assets/models/moons.safetensors"))
        half = held.shape[0] // 2
        m = min(n, held.shape[0] - half, 1000)
        a, b = held[:half], held[half:half + m]
        floor = energy(b, a)
        for c in metrics["cells"]:
            want = energy(x[c["row"], c["col"], :m], a)
            self.assertEqual(c["energy_n"], m)
            self.assertAlmostEqual(c["energy_distance"], want, delta=1e-9 + 1e-6 * abs(want))
            self.assertAlmostEqual(c["energy_floor"], floor, delta=1e-9 + 1e-6 * abs(floor))
        # 3 ddim steps sit further from the data than 12
        self.assertGreater(metrics["cells"][0]["energy_distance"], metrics["cells"][1]["energy_distance"])


if __name__ == "__main__":
    unittest.main()
