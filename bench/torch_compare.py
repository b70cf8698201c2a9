#!/usr/bin/env python3
"""torch_compare.py — the reference module (tools/reference_module.py, SEMANTICS.md) in PyTorch against our
`diffscope bench --json`, same weights, same shapes, same precision, in one run on the GPU machine.

PyTorch modes per workload and precision: eager (CUDA events around one call), a CUDA graph of the eager call
(replays timed), and with --compile torch.compile(mode="max-autotune-no-cudagraphs") of ONE denoise step (issue 14)
called S times from Python ("compile") and the same S calls replayed in one CUDA graph ("compile + graph"); the MLP
is compiled whole. Inductor's cache (FX graphs and autotuning results) lives in bench/.inductor_cache (git-ignored;
--cache-dir), so a second call on a machine that has the folder skips the autotuning; --warm-cache only compiles
(no timing, not ours), to fill that folder in one call before a call that times everything.
Precision as PERFORMANCE.md: fp32 = TF32 off; tf32 = torch.backends.cuda.matmul.allow_tf32; bf16 / fp16 = autocast
to torch.bfloat16 / torch.float16 (--precisions picks some, default all four).
Weights: written here with torch.manual_seed and passed to our CLI as .safetensors (--model64/--model2/--mlp3).
Inputs: standard normal on both sides (ours: Philox, here: torch.randn) — the same distribution, not the same
numbers; each side reports its own error against float64 on its own input.

Training rows (--train, instead of the rows above): one training step of the moons network (hidden 256, dim 2) at
batch 4,096 and 65,536, fp32 and bf16 autocast (fp32 master weights): the batch drawn on the GPU (data rows, t, noise),
forward, the MSE, backward, torch.optim.Adam(fused=True, capturable=True), the EMA (torch._foreach_lerp_), in
eager, a CUDA graph of the step, torch.compile of the loss (forward + backward; Adam eager) and that step in a CUDA
graph. The learning rate is a constant tensor inside the step (the schedule's one scalar is not timed). Ours: the
steps/s of `diffscope train --backend cuda` at two step counts, their difference (start-up and the first, eager,
step cancel): microseconds per step.

Usage (repository root, H200): python3 bench/torch_compare.py --diffscope .gpu/bin-k/diffscope [--out DIR] [--compile]
       [--train]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _cache_dir_from_argv():
    for i, a in enumerate(sys.argv):
        if a == "--cache-dir" and i + 1 < len(sys.argv):
            return sys.argv[i + 1]
        if a.startswith("--cache-dir="):
            return a.split("=", 1)[1]
    return os.path.join(ROOT, "bench", ".inductor_cache")


# Before torch is imported: inductor reads its cache location from the environment.
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", _cache_dir_from_argv())
os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(os.environ["TORCHINDUCTOR_CACHE_DIR"], "triton"))

import torch  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tools"))
from reference_module import Mlp3, ReferenceDenoiser  # noqa: E402
import safetensors_io  # noqa: E402

PRECISIONS = ["fp32", "tf32", "bf16", "fp16"]  # main() narrows it to --precisions


def set_precision(p):
    torch.backends.cuda.matmul.allow_tf32 = p == "tf32"
    torch.backends.cudnn.allow_tf32 = p == "tf32"


def ctx(p):
    if p in ("bf16", "fp16"):
        return torch.autocast("cuda", dtype=torch.bfloat16 if p == "bf16" else torch.float16)
    return torch.autocast("cuda", enabled=False)


def events_time(fn, warm, reps):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) * 1e3)
    out.sort()
    return out[len(out) // 2]


def warm_clocks(seconds=0.3):
    """Busy GPU work before a latency measurement, so the clocks have left their idle state (as our bench does)."""
    a = torch.randn(4096, 4096, device="cuda")
    torch.cuda.synchronize()
    t0 = time.time()
    while time.time() - t0 < seconds:
        for _ in range(10):
            a = torch.tanh(a @ a)
        torch.cuda.synchronize()


def graph_time(fn, reps, calls=1):
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    return events_time(g.replay, 3, reps) / calls


def rel_err(a, ref):
    a = a.double()
    return float(torch.linalg.norm(a - ref) / torch.linalg.norm(ref))


class OneStep(torch.nn.Module):
    """One ddpm-mean step of ReferenceDenoiser.forward (the loop body, SEMANTICS §4), t (B,) int64."""

    def __init__(self, model):
        super().__init__()
        self.m = model

    def forward(self, x, t):
        active = (t >= 0).unsqueeze(1)
        tc = t.clamp(min=0)
        eps = self.m.eps(x, tc)
        c1 = self.m.sqrt_recip_alphas[tc].unsqueeze(1)
        c2 = self.m.coef_eps[tc].unsqueeze(1)
        return torch.where(active, c1 * (x - c2 * eps), x)


def allow_recompiles(n=64):
    """One step function is compiled per shape and precision (static shapes): more than dynamo's default limit of
    8 variants per code object, past which it would silently run eager."""
    import torch._dynamo
    for name in ("recompile_limit", "cache_size_limit"):
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, n)


def compiled_steps(model, x, t_start, steps):
    """S calls of the max-autotune-compiled step, each with its own timestep tensor (so a CUDA graph of the S calls
    replays them as they are). Returns a callable that runs the S steps from x."""
    cs = torch.compile(OneStep(model), mode="max-autotune-no-cudagraphs", dynamic=False)
    ts = [t_start - k for k in range(steps)]

    def run():
        y = x
        for k in range(steps):
            y = cs(y, ts[k])
        return y
    return run


def warm(cfn, name, p):
    """--warm-cache: compile (autotuning included) and run once, filling inductor's cache; nothing is timed."""
    t0 = time.time()
    cfn()
    torch.cuda.synchronize()
    print("   warm %s %s: %.1f s" % (name, p, time.time() - t0), flush=True)


