"""reference_module.py — the reference PyTorch modules of SEMANTICS.md, and samplers with noise from outside.

- ReferenceDenoiser (SEMANTICS §1, §2, §4): `eps_net` = nn.Sequential(Linear(dim+1, H), SiLU, Linear(H, H),
  SiLU, Linear(H, dim)) and the schedule buffers betas, alphas, alphas_cumprod, sqrt_recip_alphas, coef_eps
  (computed in float64, cast to the module's dtype). forward(x (B, dim), t_start (B,)) casts t_start to
  int64 and takes `steps` ddpm-mean steps, row b at t = t_start[b] - k; a row frozen once it has taken its
  step at t = 0. Its state_dict() is the model-file layout (§6).
- Mlp3 (§5): fc1, fc2, fc3 (nn.Linear, bias=False), y = fc3(relu(fc2(relu(fc1(x))))).
- Samplers (§3): ddim (eta), ddpm, ddpm-mean over the step lists of §3; noise is a callable
  noise(step_key, n, dim) -> tensor, e.g. tools/philox.py's normal_noise, so runs match the C++ program.

Used by tools/make_golden.py (float64 goldens) and tools/train_denoiser.py (training and previews).
"""
import math

import torch
from torch import nn


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


class ReferenceDenoiser(nn.Module):
    """The reference module: eps-network + fused multi-step ddpm-mean denoise (SEMANTICS §2, §4)."""

    def __init__(self, dim, hidden, steps=16, T=1000, beta_start=1e-4, beta_end=0.02):
        super().__init__()
        self.dim, self.hidden, self.steps, self.T = dim, hidden, steps, T
        self.eps_net = nn.Sequential(
            nn.Linear(dim + 1, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, dim))
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

    def eps(self, x, t):
        """eps-network (SEMANTICS §2). x: (B, dim); t: (B,) int64 timesteps. Input row [x, t/T]."""
        u = torch.cat([x, (t.to(x.dtype) / self.T).unsqueeze(1)], dim=1)
        return self.eps_net(u)

    def forward(self, x, t_start):
        """S = self.steps ddpm-mean steps, row b at t = t_start[b] - k; rows past t = 0 frozen (§4)."""
        t_start = t_start.to(torch.int64)
        for k in range(self.steps):
            t = t_start - k
            active = (t >= 0).unsqueeze(1)
            tc = t.clamp(min=0)
            eps = self.eps(x, tc)
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


@torch.no_grad()
def sample(model, x, sampler, t_start, n_steps, noise, eta=0.0, sched=None):
    """Runs `sampler` ('ddim' | 'ddpm' | 'ddpm-mean') from state x (n, dim) over the §3 step list.

    noise(step_key, n, dim) -> tensor like x: the noise of the step at timestep t uses step_key = t.
    sched: float64 schedule dict (default: recomputed from the model's betas). Computes in x's dtype.
    Returns the final state (n, dim)."""
    T = model.T
    check_steps(t_start, n_steps, T)
    if sched is None:
        sched = schedule_from_betas(model.betas)
    sched = {k: v.to(device=x.device, dtype=x.dtype) for k, v in sched.items()}
    n, dim = x.shape
    if sampler in ("ddpm", "ddpm-mean"):
        sigma = posterior_sigma(sched)
        for t in ddpm_timesteps(t_start, n_steps):
            tt = torch.full((n,), t, dtype=torch.int64, device=x.device)
            eps = model.eps(x, tt)
            x = sched["sqrt_recip_alphas"][t] * (x - sched["coef_eps"][t] * eps)
            if sampler == "ddpm" and t > 0:
                x = x + sigma[t] * noise(t, n, dim).to(device=x.device, dtype=x.dtype)
        return x
    if sampler != "ddim":
        raise ValueError("sampler %r: expected ddim, ddpm or ddpm-mean" % sampler)
    ts = ddim_timesteps(t_start, n_steps)
    abar = sched["alphas_cumprod"]
    for i, t in enumerate(ts):
        tt = torch.full((n,), t, dtype=torch.int64, device=x.device)
        eps = model.eps(x, tt)
        a_t = abar[t]
        a_prev = abar[ts[i + 1]] if i + 1 < len(ts) else torch.ones((), dtype=x.dtype, device=x.device)
        x0 = (x - torch.sqrt(1.0 - a_t) * eps) / torch.sqrt(a_t)
        s = eta * torch.sqrt((1.0 - a_prev) / (1.0 - a_t)) * torch.sqrt(1.0 - a_t / a_prev)
        x = torch.sqrt(a_prev) * x0 + torch.sqrt(torch.clamp(1.0 - a_prev - s * s, min=0.0)) * eps
        if eta > 0:
            x = x + s * noise(t, n, dim).to(device=x.device, dtype=x.dtype)
    return x


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
