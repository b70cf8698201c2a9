#!/usr/bin/env python3
"""python_example.py — a notebook-style tour of the diffscope Python module (README "Python").

Run it as a script (`python3 docs/python_example.py [out.png]`) or cell by cell (# %% markers: VS Code,
Jupyter's jupytext, Spyder). With python3-matplotlib it saves a figure (default python_example.png in the
working folder); without, it prints the numbers only.
"""
# %% Load a bundled model (or any .safetensors path)
import sys

import numpy as np

import diffscope

print("bundled:", diffscope.bundled_models())
model = diffscope.load("moons")
print(model, "CUDA available:", diffscope.cuda_available())

# %% Sample: DDIM with few steps vs DDPM with every step (SEMANTICS §3). Same seed, same start noise.
x_ddim = model.sample(2000, sampler="ddim", steps=20, seed=0)
x_ddpm = model.sample(2000, sampler="ddpm", seed=0)  # steps default to t_start + 1 = 1000
data = model.data_samples
print("ddim 20 steps:", x_ddim.shape, x_ddim.dtype, "mean", x_ddim.mean(0), "std", x_ddim.std(0))
print("ddpm 1000 steps: mean", x_ddpm.mean(0), "std", x_ddpm.std(0))
print("held-out data:   mean", data.mean(0), "std", data.std(0))

# %% A trajectory: every 5th step of a 50-step DDIM run, frames (11, n, dim)
x, traj = model.sample(500, steps=50, seed=1, trajectory=True, trajectory_stride=5)
print("trajectory:", traj.shape, "radius per frame:", np.round(np.linalg.norm(traj, axis=2).mean(1), 2))

# %% Start from data noised to t_start = 300 and denoise (SEMANTICS §3 "Start from data")
x_partial = model.sample(2000, t_start=300, steps=30, seed=2, from_data=True)

# %% denoise: the fused multi-step call with a t_start per row (SEMANTICS §4)
x0 = np.random.default_rng(0).standard_normal((6, 2)).astype(np.float32)
print("denoise 50 ddpm-mean steps from t = 999..949:\n", model.denoise(x0, np.arange(999, 993, -1), 50))

# %% Errors are exceptions with the CLI's messages
try:
    model.sample(10, t_start=5000)
except ValueError as e:
    print("ValueError:", e)

# %% Plot (python3-matplotlib)
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("python3-matplotlib is not installed: no figure")
    sys.exit(0)
out = sys.argv[1] if len(sys.argv) > 1 else "python_example.png"
fig, ax = plt.subplots(1, 4, figsize=(16, 4), sharex=True, sharey=True)
for a, (pts, title) in zip(ax, [(data, "held-out data"), (x_ddim, "ddim 20 steps; 50-step paths"),
                                (x_ddpm, "ddpm, 1000 steps"), (x_partial, "from data, t_start 300")]):
    a.scatter(pts[:, 0], pts[:, 1], s=1, alpha=0.5)
    a.set_title(title)
for k in range(0, 500, 25):  # a few trajectories over the ddim picture
    ax[1].plot(traj[:, k, 0], traj[:, k, 1], lw=0.6, color="tab:orange", alpha=0.7)
ax[0].set_xlim(-3, 3)
ax[0].set_ylim(-3, 3)
fig.tight_layout()
fig.savefig(out, dpi=100)
print("wrote", out)
