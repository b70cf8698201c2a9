"""reference_module.py — the reference PyTorch modules of SEMANTICS.md, and samplers with noise from outside.

- ReferenceDenoiser (SEMANTICS §1, §2, §4): `eps_net` = nn.Sequential(Linear(dim+1, H), SiLU, Linear(H, H),
  SiLU, Linear(H, dim)) and the schedule buffers betas, alphas, alphas_cumprod, sqrt_recip_alphas, coef_eps
  (computed in float64, cast to the module's dtype). forward(x (B, dim), t_start (B,)) casts t_start to
  int64 and takes `steps` ddpm-mean steps, row b at t = t_start[b] - k; a row frozen once it has taken its
  step at t = 0. Its state_dict() is the model-file layout (§6).
  Model families (§2 "Model families"): `prediction_type` (epsilon, sample, v_prediction, flow) says what the
  network's output o is, `time_input` what its time column holds (t/T or t for the VP families; T*s, s or 1-s
  for flow); data_and_eps maps (x, o) to the data prediction and eps (tools/objectives.py, §2's table).
  load_reference builds one from a model file.
  Class-conditional (§2, `classes = C >= 1`): `class_emb` = nn.Embedding(C + 1, H) beside eps_net, its row c added
  to the first Linear's output before the SiLU, row C the null class; eps, output and forward take `class_labels`
  ((B,) int64, or None: the null class).
- Mlp3 (§5): fc1, fc2, fc3 (nn.Linear, bias=False), y = fc3(relu(fc2(relu(fc1(x))))).
- Samplers (§3): ddim (eta), ddpm, ddpm-mean over the step lists of §3, in every VP family (the output mapped
  to x0 and eps); flow-euler (diffusers' FlowMatchEulerDiscreteScheduler.step on its list,
  flow_match_euler_sigmas) for flow models; sample_family picks the list by the family. Noise is a callable
  noise(step_key, n, dim) -> tensor, e.g. tools/philox.py's normal_noise, so runs match the C++ program.

Used by tools/make_golden.py (float64 goldens) and tools/train_denoiser.py (training and previews).
"""
import math
import os
import sys

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import objectives  # noqa: E402


def linear_betas(T=1000, beta_start=1e-4, beta_end=0.02):
    """beta[t] = beta_start + (beta_end - beta_start) * t / (T-1), float64 (SEMANTICS §1)."""
    t = torch.arange(T, dtype=torch.float64)
    return beta_start + (beta_end - beta_start) * t / (T - 1)


def schedule_from_betas(betas):
    """Every schedule buffer from betas, in float64 (SEMANTICS §1). Returns a dict of float64 tensors."""
    betas = betas.to(torch.float64)
    alphas = 1.0 - betas
    abar = torch.cumprod(alphas, 0)
    return {
        "betas": betas,
        "alphas": alphas,
        "alphas_cumprod": abar,
        "sqrt_recip_alphas": torch.sqrt(1.0 / alphas),
        "coef_eps": betas / torch.sqrt(1.0 - abar),
    }


def posterior_sigma(sched):
    """sigma[t] = sqrt(beta[t] (1 - abar[t-1]) / (1 - abar[t])) for t >= 1, sigma[0] = 0 (float64)."""
    b, abar = sched["betas"], sched["alphas_cumprod"]
    sig = torch.zeros_like(b)
    sig[1:] = torch.sqrt(b[1:] * (1.0 - abar[:-1]) / (1.0 - abar[1:]))
    return sig


SCHEDULE_KEYS = ("betas", "alphas", "alphas_cumprod", "sqrt_recip_alphas", "coef_eps")

# Each family's time inputs (SEMANTICS §2 "Network input"), the default first.
TIME_INPUTS = {"epsilon": ("t/T", "t"), "sample": ("t/T", "t"), "v_prediction": ("t/T", "t"),
               "flow": ("T*s", "s", "1-s")}