def bench_denoiser(model, B, steps, args, rows):
    name = "denoise B=%d dim=%d H=%d S=%d" % (B, model.dim, model.hidden, steps)
    print("torch:", name, flush=True)
    model.steps = steps
    g = torch.Generator(device="cuda").manual_seed(7)
    x = torch.randn(B, model.dim, device="cuda", generator=g)
    t = torch.full((B,), 999, dtype=torch.int64, device="cuda")
    n_chk = min(B, 64 if steps >= 1000 else 256)
    ref_model = ReferenceDenoiser(model.dim, model.hidden, steps=steps).cuda().double()
    ref_model.load_state_dict(model.state_dict())
    ref_model.recompute_schedule()
    with torch.no_grad():
        ref = ref_model(x[:n_chk].double(), t[:n_chk])
    latency = B <= 64
    reps = 3 if steps >= 1000 else 50
    for p in PRECISIONS:
        set_precision(p)
        with torch.no_grad(), ctx(p):
            if args.warm_cache:
                warm(compiled_steps(model, x, t, steps), name, p)
                continue
            fn = lambda: model(x, t)  # noqa: E731
            row = {"workload": name, "precision": p}
            if latency:
                warm_clocks()
            row["eager_us"] = events_time(fn, 2, reps)
            if latency:
                warm_clocks()
            row["graph_us"] = graph_time(fn, reps, calls=20 if latency else 1)
            row["rel_err"] = rel_err(model(x[:n_chk], t[:n_chk]).float(), ref)
            if args.compile:
                t0 = time.time()
                cfn = compiled_steps(model, x, t, steps)
                cfn()  # compiles (or loads from the cache) outside the timing
                row["compile_s"] = round(time.time() - t0, 1)
                row["compile_us"] = events_time(cfn, 2, reps)
                row["compile_graph_us"] = graph_time(cfn, reps, calls=20 if latency else 1)
                row["compile_rel_err"] = rel_err(cfn()[:n_chk].float(), ref)
        rows.append(row)
        print("  ", row, flush=True)


