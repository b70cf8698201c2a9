"""train_denoiser.py — trains the reference eps-network (SEMANTICS §2) on a data set and writes the bundled model.

    python3 tools/train_denoiser.py --datasets moons,swissroll,gaussians8,checkerboard,rings --out assets/models
    python3 tools/train_denoiser.py --datasets digits8x8 --out assets/models
    python3 tools/train_denoiser.py --datasets reference_random --out assets/models      # untrained
    python3 tools/train_denoiser.py --datasets moons --objective sample,v_prediction,flow --out assets/models
    python3 tools/train_denoiser.py --eval-models assets/models/moons.safetensors --eval-seeds 5 --out DIR

Loss (--objective, default epsilon; tools/objectives.py): the standard DDPM noise-prediction loss (Ho et al.
2020, eq. 14): t ~ U{0..T-1}, eps ~ N(0, I), x_t = sqrt(abar[t]) x0 + sqrt(1 - abar[t]) eps,
loss = mean |eps_net([x_t, t/T]) - eps|^2; linear schedule, T = 1000, beta 1e-4 .. 0.02. The other families
(SEMANTICS §2 "Model families") change only the target and, for flow, the level and the time column:
  sample        target x0, on the same x_t and t;
  v_prediction  target v = sqrt(abar) eps - sqrt(1 - abar) x0 (Salimans & Ho 2022), on the same x_t and t;
  flow          rectified flow as SD3 and diffusers' FlowMatch schedulers: x_s = (1 - s) x0 + s eps, target
                v = eps - x0, time column s itself (`time_input: s`), s ~ U[0, 1). Uniform s (Liu et al.
                2022, Lipman et al. 2023) rather than SD3's logit-normal: the logit-normal (m 0, s 1) weights the
                ends s -> 0 and s -> 1 down, a choice for images at high resolution; on a 2D set whose detail
                (moons' width) is only resolved near s = 0, and sampled by flow-euler on a list uniform in s,
                the small levels need their full share of the training.
Several objectives in one call train as one ensemble (one model per data set and objective). Adam, linear warm-up then cosine decay of the learning rate, and an exponential
moving average (EMA, decay min(ema, (1+k)/(10+k)) at step k) of the weights, which is what is saved.

Data sets trained together in one call (same dim and hidden) train as one batched ensemble (torch.bmm over a
leading model axis): each model has its own parameters, its own Adam state (Adam is elementwise, so the
summed loss trains each independently), its own batches. Deterministic given --seed, the --steps actually
taken (printed and stored; --time-limit may lower them, measured after the first 300 steps) and the list of
data sets trained together. Every model's initial weights come from torch.manual_seed(seed) alone.

Writes for each data set and objective: <name>.safetensors, name = <dataset> for epsilon, <dataset>_sample,
<dataset>_v, <dataset>_flow (the reference module's state_dict(): eps_net.* float32, schedule buffers float32
— none for flow, whose file has no VP schedule; `data_samples` (N, dim) float32 held-out points, never seen in
training; __metadata__, with `prediction_type` for every family but epsilon and `time_input: s` for flow),
<name>_loss.png (loss curve), <name>_train.json (loss history, settings, and with --eval a PyTorch preview of
sample quality: for epsilon models today's single-split figures, for the other families — and with
--eval-seeds K for epsilon too — the card's split-averaged measure over K seeds in the model's family,
preview_family). With --eval and digits8x8: digits8x8_samples_torch.png.

Data (2D sets are drawn fresh from their distribution: a pool of 2,000,000 training points, and 2048 held-out
points from a separate random stream; each set is normalised as x = (raw - data_offset) * data_scale, so its
mean is 0 and its mean per-coordinate variance 1, the constants in __metadata__):
  moons, swissroll, gaussians8, checkerboard, rings.
  digits8x8: scikit-learn's load_digits (UCI ML hand-written digits, optical recognition; Alpaydin & Kaynak
  1998; CC BY 4.0), 1797 images 8x8 with pixels 0..16 mapped to [-1, 1] (x = (p - 8) / 8); a fixed permutation
  (seed 0) holds out 360 images (20%) as data_samples, the other 1437 train.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import objectives  # noqa: E402
import safetensors_io  # noqa: E402
from toy_data import load_dataset  # noqa: E402
import reference_module  # noqa: E402
from reference_module import (ReferenceDenoiser, energy_distance, load_reference, sample, sample_family,  # noqa: E402
                              schedule_from_betas, torch_noise)

# ------------------------------------------------------------------ batched ensemble of eps-networks

class Ensemble(torch.nn.Module):
    """M independent eps-networks with the same (dim, hidden), evaluated together with bmm."""

    def __init__(self, models):
        super().__init__()
        def stack(i, attr):
            return torch.nn.Parameter(torch.stack([getattr(m.eps_net[i], attr).detach().clone() for m in models]))
        self.W1, self.b1 = stack(0, "weight"), stack(0, "bias")
        self.W2, self.b2 = stack(2, "weight"), stack(2, "bias")
        self.W3, self.b3 = stack(4, "weight"), stack(4, "bias")

    def forward(self, u):  # u: (M, B, dim+1)
        h = F.silu(torch.baddbmm(self.b1.unsqueeze(1), u, self.W1.transpose(1, 2)))
        h = F.silu(torch.baddbmm(self.b2.unsqueeze(1), h, self.W2.transpose(1, 2)))
        return torch.baddbmm(self.b3.unsqueeze(1), h, self.W3.transpose(1, 2))

    def export(self, m, model):
        """Copies member m's weights into a ReferenceDenoiser."""
        with torch.no_grad():
            for i, (w, b) in zip((0, 2, 4), ((self.W1, self.b1), (self.W2, self.b2), (self.W3, self.b3))):
                model.eps_net[i].weight.copy_(w[m])
                model.eps_net[i].bias.copy_(b[m])
        return model