class ReferenceDenoiser(nn.Module):
    """The reference module: eps-network + fused multi-step ddpm-mean denoise (SEMANTICS §2, §4)."""

    def __init__(self, dim, hidden, steps=16, T=1000, beta_start=1e-4, beta_end=0.02, prediction_type="epsilon",
                 time_input=None, classes=0):
        super().__init__()
        self.classes = classes
        self.dim, self.hidden, self.steps, self.T = dim, hidden, steps, T
        self.prediction_type = objectives.check_objective(prediction_type)
        self.time_input = time_input or TIME_INPUTS[prediction_type][0]
        if self.time_input not in TIME_INPUTS[prediction_type]:
            raise ValueError("time_input %r is not one of the %s family's: %s" % (
                self.time_input, prediction_type, ", ".join(TIME_INPUTS[prediction_type])))
        self.eps_net = nn.Sequential(
            nn.Linear(dim + 1, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, dim))
        if classes > 0:
            self.class_emb = nn.Embedding(classes + 1, hidden)
        sched = schedule_from_betas(linear_betas(T, beta_start, beta_end))
        for k in SCHEDULE_KEYS:
            self.register_buffer(k, sched[k].to(torch.get_default_dtype()))

    def recompute_schedule(self, betas=None):
        """Recomputes every buffer in float64 from `betas` (default: the module's own) and stores them in the
        module's dtype — what the C++ loader does with a file's betas (SEMANTICS §1). Call after .double()."""
        dtype = self.eps_net[0].weight.dtype
        sched = schedule_from_betas(self.betas if betas is None else betas)
        for k in SCHEDULE_KEYS:
            setattr(self, k, sched[k].to(dtype=dtype, device=self.betas.device))

    def net(self, u, class_labels=None):
        """The network on input rows u (B, dim+1) (SEMANTICS §2): eps_net, with a class input the row
        class_emb[c] added to the first layer's pre-activation (class_labels (B,) int64; None: the null class)."""
        if self.classes == 0:
            if class_labels is not None:
                raise ValueError("this network has no class input (SEMANTICS §2)")
            return self.eps_net(u)
        if class_labels is None:
            class_labels = torch.full((u.shape[0],), self.classes, dtype=torch.int64, device=u.device)
        h = self.eps_net[1](self.eps_net[0](u) + self.class_emb(class_labels))
        return self.eps_net[4](self.eps_net[3](self.eps_net[2](h)))

    def eps(self, x, t, class_labels=None):
        """eps-network (SEMANTICS §2). x: (B, dim); t: (B,) int64 timesteps. Input row [x, t/T]."""
        u = torch.cat([x, (t.to(x.dtype) / self.T).unsqueeze(1)], dim=1)
        return self.net(u, class_labels)

    def time_value(self, level, dtype):
        """The network's time column (n,) for a level (n,): VP timesteps t (int64) or flow levels s (float)."""
        v = level.to(dtype)
        if self.time_input == "t/T":
            return v / self.T
        if self.time_input == "T*s":
            return v * self.T
        return 1 - v if self.time_input == "1-s" else v  # "t", "s"

    def output(self, x, level, class_labels=None):
        """The network's raw output o (n, dim) at x (n, dim) and the level (n,) (SEMANTICS §2 "Network input").
        For the VP families with time input t/T this is eps(x, t)'s arithmetic exactly."""
        return self.net(torch.cat([x, self.time_value(level, x.dtype).unsqueeze(1)], dim=1), class_labels)

    def data_and_eps(self, x, o, alpha, sigma):
        """(D, eps): the data prediction and the noise from the state x and the output o at the level
        (alpha, sigma) in the model's family (SEMANTICS §2's output maps)."""
        return objectives.output_to_data_and_eps(self.prediction_type, x, o, alpha, sigma)

    def forward(self, x, t_start, class_labels=None):
        """S = self.steps ddpm-mean steps, row b at t = t_start[b] - k; rows past t = 0 frozen (§4)."""
        t_start = t_start.to(torch.int64)
        for k in range(self.steps):
            t = t_start - k
            active = (t >= 0).unsqueeze(1)
            tc = t.clamp(min=0)
            eps = self.eps(x, tc, class_labels)
            c1 = self.sqrt_recip_alphas[tc].unsqueeze(1)
            c2 = self.coef_eps[tc].unsqueeze(1)
            x = torch.where(active, c1 * (x - c2 * eps), x)
        return x


class Mlp3(nn.Module):
    """The bias-free 3-layer MLP (SEMANTICS §5): y = relu(relu(x W1^T) W2^T) W3^T."""

    def __init__(self, d0, d1, d2, d3):
        super().__init__()
        self.fc1 = nn.Linear(d0, d1, bias=False)
        self.fc2 = nn.Linear(d1, d2, bias=False)
        self.fc3 = nn.Linear(d2, d3, bias=False)

    def forward(self, x):
        return self.fc3(torch.relu(self.fc2(torch.relu(self.fc1(x)))))