def bench_mlp3(model, B, args, rows):
    name = "mlp3 B=%d 48-64-40-24" % B
    print("torch:", name, flush=True)
    g = torch.Generator(device="cuda").manual_seed(8)
    x = torch.randn(B, 48, device="cuda", generator=g)
    ref_model = Mlp3(48, 64, 40, 24).cuda().double()
    ref_model.load_state_dict(model.state_dict())
    n_chk = min(B, 4096)
    with torch.no_grad():
        ref = ref_model(x[:n_chk].double())
    latency = B <= 1024
    for p in PRECISIONS:
        set_precision(p)
        with torch.no_grad(), ctx(p):
            if args.warm_cache:
                cm = torch.compile(model, mode="max-autotune-no-cudagraphs", dynamic=False)
                warm(lambda: cm(x), name, p)  # noqa: B023
                continue
            fn = lambda: model(x)  # noqa: E731
            row = {"workload": name, "precision": p}
            if latency:
                warm_clocks()
            row["eager_us"] = events_time(fn, 5, 50 if latency else 30)
            if latency:
                warm_clocks()
            row["graph_us"] = graph_time(fn, 50 if latency else 30, calls=100 if latency else 1)
            row["rel_err"] = rel_err(model(x[:n_chk]).float(), ref)
            if args.compile:
                cm = torch.compile(model, mode="max-autotune-no-cudagraphs", dynamic=False)
                cfn = lambda: cm(x)  # noqa: E731
                row["compile_us"] = events_time(cfn, 3, 30)
                row["compile_graph_us"] = graph_time(cfn, 30, calls=100 if latency else 1)
        rows.append(row)
        print("  ", row, flush=True)


TRAIN_BATCHES = (4096, 65536)


def train_step(B, p, data, sqrt_ab, sqrt_1mab, loss_fn, params, opt, ema):
    """One training step (the batch, loss, backward, Adam, EMA) as a callable without host synchronisation."""
    def step():
        x0 = data[torch.randint(0, data.shape[0], (B,), device="cuda")]
        t = torch.randint(0, 1000, (B,), device="cuda")
        eps = torch.randn(B, data.shape[1], device="cuda")
        u = torch.cat([sqrt_ab[t, None] * x0 + sqrt_1mab[t, None] * eps, (t.float() / 1000)[:, None]], 1)
        with ctx(p):
            loss = loss_fn(u, eps)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=False)  # the gradients stay where a CUDA graph wrote them
        with torch.no_grad():
            torch._foreach_lerp_(ema, params, 1 - 0.9995)
    return step


def bench_train(B, args, rows):
    """Training-step rows of one batch size (--train), every precision of fp32 / bf16 asked for."""
    name = "train moons H=256 B=%d" % B
    print("torch:", name, flush=True)
    g = torch.Generator(device="cuda").manual_seed(9)
    data = torch.randn(2048, 2, device="cuda", generator=g)  # the cost does not depend on the values
    betas = torch.linspace(1e-4, 0.02, 1000, dtype=torch.float64)
    abar = torch.cumprod(1 - betas, 0)
    sqrt_ab, sqrt_1mab = abar.sqrt().float().cuda(), (1 - abar).sqrt().float().cuda()
    for p in [q for q in PRECISIONS if q in ("fp32", "bf16")]:
        set_precision(p)
        row = {"workload": name, "precision": p}
        for mode in ("eager", "graph", "compile", "compile_graph"):
            if mode.startswith("compile") and not args.compile:
                continue
            torch.manual_seed(2)
            net = ReferenceDenoiser(2, 256).cuda().eps_net
            params = list(net.parameters())
            opt = torch.optim.Adam(params, lr=torch.tensor(1e-3, device="cuda"), fused=True, capturable=True)
            ema = [q.detach().clone() for q in params]

            def loss_fn(u, target):
                return ((net(u).float() - target) ** 2).mean()
            if mode.startswith("compile"):
                loss_fn = torch.compile(loss_fn, mode="max-autotune-no-cudagraphs", dynamic=False)
            step = train_step(B, p, data, sqrt_ab, sqrt_1mab, loss_fn, params, opt, ema)
            try:
                if mode.endswith("graph"):
                    row[mode + "_us"] = graph_time(step, 30, calls=10)
                else:
                    row[mode + "_us"] = events_time(lambda: [step() for _ in range(10)], 3, 30) / 10  # noqa: B023
            except Exception as e:  # noqa: BLE001 — a mode PyTorch cannot run is reported, the others still run
                row[mode + "_error"] = str(e).splitlines()[0][:200]
        rows.append(row)
        print("  ", row, flush=True)