def lr_at(step, total, peak, warmup, final_frac):
    if step < warmup:
        return peak * (step + 1) / warmup
    p = min(1.0, (step - warmup) / max(1, total - warmup))
    return peak * (final_frac + (1 - final_frac) * 0.5 * (1 + math.cos(math.pi * p)))


def batch_loss(ens, pool, sqrt_ab, sqrt_1mab, T, B, t_power, gen, objective_m=None, flow_rows=None):
    """The loss of one batch per model: B rows of each model's pool (M, P, dim), t uniform in [0, T) (or
    floor(T u^p) for t_power p != 1), x_t = sqrt(abar_t) x0 + sqrt(1 - abar_t) eps; returns (M,). objective_m:
    each model's objective (tools/objectives.py; None: all epsilon, the eps-prediction loss); flow_rows: the
    indices (tensor) of the flow models, whose level s ~ U[0, 1) is drawn after eps (so an ensemble without flow
    models draws what an epsilon ensemble draws), state (1 - s) x0 + s eps and time column s."""
    M, pool_n, dim = pool.shape
    device = pool.device
    idx = torch.randint(0, pool_n, (M, B), generator=gen, device=device)
    x0 = torch.gather(pool, 1, idx.unsqueeze(-1).expand(M, B, dim))
    if t_power == 1.0:
        t = torch.randint(0, T, (M, B), generator=gen, device=device)
    else:  # t = floor(T u^p), u ~ U(0, 1): p > 1 draws small t (fine detail) more often
        u = torch.rand(M, B, generator=gen, device=device)
        t = (T * u ** t_power).long().clamp_(0, T - 1)
    eps = torch.randn(M, B, dim, generator=gen, device=device)
    if objective_m is None:
        xt = sqrt_ab[t].unsqueeze(-1) * x0 + sqrt_1mab[t].unsqueeze(-1) * eps
        u = torch.cat([xt, (t.float() / T).unsqueeze(-1)], -1)
        return ((ens(u) - eps) ** 2).mean(dim=(1, 2))
    alpha, sigma, time_col = sqrt_ab[t], sqrt_1mab[t], t.float() / T
    if flow_rows is not None:
        s = torch.rand(M, B, generator=gen, device=device)[flow_rows]
        alpha[flow_rows], sigma[flow_rows] = objectives.flow_level(s)
        time_col[flow_rows] = s
    a, b = alpha.unsqueeze(-1), sigma.unsqueeze(-1)
    target = torch.stack([objectives.target(o, x0[m], eps[m], a[m], b[m]) for m, o in enumerate(objective_m)])
    u = torch.cat([objectives.noised(x0, eps, a, b), time_col.unsqueeze(-1)], -1)
    return ((ens(u) - target) ** 2).mean(dim=(1, 2))


