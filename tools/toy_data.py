"""toy_data.py — the training data of the bundled models (numpy; scikit-learn for the digits).

Used by tools/train_denoiser.py (training pool and held-out data_samples) and tools/quality_table.py (fresh
draws for the data-vs-data reference). The 2D sets are drawn from their distributions; each is normalised as
x = (raw - data_offset) * data_scale with constants from a 2,000,000-point pool (mean 0, mean per-coordinate
variance 1). digits8x8: scikit-learn's load_digits (UCI ML hand-written digits, Alpaydin & Kaynak 1998,
CC BY 4.0), pixels 0..16 -> (p - 8) / 8, 360 images held out by a fixed permutation (seed 0).
"""
import math

import numpy as np

DATASETS_2D = ("moons", "swissroll", "gaussians8", "checkerboard", "rings")
POOL_2D = 2_000_000
HELD_OUT_2D = 2048
DIGITS_HELD_OUT = 360


# ------------------------------------------------------------------ data

def raw_2d(name, n, rng):
    """n raw points (float64) of a 2D toy distribution."""
    if name == "moons":
        t = rng.uniform(0, math.pi, n)
        lower = rng.integers(0, 2, n).astype(bool)
        x = np.where(lower, 1 - np.cos(t), np.cos(t))
        y = np.where(lower, 0.5 - np.sin(t), np.sin(t))
        return np.stack([x, y], 1) + rng.normal(0, 0.05, (n, 2))
    if name == "swissroll":
        t = 1.5 * math.pi * (1 + 2 * rng.uniform(0, 1, n))
        return np.stack([t * np.cos(t), t * np.sin(t)], 1) + rng.normal(0, 0.25, (n, 2))
    if name == "gaussians8":
        k = rng.integers(0, 8, n)
        ang = k * (math.pi / 4)
        return 2.0 * np.stack([np.cos(ang), np.sin(ang)], 1) + rng.normal(0, 0.1, (n, 2))
    if name == "checkerboard":  # 8 unit squares of a 4x4 board (FFJORD's checkerboard)
        x1 = rng.uniform(0, 1, n) * 4 - 2
        x2 = rng.uniform(0, 1, n) - rng.integers(0, 2, n) * 2
        x2 = x2 + np.floor(x1) % 2
        return np.stack([x1, x2], 1) * 2
    if name == "rings":  # 4 concentric circles of radius 1..4, points in proportion to the circumference
        r = rng.choice(np.array([1.0, 2.0, 3.0, 4.0]), size=n, p=np.array([1, 2, 3, 4]) / 10)
        a = rng.uniform(0, 2 * math.pi, n)
        return np.stack([r * np.cos(a), r * np.sin(a)], 1) + rng.normal(0, 0.08, (n, 2))
    raise ValueError("unknown data set %r" % name)


def load_dataset(name, seed):
    """Returns dict: train (P, dim) float32, held_out (N, dim) float32, meta (strings)."""
    if name in DATASETS_2D:
        idx = DATASETS_2D.index(name)
        train = raw_2d(name, POOL_2D, np.random.default_rng([seed, idx, 1]))
        held = raw_2d(name, HELD_OUT_2D, np.random.default_rng([seed, idx, 2]))
        offset = train.mean(0)
        scale = 1.0 / math.sqrt(train.var(0).mean())
        offset = np.round(offset, 4)
        scale = float("%.4g" % scale)
        tr = ((train - offset) * scale).astype(np.float32)
        ho = ((held - offset) * scale).astype(np.float32)
        meta = {"data_offset": ",".join("%g" % v for v in offset), "data_scale": "%g" % scale,
                "data_transform": "x = (raw - data_offset) * data_scale",
                "data_samples": "%d held-out points drawn from a separate random stream" % HELD_OUT_2D}
        return {"train": tr, "held_out": ho, "meta": meta}
    if name == "digits8x8":
        from sklearn.datasets import load_digits
        d = load_digits()
        x = (d.data.astype(np.float64) - 8.0) / 8.0
        perm = np.random.default_rng(0).permutation(len(x))
        held, train = x[perm[:DIGITS_HELD_OUT]], x[perm[DIGITS_HELD_OUT:]]
        meta = {"data_offset": "8", "data_scale": "0.125", "data_transform": "x = (pixel - 8) / 8, pixels 0..16",
                "image_shape": "8x8",
                "data_samples": "%d held-out images (20%%, fixed permutation seed 0), never trained on" % len(held),
                "data_source": "scikit-learn load_digits: UCI ML hand-written digits (optical recognition), "
                               "E. Alpaydin, C. Kaynak 1998, CC BY 4.0",
                "train_images": str(len(train))}
        return {"train": train.astype(np.float32), "held_out": held.astype(np.float32), "meta": meta}
    raise ValueError("unknown data set %r" % name)