def our_train_us(diffscope, B, p, wdir):
    """Microseconds per step of `diffscope train --backend cuda`: two runs, 200 and 200 + n steps, the difference of
    their step times (the trainer's own timer: its steps, not the process start, data or files)."""
    n = 5000 if B <= 4096 else 1000
    secs = []
    for steps in (200, 200 + n):
        cmd = [diffscope, "train", "--quiet", "--data", "moons", "--backend", "cuda", "--precision", p, "--hidden",
               "256", "--batch", str(B), "--steps", str(steps), "--out", os.path.join(wdir, "train_bench.safetensors")]
        res = subprocess.run(cmd, capture_output=True, text=True)
        m = re.search(r"(\d+)/\d+ steps in .*\(([0-9.]+) steps/s\)", res.stderr)
        if res.returncode != 0 or not m:
            print("ours: train B=%d %s failed (rc %d): %s" % (B, p, res.returncode, res.stderr[-500:]), flush=True)
            return None
        secs.append(int(m.group(1)) / float(m.group(2)))
    return (secs[1] - secs[0]) / n * 1e6


def run_train_rows(args, wdir):
    """--train: PyTorch's training-step rows and ours (`impl` "fused": the CUDA trainer)."""
    rows, ours = [], []
    for B in TRAIN_BATCHES:
        bench_train(B, args, rows)
        for p in [q for q in PRECISIONS if q in ("fp32", "bf16")]:
            if not args.skip_ours:
                us = our_train_us(args.diffscope, B, p, wdir)
                if us is not None:
                    ours.append({"workload": "train moons H=256 B=%d" % B, "precision": p, "impl": "fused",
                                 "median_us": us, "rel_err": float("nan")})
                    print("   ours", ours[-1], flush=True)
    return rows, ours


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--diffscope", default=os.path.join(ROOT, ".gpu/bin-k/diffscope"))
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp"))
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--skip-ours", action="store_true")
    ap.add_argument("--warm-cache", action="store_true", help="only compile every workload (fills --cache-dir)")
    ap.add_argument("--only", default="")
    ap.add_argument("--train", action="store_true", help="the training-step rows only (fp32, bf16)")
    ap.add_argument("--precisions", default="fp32,tf32,bf16,fp16", help="comma-separated, of fp32, tf32, bf16, fp16")
    ap.add_argument("--cache-dir", default=os.environ["TORCHINDUCTOR_CACHE_DIR"],
                    help="inductor's cache (read before torch is imported; default bench/.inductor_cache)")
    args = ap.parse_args()
    wanted = [q for q in args.precisions.split(",") if q]
    bad = [q for q in wanted if q not in PRECISIONS]
    if bad:
        ap.error("--precisions: %s is not a precision; valid: %s" % (", ".join(bad), ", ".join(PRECISIONS)))
    PRECISIONS[:] = wanted
    if args.warm_cache:
        args.compile, args.skip_ours = True, True
    if args.compile:
        allow_recompiles()
    os.makedirs(args.out, exist_ok=True)
    wdir = "/tmp/torch_compare"
    os.makedirs(wdir, exist_ok=True)

    torch.manual_seed(64)
    m64 = ReferenceDenoiser(64, 256).cuda()
    torch.manual_seed(2)
    m2 = ReferenceDenoiser(2, 256).cuda()
    torch.manual_seed(3)
    mlp = Mlp3(48, 64, 40, 24).cuda()
    paths = {k: os.path.join(wdir, k + ".safetensors") for k in ("m64", "m2", "mlp3")}
    safetensors_io.save({k: v.cpu() for k, v in m64.state_dict().items()}, paths["m64"])
    safetensors_io.save({k: v.cpu() for k, v in m2.state_dict().items()}, paths["m2"])
    safetensors_io.save({k: v.cpu() for k, v in mlp.state_dict().items()}, paths["mlp3"])

    ours = []
    rows = []
    if args.train:
        rows, ours = run_train_rows(args, wdir)
    elif not args.skip_ours:
        cmd = [args.diffscope, "bench", "--json", "--model64", paths["m64"], "--model2", paths["m2"], "--mlp3", paths["mlp3"]]
        if args.only:
            cmd += ["--only", args.only]
        t0 = time.time()
        res = subprocess.run(cmd, capture_output=True, text=True)
        print("ours: rc=%d in %.1f s" % (res.returncode, time.time() - t0), flush=True)
        sys.stderr.write(res.stderr[-4000:])
        if res.returncode == 0:
            ours = json.loads(res.stdout)["rows"]
            with open(os.path.join(args.out, "ours_bench.json"), "w") as f:
                f.write(res.stdout)

    def save():  # after every workload, so a run cut short keeps what it measured
        with open(os.path.join(args.out, "torch_compare.json"), "w") as f:
            json.dump({"torch": rows, "ours": ours, "torch_version": torch.__version__,
                       "device": torch.cuda.get_device_name()}, f, indent=1)

    def want(name):
        return not args.train and (not args.only or args.only in name)
    if want("denoise B=8 dim=64 H=256 S=16"):
        bench_denoiser(m64, 8, 16, args, rows)
        save()
    if want("mlp3 B=16 "):
        bench_mlp3(mlp, 16, args, rows)
        save()
    if want("mlp3 B=1048576"):
        bench_mlp3(mlp, 1 << 20, args, rows)
        save()
    if want("denoise B=16384 dim=64 H=256 S=1000"):
        bench_denoiser(m64, 16384, 1000, args, rows)
        save()
    if want("denoise B=65536 dim=2 H=256 S=1000"):
        bench_denoiser(m2, 65536, 1000, args, rows)
    save()

    # One ratio table: ours (fused and unfused) against PyTorch's best of eager / CUDA graph (/ compile).
    print("\n%-36s %-5s %11s %11s %11s %11s %11s %8s %9s %9s" % (
        "workload", "prec", "torch_eager", "torch_graph", "torch_comp", "ours_fused", "ours_unfus", "speedup",
        "err_torch", "err_ours"))
    for r in rows:
        best = min((v for k, v in r.items() if k.endswith("_us")), default=float("nan"))
        f = [o for o in ours if o["workload"] == r["workload"] and o["precision"] == r["precision"]]
        fused = next((o for o in f if o["impl"] == "fused"), None)
        unf = next((o for o in f if o["impl"].startswith("unfused")), None)
        comp = r.get("compile_graph_us", r.get("compile_us", float("nan")))
        print("%-36s %-5s %11.1f %11.1f %11.1f %11.1f %11.1f %7.1fx %9.2e %9.2e" % (
            r["workload"], r["precision"], r.get("eager_us", float("nan")), r.get("graph_us", float("nan")), comp,
            fused["median_us"] if fused else float("nan"), unf["median_us"] if unf else float("nan"),
            best / fused["median_us"] if fused else float("nan"), r.get("rel_err", float("nan")),
            fused["rel_err"] if fused else float("nan")))


if __name__ == "__main__":
    main()