def ema_update(ema, params, decay):
    """ema <- decay * ema + (1 - decay) * params, in place."""
    if hasattr(torch, "_foreach_lerp_"):
        torch._foreach_lerp_(ema, params, 1 - decay)
    else:  # older torch
        for e, p in zip(ema, params):
            e.lerp_(p, 1 - decay)


def members_of(datasets, objective_list):
    """The ensemble's models: (name, data set, objective) for each objective and data set, in that order; the
    name is the output file's (moons, moons_sample, moons_v, moons_flow: objectives.FILE_SUFFIX)."""
    return [(d + objectives.FILE_SUFFIX[o], d, o) for o in objective_list for d in datasets]


def build_members(members, args, T, device):
    """Each member's data (a data set loaded once) and initial model (torch.manual_seed(seed) alone, in its
    family; flow reads the time column s), and batch_loss's objective_m and flow_rows."""
    loaded = {}
    for _, d, _ in members:
        loaded.setdefault(d, load_dataset(d, args.seed))
    data = [loaded[d] for _, d, _ in members]
    dim = data[0]["train"].shape[1]
    assert all(d["train"].shape[1] == dim for d in data), "data sets trained together need one dim"
    models = []
    for _, _, o in members:
        torch.manual_seed(args.seed)
        models.append(ReferenceDenoiser(dim, args.hidden, T=T, prediction_type=o,
                                        time_input="s" if o == "flow" else None))
    objective_m = [o for _, _, o in members]
    flow_rows = torch.tensor([m for m, o in enumerate(objective_m) if o == "flow"], device=device)
    flow_rows = flow_rows if len(flow_rows) else None
    objective_m = None if all(o == "epsilon" for o in objective_m) else objective_m
    return data, dim, models, objective_m, flow_rows