# ---------------------------------------------------------------- samplers (SEMANTICS §3)

def ddim_timesteps(t_start, n_steps):
    """t_i = round(t_start (N-1-i) / (N-1)), half away from zero, exact in integers; [t_start] for N = 1."""
    if n_steps == 1:
        return [t_start]
    den = n_steps - 1
    return [(2 * t_start * (den - i) + den) // (2 * den) for i in range(n_steps)]


def ddpm_timesteps(t_start, n_steps):
    """t_start, t_start-1, ..., t_start-N+1."""
    return list(range(t_start, t_start - n_steps, -1))


def check_steps(t_start, n_steps, T):
    if not (0 <= t_start <= T - 1):
        raise ValueError("t_start %d outside [0, %d]" % (t_start, T - 1))
    if not (1 <= n_steps <= t_start + 1):
        raise ValueError("steps %d outside [1, %d]" % (n_steps, t_start + 1))


def _vp_prediction(model, x, t, a_t):
    """(x0, eps) of a VP-family model at timestep t (a Python int) with abar[t] = a_t, in x's dtype. An epsilon
    model's x0 is §3's (x - sqrt(1-abar) eps) / sqrt(abar); the other families map their output (§2)."""
    tt = torch.full((x.shape[0],), t, dtype=torch.int64, device=x.device)
    if model.prediction_type == "epsilon" and model.time_input == "t/T":
        eps = model.eps(x, tt)
        return (x - torch.sqrt(1.0 - a_t) * eps) / torch.sqrt(a_t), eps
    return model.data_and_eps(x, model.output(x, tt), torch.sqrt(a_t), torch.sqrt(1.0 - a_t))


@torch.no_grad()
def sample(model, x, sampler, t_start, n_steps, noise, eta=0.0, sched=None):
    """Runs `sampler` ('ddim' | 'ddpm' | 'ddpm-mean') from state x (n, dim) over the §3 step list, for a model
    of any VP family (epsilon, sample, v_prediction: its output mapped to x0 and eps, §2).

    noise(step_key, n, dim) -> tensor like x: the noise of the step at timestep t uses step_key = t.
    sched: float64 schedule dict (default: recomputed from the model's betas). Computes in x's dtype.
    Returns the final state (n, dim)."""
    if model.prediction_type not in objectives.VP_OBJECTIVES:
        raise ValueError("sampler %r runs on the VP families; a %s model takes sample_flow" % (
            sampler, model.prediction_type))
    T = model.T
    check_steps(t_start, n_steps, T)
    if sched is None:
        sched = schedule_from_betas(model.betas)
    sched = {k: v.to(device=x.device, dtype=x.dtype) for k, v in sched.items()}
    n, dim = x.shape
    if sampler in ("ddpm", "ddpm-mean"):
        sigma = posterior_sigma(sched)
        for t in ddpm_timesteps(t_start, n_steps):
            _, eps = _vp_prediction(model, x, t, sched["alphas_cumprod"][t])
            x = sched["sqrt_recip_alphas"][t] * (x - sched["coef_eps"][t] * eps)
            if sampler == "ddpm" and t > 0:
                x = x + sigma[t] * noise(t, n, dim).to(device=x.device, dtype=x.dtype)
        return x
    if sampler != "ddim":
        raise ValueError("sampler %r: expected ddim, ddpm or ddpm-mean" % sampler)
    ts = ddim_timesteps(t_start, n_steps)
    abar = sched["alphas_cumprod"]
    for i, t in enumerate(ts):
        a_t = abar[t]
        a_prev = abar[ts[i + 1]] if i + 1 < len(ts) else torch.ones((), dtype=x.dtype, device=x.device)
        x0, eps = _vp_prediction(model, x, t, a_t)
        s = eta * torch.sqrt((1.0 - a_prev) / (1.0 - a_t)) * torch.sqrt(1.0 - a_t / a_prev)
        x = torch.sqrt(a_prev) * x0 + torch.sqrt(torch.clamp(1.0 - a_prev - s * s, min=0.0)) * eps
        if eta > 0:
            x = x + s * noise(t, n, dim).to(device=x.device, dtype=x.dtype)
    return x


def flow_match_euler_sigmas(n_steps, shift=1.0, T=1000):
    """diffusers' FlowMatchEulerDiscreteScheduler list (no dynamic shifting): __init__ takes
    s = linspace(1, T, T)[::-1] / T in float32 and shifts it (s' = shift s / (1 + (shift - 1) s)), keeping
    sigma_max = s'[0] and sigma_min = s'[-1]; set_timesteps(N) spaces N values from sigma_max T to sigma_min T
    (float64), divides by T, applies the shift again, casts to float32 and appends 0. Returns the N + 1 levels
    as a float64 tensor (their float32 values); the timesteps are T s."""
    s = torch.from_numpy(np.linspace(1, T, T, dtype=np.float32)[::-1].copy()).to(torch.float32) / T
    s = shift * s / (1 + (shift - 1) * s)
    sigma_max, sigma_min = s[0].item(), s[-1].item()
    levels = np.linspace(sigma_max * T, sigma_min * T, n_steps) / T
    levels = shift * levels / (1 + (shift - 1) * levels)
    return torch.cat([torch.from_numpy(levels).to(torch.float32), torch.zeros(1)]).double()


@torch.no_grad()
def sample_flow(model, x, n_steps, shift=1.0, start=0):
    """flow-euler: FlowMatchEulerDiscreteScheduler.step, x <- x + (s' - s) o, over flow_match_euler_sigmas from
    list index `start` (N - start steps), for a flow model (its output o the velocity eps - x0). This is DDIM
    with eta 0 in the flow family (SEMANTICS §2 "The first-order step"). x (n, dim) holds x_s; computes in x's
    dtype; returns the final state."""
    if model.prediction_type != "flow":
        raise ValueError("flow-euler runs on flow models; this one is %s" % model.prediction_type)
    if not (0 <= start < n_steps):
        raise ValueError("start %d outside [0, %d]" % (start, n_steps - 1))
    levels = flow_match_euler_sigmas(n_steps, shift, model.T).to(device=x.device, dtype=x.dtype)
    n = x.shape[0]
    for k in range(start, n_steps):
        o = model.output(x, levels[k].expand(n))
        x = x + (levels[k + 1] - levels[k]) * o
    return x


def sample_family(model, x, sampler, n_steps, noise, sched=None):
    """The card's preview run from pure noise in the model's family: the VP families take `sampler` (ddim with
    eta 0, ddpm) from t_start T - 1 with n_steps steps; flow takes flow-euler on FlowMatchEuler's list of
    n_steps steps (shift 1) from s = 1."""
    if model.prediction_type == "flow":
        if sampler != "flow-euler":
            raise ValueError("sampler %r: a flow model's preview takes flow-euler" % sampler)
        return sample_flow(model, x, n_steps)
    return sample(model, x, sampler, model.T - 1, n_steps, noise, sched=sched)


def load_reference(path, device="cpu"):
    """A ReferenceDenoiser from a model file (SEMANTICS §6 layout): eps_net weights, the family and time input
    from __metadata__ prediction_type / time_input (defaults: epsilon, the family's first), class_emb.weight (a
    class-conditional network, §2) when present, the file's betas when
    it has them (else the linear schedule of T = metadata T), `data_samples` as .data_samples. Returns
    (model, metadata)."""
    import safetensors_io
    tensors, meta = safetensors_io.load(path)
    family = meta.get("prediction_type", "epsilon")
    family = "flow" if family == "flow_prediction" else family
    w1 = tensors["eps_net.0.weight"]
    emb = tensors.get("class_emb.weight")
    model = ReferenceDenoiser(w1.shape[1] - 1, w1.shape[0], T=int(meta.get("T", "1000")), prediction_type=family,
                              time_input=meta.get("time_input"), classes=0 if emb is None else emb.shape[0] - 1)
    if emb is not None:
        model.class_emb.load_state_dict({"weight": emb.float()})
    model.eps_net.load_state_dict({k[len("eps_net."):]: v.float() for k, v in tensors.items()
                                   if k.startswith("eps_net.")})
    if "betas" in tensors:
        model.recompute_schedule(tensors["betas"].double())
    model.data_samples = tensors.get("data_samples")
    return model.to(device).eval(), meta


def torch_noise(generator):
    """A noise callable drawing from a torch.Generator (for quick previews; not the Philox layout)."""
    def draw(step_key, n, dim):
        return torch.randn(n, dim, generator=generator, device=generator.device)
    return draw


def energy_distance(X, Y):
    """V-statistic energy distance, Euclidean: 2 E|X-Y| - E|X-X'| - E|Y-Y'| (means over all pairs, the
    zero diagonal included). X: (n, d), Y: (m, d) float tensors; computed in float64."""
    X = X.to(torch.float64)
    Y = Y.to(torch.float64)
    return float(2 * torch.cdist(X, Y).mean() - torch.cdist(X, X).mean() - torch.cdist(Y, Y).mean())


def family_self_check():
    """Closed forms of the families' samplers (float64): a network with a constant output c (zero weights, bias
    c) in `sample` ends ddim at c; in `flow` flow-euler from s = 1 to 0 ends at x - c; a zero output in
    `v_prediction` scales x by prod cos(phi_i - phi_{i+1}) (phi = atan2(sigma, alpha), the last level phi = 0);
    FlowMatchEuler's list at shift 3 ends at 0.00893 before its 0 (diffusers' double shift)."""
    def const_model(family, c, **kw):
        m = ReferenceDenoiser(2, 8, prediction_type=family, **kw).double()
        for p in m.eps_net.parameters():
            nn.init.zeros_(p)
        with torch.no_grad():
            m.eps_net[4].bias.fill_(c)
        return m
    x = torch.tensor([[0.3, -1.7]], dtype=torch.float64)
    y = sample(const_model("sample", 0.25), x, "ddim", 999, 50, None)
    assert torch.allclose(y, torch.full_like(y, 0.25), rtol=0, atol=1e-12), y
    y = sample_flow(const_model("flow", 0.25, time_input="s"), x, 1000)
    assert torch.allclose(y, x - 0.25, rtol=0, atol=1e-12), y
    ts = ddim_timesteps(999, 20)
    abar = [float(a) for a in schedule_from_betas(linear_betas())["alphas_cumprod"][ts]] + [1.0]
    phi = [math.atan2(math.sqrt(1 - a), math.sqrt(a)) for a in abar]
    scale = math.prod(math.cos(phi[i] - phi[i + 1]) for i in range(len(ts)))
    y = sample(const_model("v_prediction", 0.0), x, "ddim", 999, 20, None)
    assert torch.allclose(y, x * scale, rtol=1e-12, atol=0), (y, x * scale)
    levels = flow_match_euler_sigmas(28, shift=3.0)
    assert abs(float(levels[-2]) - 0.0089285) < 1e-6 and float(levels[0]) == 1.0 and float(levels[-1]) == 0.0
    print("families: sample -> c, flow-euler -> x - c, v zero output x %.6f, shift-3 list ends %.5f: ok" % (
        scale, float(levels[-2])))


if __name__ == "__main__":
    # Closed-form self-checks (issue 2): zero weights -> eps = 0; 1000 ddpm-mean steps from 999 scale x by
    # 157.410457, a single step at t = 0 by 1.000050; posterior sigma 0.0073846 at t = 1, 0.141421 at 999.
    torch.set_default_dtype(torch.float64)
    m = ReferenceDenoiser(2, 8, steps=1000)
    for p in m.eps_net.parameters():
        nn.init.zeros_(p)
    y = m(torch.ones(1, 2), torch.tensor([999]))
    print("scale 999->0: %.6f (157.410457)" % y[0, 0])
    m.steps = 1
    print("one step t=0: %.6f (1.000050)" % m(torch.ones(1, 2), torch.tensor([0]))[0, 0])
    sig = posterior_sigma(schedule_from_betas(m.betas))
    print("sigma 1, 500, 999: %.7f %.6f %.6f" % (sig[1], sig[500], sig[999]))
    with torch.no_grad():
        m.eps_net[4].bias.fill_(1.0)
    print("ddim eps=1 from 0: %s (-157.407281)" % [
        round(float(sample(m, torch.zeros(1, 2), "ddim", 999, n, None)[0, 0]), 6) for n in (50, 2, 1000)])
    print("ddim steps 999/50:", ddim_timesteps(999, 50)[:5], "...", ddim_timesteps(999, 50)[-3:])
    print("energy distance sanity:", energy_distance(torch.randn(500, 2), torch.randn(500, 2) + 3))
    assert math.isclose(float(y[0, 0]), 157.410457, rel_tol=1e-7)
    family_self_check()
