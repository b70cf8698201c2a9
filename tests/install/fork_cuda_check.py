#!/usr/bin/env python3
"""fork_cuda_check.py — fork() after the CUDA backend was used, once, on a machine with a GPU (the H200).

A CUDA context does not cross fork(): in a child of a process that used CUDA through diffscope, every CUDA call
must raise a clear RuntimeError at once (never hang), the CPU backend must work (bit for bit as in the parent), and
the child must exit normally (its Model objects, holding the parent's CUDA backend, are freed without calling CUDA).
Each child runs under alarm(60): a hang is killed and reported as a failure. Skips (exit 0, says so) without a
CUDA device. Run: PYTHONPATH=<build>/python timeout 600 python3 this.py
Prints one line per check; exit 1 when any check failed.
"""
import json
import multiprocessing
import os
import signal
import sys
import time

import numpy as np

import diffscope

failed = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what, flush=True)
    if not cond:
        failed.append(what)


def in_child(fn):
    """Runs fn() in a forked child; returns (result dict, seconds) or (None, why). fn returns a JSON-able dict;
    the child then leaves through sys.exit (a normal interpreter exit: destructors run)."""
    r, w = os.pipe()
    t0 = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        signal.alarm(60)  # the default action of SIGALRM ends a hung child
        try:
            out = fn()
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            out = {"exception": type(e).__name__ + ": " + str(e)}
        os.write(w, json.dumps(out).encode())
        os.close(w)
        sys.exit(0)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    dt = time.perf_counter() - t0
    if os.WIFSIGNALED(status):
        return None, "killed by signal %d after %.1f s (a hang: alarm)" % (os.WTERMSIG(status), dt)
    if os.WEXITSTATUS(status) != 0:
        return None, "exit status %d" % os.WEXITSTATUS(status)
    return json.loads(data.decode()), dt


def raises_runtime_error(call):
    try:
        call()
    except RuntimeError as e:
        return {"raised": True, "message": str(e)}
    except Exception as e:  # noqa: BLE001
        return {"raised": False, "message": "%s: %s" % (type(e).__name__, e)}
    return {"raised": False, "message": "no error"}


def spawn_worker(_):
    import diffscope as d  # a fresh process: CUDA works there
    return float(np.abs(d.load("moons").sample(256, steps=5, t_start=4, backend="cuda")).sum())


def main():
    if not diffscope.cuda_available():
        print("SKIP: no CUDA device")
        return 0
    m = diffscope.load("moons")
    cpu_parent = m.sample(2048, steps=10, t_start=9, seed=2)
    m.sample(2048, steps=10, t_start=9, seed=2, backend="cuda")  # the parent's CUDA backend and context
    cuda_array = m.sample(64, steps=5, t_start=4, backend="cuda", out="cuda")
    x = np.ones((64, 2), np.float32)

    cases = {
        "sample backend='cuda'": lambda: raises_runtime_error(lambda: m.sample(64, steps=5, t_start=4, backend="cuda")),
        "fresh load, sample backend='cuda'":
            lambda: raises_runtime_error(lambda: diffscope.load("moons").sample(64, steps=5, t_start=4, backend="cuda")),
        "denoise backend='cuda'": lambda: raises_runtime_error(lambda: m.denoise(x, 10, 3, backend="cuda")),
        "denoise of the parent's CUDA array":
            lambda: raises_runtime_error(lambda: m.denoise(cuda_array, 10, 3, backend="cuda")),
        "CudaArray.numpy()": lambda: raises_runtime_error(lambda: cuda_array.numpy()),
    }
    for name, fn in cases.items():
        res, dt = in_child(fn)
        if res is None:
            check(False, "child: %s: %s" % (name, dt))
            continue
        check(res.get("raised") and "fork" in res.get("message", ""),
              "child: %s raises RuntimeError naming fork in %.2f s: %s" % (name, dt, res.get("message", res)))

    res, dt = in_child(lambda: {"available": diffscope.cuda_available()})
    check(res is not None and res.get("available") is False, "child: cuda_available() is False (%s)" % (res,))

    def cpu_in_child():
        y = m.sample(2048, steps=10, t_start=9, seed=2)
        z = diffscope.load("moons").sample(2048, steps=10, t_start=9, seed=2)
        return {"same": bool(np.array_equal(y, cpu_parent) and np.array_equal(z, cpu_parent))}

    res, dt = in_child(cpu_in_child)
    check(res is not None and res.get("same") is True,
          "child: the CPU backend works, bit for bit as in the parent, in %s s (%s)" % (dt, res))

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        sums = pool.map(spawn_worker, [0])
    check(np.isfinite(sums[0]), "a 'spawn' worker uses CUDA")
    check(float(np.abs(m.sample(256, steps=5, t_start=4, backend="cuda")).sum()) > 0, "the parent still uses CUDA")

    print("FAILED: %d check(s)" % len(failed) if failed else "all checks passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