def train(members, args, device):
    T = 1000
    names = [m[0] for m in members]
    data, dim, models, objective_m, flow_rows = build_members(members, args, T, device)
    ens = Ensemble(models).to(device)
    ema = [p.detach().clone() for p in ens.parameters()]
    M = len(names)
    pool_n = min(d["train"].shape[0] for d in data)
    pool = torch.stack([torch.from_numpy(d["train"][:pool_n]) for d in data]).to(device)  # (M, P, dim)
    sched = schedule_from_betas(models[0].betas.double())
    sqrt_ab = torch.sqrt(sched["alphas_cumprod"]).float().to(device)
    sqrt_1mab = torch.sqrt(1 - sched["alphas_cumprod"]).float().to(device)
    gen = torch.Generator(device=device)
    gen.manual_seed(args.seed)
    opt_kw = {"fused": True} if device.type == "cuda" else {}
    opt = torch.optim.Adam(ens.parameters(), lr=args.lr, **opt_kw)
    B = args.batch
    total = args.steps
    hist_step, hist_loss = [], []
    acc = torch.zeros(M, device=device)
    acc_n = 0
    t0 = time.time()
    t_rate0 = None
    step = 0
    print("[%s] training %d model(s) dim=%d hidden=%d batch=%d steps<=%d lr=%g ema=%g on %s" % (
        ",".join(names), M, dim, args.hidden, B, total, args.lr, args.ema, device), flush=True)
    while step < total:
        loss_m = batch_loss(ens, pool, sqrt_ab, sqrt_1mab, T, B, args.t_power, gen, objective_m, flow_rows)
        for g in opt.param_groups:
            g["lr"] = lr_at(step, total, args.lr, args.warmup, args.final_lr_frac)
        opt.zero_grad(set_to_none=True)
        loss_m.sum().backward()
        opt.step()
        with torch.no_grad():
            ema_update(ema, list(ens.parameters()), min(args.ema, (1 + step) / (10 + step)))  # EMA warm-up
            acc += loss_m.detach()
        acc_n += 1
        step += 1
        if step == 50:
            torch.cuda.synchronize() if device.type == "cuda" else None
            t_rate0 = time.time()
        if step == 300 and args.time_limit > 0:
            torch.cuda.synchronize() if device.type == "cuda" else None
            rate = 250 / (time.time() - t_rate0)
            left = args.time_limit - (time.time() - t0)
            cap = 300 + int(rate * left * 0.97)
            if cap < total:
                total = max(cap, 1000)
                print("[%s] %.0f steps/s: capping at %d steps to fit --time-limit %gs" % (
                    ",".join(names), rate, total, args.time_limit), flush=True)
        if step % args.log_every == 0 or step == total:
            mean = (acc / acc_n).tolist()
            hist_step.append(step)
            hist_loss.append(mean)
            acc.zero_()
            acc_n = 0
            if step % (args.log_every * 20) == 0 or step == total:
                print("[%s] step %d/%d  %.1fs  lr %.2e  loss %s" % (
                    ",".join(names), step, total, time.time() - t0, opt.param_groups[0]["lr"],
                    " ".join("%s=%.4f" % (n, l) for n, l in zip(names, mean))), flush=True)
        if args.time_limit > 0 and time.time() - t0 > 1.15 * args.time_limit:
            print("[%s] hard time limit hit at step %d" % (",".join(names), step), flush=True)
            break
    if device.type == "cuda":
        torch.cuda.synchronize()
    seconds = time.time() - t0
    with torch.no_grad():
        for p, e in zip(ens.parameters(), ema):
            p.copy_(e)
    out = []
    for m, ((name, dataset, objective), d) in enumerate(zip(members, data)):
        model = ens.export(m, models[m].to(device)).eval()
        out.append({"name": name, "dataset": dataset, "objective": objective, "model": model, "data": d,
                    "steps": step, "seconds": seconds, "loss_steps": hist_step, "loss": [l[m] for l in hist_loss]})
    return out


# ------------------------------------------------------------------ outputs

def save_model(r, args):
    model, d, objective = r["model"], r["data"], r["objective"]
    tensors = {k: v.detach().float().cpu() for k, v in model.state_dict().items()}
    tensors["data_samples"] = torch.from_numpy(d["held_out"])
    meta = {"dataset": r["dataset"], "T": "1000", "schedule": "linear", "beta_start": "0.0001", "beta_end": "0.02",
            "hidden": str(args.hidden), "dim": str(model.dim), "training_steps": str(r["steps"]),
            "seed": str(args.seed), "batch": str(args.batch), "lr": "%g" % args.lr, "ema": "%g" % args.ema,
            "optimizer": "Adam, %d warm-up steps, cosine decay to %g x lr; EMA weights saved" % (
                args.warmup, args.final_lr_frac),
            "loss": "DDPM eps-prediction MSE, " + ("t uniform in 0..999" if args.t_power == 1.0 else
                                                   "t = floor(1000 u^%g), u uniform in (0, 1)" % args.t_power),
            "train_seconds": "%.1f" % r["seconds"], "torch": torch.__version__,
            "trained_with": "tools/train_denoiser.py " + " ".join(sys.argv[1:])}
    meta.update(d["meta"])
    if objective != "epsilon":
        family_metadata(objective, meta, tensors, args)
    path = os.path.join(args.out, r["name"] + ".safetensors")
    safetensors_io.save(tensors, path, meta)
    print("wrote %s (%d bytes)" % (path, os.path.getsize(path)), flush=True)


