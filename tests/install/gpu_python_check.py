#!/usr/bin/env python3
"""gpu_python_check.py — the Python module's CUDA path, once, on a machine with a GPU and torch (the H200):
zero-copy DLPack and __cuda_array_interface__ in and out, streams, and agreement with the CPU backend.
Skips (exit 0, says so) without a CUDA device or torch. Run: PYTHONPATH=<build>/python python3 this.py
Prints one line per check; exit 1 on the first failure.
"""
import sys

import numpy as np

import diffscope

try:
    import torch
except ImportError:
    print("SKIP: no torch")
    sys.exit(0)
if not (diffscope.cuda_available() and torch.cuda.is_available()):
    print("SKIP: no CUDA device (diffscope %s, torch %s)" % (diffscope.cuda_available(), torch.cuda.is_available()))
    sys.exit(0)


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        sys.exit(1)


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.linalg.norm(a - b) / np.linalg.norm(b)


m = diffscope.load("moons")
cpu = m.sample(4096, steps=50, seed=3)
gpu_host = m.sample(4096, steps=50, seed=3, backend="cuda")
check(rel(gpu_host, cpu) < 1e-4, f"sample cuda (numpy out) vs cpu: rel {rel(gpu_host, cpu):.2e}")

for sampler, spacing in [("dpmpp-2m", "karras"), ("heun", "trailing"), ("dpmpp-2m-sde", "default")]:
    kw = dict(sampler=sampler, spacing=spacing, steps=20, seed=4)
    c, g = m.sample(2048, **kw), m.sample(2048, backend="cuda", **kw)
    gc = m.sample(2048, backend="cuda", out="cuda", **kw).numpy()
    check(rel(g, c) < 1e-4 and np.array_equal(gc, g), f"{sampler} {spacing} cuda vs cpu: rel {rel(g, c):.2e}")

xa = m.sample(4096, steps=50, seed=3, backend="cuda", out="cuda")
check(isinstance(xa, diffscope.CudaArray) and xa.shape == (4096, 2), "sample out='cuda' gives a CudaArray (4096, 2)")
cai = xa.__cuda_array_interface__
t = torch.from_dlpack(xa)
check(t.is_cuda and t.data_ptr() == cai["data"][0], "torch.from_dlpack(CudaArray) shares the memory (zero copy)")
check(np.array_equal(t.cpu().numpy(), gpu_host), "CudaArray contents == the numpy-out run")
check(np.array_equal(xa.numpy(), gpu_host), "CudaArray.numpy() == the numpy-out run")

x0 = torch.randn(1000, 2, device="cuda")
want = m.denoise(x0.cpu().numpy(), 500, 16)
ptr = x0.data_ptr()
out = m.denoise(x0, 500, 16, backend="cuda")
check(out is x0 and x0.data_ptr() == ptr, "denoise(torch tensor) runs in place through DLPack")
check(rel(x0.cpu().numpy(), want) < 1e-4, f"denoise in place vs cpu: rel {rel(x0.cpu().numpy(), want):.2e}")


class CaiOnly:  # only __cuda_array_interface__ (no DLPack), as Numba's arrays
    def __init__(self, t):
        self.t = t
        self.__cuda_array_interface__ = t.__cuda_array_interface__


x1 = torch.randn(1000, 2, device="cuda")
want = m.denoise(x1.cpu().numpy(), 300, 8)
m.denoise(CaiOnly(x1), 300, 8, backend="cuda")
check(rel(x1.cpu().numpy(), want) < 1e-4, "denoise through __cuda_array_interface__ v3 in place")

s = torch.cuda.Stream()
with torch.cuda.stream(s):
    x2 = torch.randn(2000, 2, device="cuda")
    want = m.denoise(x2.cpu().numpy(), 999, 32)
    m.denoise(x2, 999, 32, backend="cuda", stream=s.cuda_stream)  # enqueued on s, returns at once
    y2 = x2.clone()  # ordered after on s
s.synchronize()
check(rel(y2.cpu().numpy(), want) < 1e-4, "denoise on a caller's stream (torch.cuda.Stream)")

w = torch.randn(64, 48, device="cuda")
try:
    diffscope.mlp3("/nonexistent.safetensors", w, backend="cuda")
    check(False, "mlp3 on a missing file raises")
except ValueError as e:
    check("nonexistent" in str(e), "mlp3 missing weights: ValueError")
try:
    m.denoise(torch.randn(10, 3, device="cuda"), 10, 2, backend="cuda")
    check(False, "denoise with the wrong width raises")
except ValueError as e:
    check("width 3" in str(e), "denoise CUDA x with the wrong width: ValueError")
try:
    m.denoise(torch.randn(10, 2, device="cuda", dtype=torch.float64), 10, 2, backend="cuda")
    check(False, "denoise float64 CUDA raises")
except ValueError as e:
    check("float32" in str(e), "denoise CUDA float64: ValueError")
print("all GPU checks passed")