def family_metadata(objective, meta, tensors, args):
    """A sample / v_prediction / flow model's keys (SEMANTICS §2 "How a file says it", read by model/family.cpp
    family_from_metadata): `prediction_type`, and the loss. A flow model has no VP schedule: its file holds no
    schedule tensors (betas, ...) and no `schedule` / `beta_start` / `beta_end` keys, and says `time_input: s`
    (the network's time column is the flow level s itself) with T = 1000."""
    meta["prediction_type"] = objective
    if objective == "flow":
        for k in reference_module.SCHEDULE_KEYS:
            tensors.pop(k)
        for k in ("schedule", "beta_start", "beta_end"):
            meta.pop(k)
        meta["time_input"] = "s"
        meta["loss"] = objectives.LOSS_NAME[objective] + ", s uniform in [0, 1)"
    else:
        meta["loss"] = objectives.LOSS_NAME[objective] + ", " + (
            "t uniform in 0..999" if args.t_power == 1.0 else "t = floor(1000 u^%g), u uniform in (0, 1)" % args.t_power)


LOSS_AXIS = {"epsilon": "eps MSE", "sample": "x0 MSE", "v_prediction": "v MSE", "flow": "velocity MSE"}


def save_loss_png(r, args):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(5, 3.2), dpi=90)
    ax.plot(r["loss_steps"], r["loss"], lw=1)
    ax.set_yscale("log")
    ax.set_xlabel("Adam step")
    ax.set_ylabel("%s (mean per %d steps)" % (LOSS_AXIS[r["objective"]], args.log_every))
    ax.set_title("%s: training loss" % r["name"])
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(args.out, r["name"] + "_loss.png"))
    plt.close(fig)


def save_digit_grid(x, path, cells=8):
    """x: (cells*cells, 64) in [-1, 1] -> PNG grid of 8x8 images, white digits on black as in load_digits."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    img = np.ones((cells * 9 + 1, cells * 9 + 1)) * 0.5
    for k in range(cells * cells):
        r, c = divmod(k, cells)
        img[1 + r * 9:1 + r * 9 + 8, 1 + c * 9:1 + c * 9 + 8] = (np.clip(x[k].reshape(8, 8), -1, 1) + 1) / 2
    plt.imsave(path, np.kron(img, np.ones((6, 6))), cmap="gray", vmin=0, vmax=1)


@torch.no_grad()
def preview_quality(r, args, device):
    """PyTorch preview of the quality table: samples (t_start 999, 1000 steps, torch noise) vs half A."""
    model, held = r["model"], torch.from_numpy(r["data"]["held_out"]).to(device)
    half = held.shape[0] // 2
    A, Bh = held[:half], held[half:2 * half]
    n = min(1000, half)
    gen = torch.Generator(device=device)
    gen.manual_seed(args.seed + 7)
    def nn_dist(X):  # mean distance to the nearest point of half A: samples off the data show here
        return float(torch.cdist(X.double(), A.double()).min(dim=1).values.mean())
    res = {"n": n, "n_half_a": half, "data_vs_data": energy_distance(Bh[:n], A), "data_nn": nn_dist(Bh[:n]),
           "noise": energy_distance(torch.randn(n, model.dim, generator=gen, device=device), A)}
    for sampler in ("ddim", "ddpm", "ddpm-mean"):
        x = torch.randn(n, model.dim, generator=gen, device=device)
        y = sample(model, x, sampler, 999, args.eval_steps, torch_noise(gen), sched=schedule_from_betas(model.betas.double()))
        res[sampler] = energy_distance(y, A)
        res[sampler + "_nn"] = nn_dist(y)
        if sampler == "ddim" and r["name"] == "digits8x8":
            save_digit_grid(y[:64].cpu().numpy(), os.path.join(args.out, "digits8x8_samples_torch.png"))
    print("[%s] preview (PyTorch, n=%d vs half A): %s" % (r["name"], n, " ".join(
        "%s=%.4f" % (k, v) for k, v in res.items() if isinstance(v, float))), flush=True)
    return res


@torch.no_grad()
def preview_family(name, model, held, args, device):
    """The card's quality measure on a PyTorch preview, in the model's family: K = --eval-seeds seeds (K chunks of
    n rows; one generator seeded seed + 7 draws the start noise first, so every model of one dim starts from the
    same noise) from pure noise with --eval-steps steps: the VP families ddim (eta 0) and ddpm from t_start
    T - 1, flow flow-euler on FlowMatchEuler's list (shift 1) from s = 1. Each seed's samples against the held-out
    data by tools/quality_measure.py (split-averaged energy distance, 100 splits, n vs half A); the ratio is the
    seeds' mean over the data-vs-data mean. held: (N, dim) numpy. With --eval-samples the samples are written to
    <name>_preview.npz. Returns the figures (dict)."""
    import quality_measure
    ref = quality_measure.SplitReference(held)
    n, K = ref.n, max(1, args.eval_seeds)
    gen = torch.Generator(device=device)
    gen.manual_seed(args.seed + 7)
    start = torch.randn(K * n, model.dim, generator=gen, device=device)
    dvd = float(ref.data_vs_data().mean())
    res = {"family": model.prediction_type, "time_input": model.time_input, "n": n, "seeds": K,
           "steps": args.eval_steps, "data_vs_data": dvd, "noise": float(ref.samples_vs_a(start[:n].cpu().numpy()).mean())}
    sched = schedule_from_betas(model.betas.double())
    runs = {}
    for sampler in (("flow-euler",) if model.prediction_type == "flow" else ("ddim", "ddpm")):
        x = start if sampler != "ddpm" else torch.randn(K * n, model.dim, generator=gen, device=device)
        y = sample_family(model, x, sampler, args.eval_steps, torch_noise(gen), sched=sched).cpu().numpy()
        per_seed = [float(ref.samples_vs_a(y[k * n:(k + 1) * n]).mean()) for k in range(K)]
        mean, sd = quality_measure.mean_sd(per_seed)
        res[sampler] = {"per_seed": per_seed, "mean": mean, "sd": sd, "ratio": mean / dvd,
                        "largest_radius": float(np.sqrt((y ** 2).sum(1)).max())}
        runs[sampler] = y.astype(np.float32)
    if args.eval_samples:
        np.savez(os.path.join(args.out, name + "_preview.npz"), start=start.cpu().numpy(), **runs)
    print("[%s] preview (%s, PyTorch, %d seeds x n=%d, split-averaged vs half A): data %.4f noise %.4f %s" % (
        name, model.prediction_type, K, n, dvd, res["noise"], " ".join(
            "%s=%.4f+-%.4f (%.2fx)" % (k, res[k]["mean"], res[k]["sd"], res[k]["ratio"]) for k in runs)), flush=True)
    return res


def preview_files(paths, args, device):
    """--eval-models: the family preview of model files (their family from __metadata__), <name>_preview.json."""
    for path in paths:
        model, _ = load_reference(path, device)
        name = os.path.basename(path).rsplit(".", 1)[0]
        res = preview_family(name, model, model.data_samples.numpy(), args, device)
        with open(os.path.join(args.out, name + "_preview.json"), "w") as f:
            json.dump(res, f, indent=1)


def write_reference_random(args):
    torch.manual_seed(args.seed)
    model = ReferenceDenoiser(64, 256)
    meta = {"dataset": "reference_random", "T": "1000", "schedule": "linear", "beta_start": "0.0001",
            "beta_end": "0.02", "hidden": "256", "dim": "64", "training_steps": "0", "seed": str(args.seed),
            "note": "untrained: PyTorch default nn.Linear init under torch.manual_seed(seed); the reference "
                    "configuration for benchmarks that must match PyTorch's workload", "torch": torch.__version__}
    path = os.path.join(args.out, "reference_random.safetensors")
    safetensors_io.save({k: v.float() for k, v in model.state_dict().items()}, path, meta)
    print("wrote %s" % path, flush=True)


# Options an epsilon run leaves at these values are not written into <name>_train.json (as before they existed).
NEW_DEFAULTS = {"objective": "epsilon", "eval_seeds": 0, "eval_samples": False, "eval_models": ""}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", default="", help="comma list; those trained together must share dim")
    ap.add_argument("--out", default="assets/models")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--steps", type=int, default=40000)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=500)
    ap.add_argument("--final-lr-frac", type=float, default=0.01)
    ap.add_argument("--ema", type=float, default=0.9995)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--t-power", type=float, default=1.0,
                    help="training timesteps t = floor(T u^p), u ~ U(0,1); 1 = uniform (Ho et al.), >1 favours small t")
    ap.add_argument("--time-limit", type=float, default=0, help="seconds; lowers --steps to fit (0: no limit)")
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--eval", action="store_true", help="PyTorch preview of sample quality after training")
    ap.add_argument("--eval-steps", type=int, default=1000, help="steps of the preview samplers (quick tests)")
    ap.add_argument("--eval-seeds", type=int, default=0,
                    help="with --eval: the card's split-averaged measure over this many seeds in the model's family "
                         "(always for sample / v_prediction / flow models, at least 1 seed)")
    ap.add_argument("--eval-samples", action="store_true", help="with the family preview: write <name>_preview.npz")
    ap.add_argument("--eval-models", default="", help="comma list of model files: the family preview of each "
                                                      "(no training unless --datasets names sets)")
    ap.add_argument("--objective", default="epsilon",
                    help="comma list of %s: each data set is trained once per objective, all in one ensemble "
                         "(files <dataset>%s)" % (", ".join(objectives.OBJECTIVES), ", <dataset>_sample, <dataset>_v, "
                                                                                      "<dataset>_flow"))
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    args.datasets_list = [s.strip() for s in args.datasets.split(",") if s.strip()]
    try:
        objective_list = [objectives.check_objective(o.strip()) for o in args.objective.split(",") if o.strip()]
    except ValueError as e:
        ap.error("--objective: %s" % e)
    if len(set(objective_list)) != len(objective_list) or not objective_list:
        ap.error("--objective %r: name each objective once" % args.objective)
    os.makedirs(args.out, exist_ok=True)
    torch.set_num_threads(min(4, torch.get_num_threads()))
    device = torch.device(args.device)
    if not args.datasets_list and not args.eval_models:
        ap.error("name --datasets (or --eval-models)")
    names = [n for n in args.datasets_list if n != "reference_random"]
    if "reference_random" in args.datasets_list:
        write_reference_random(args)
    if args.eval_models:
        preview_files([p for p in args.eval_models.split(",") if p], args, device)
    if not names:
        return
    results = train(members_of(names, objective_list), args, device)
    for r in results:
        save_model(r, args)
        save_loss_png(r, args)
        info = {k: r[k] for k in ("name", "steps", "seconds", "loss_steps", "loss")}
        info["settings"] = {k: v for k, v in vars(args).items() if k != "datasets_list" and NEW_DEFAULTS.get(k, k) != v}
        info["torch"] = torch.__version__
        info["device"] = torch.cuda.get_device_name(0) if device.type == "cuda" else "cpu"
        if args.eval and (r["objective"] != "epsilon" or args.eval_seeds > 0):
            info["preview_torch"] = preview_family(r["name"], r["model"], r["data"]["held_out"], args, device)
        elif args.eval:
            info["preview_torch"] = preview_quality(r, args, device)
        with open(os.path.join(args.out, r["name"] + "_train.json"), "w") as f:
            json.dump(info, f, indent=1)


if __name__ == "__main__":
    main()
