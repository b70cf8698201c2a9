"""solvers_reference.py — float64 references of issue 15's solvers and spacings, written from the papers
(not from our C++), and the exact probability-flow ODE of a Gaussian mixture (numpy + scipy only).

    /usr/bin/python3 tools/solvers_reference.py --model assets/models/gaussians8-exact.safetensors \
        --out tests/data/solvers/golden.json          # golden data for tests/diffusion/test_solvers.cpp
    /usr/bin/python3 tools/solvers_reference.py --make-model assets/models/gaussians8.safetensors \
        --out assets/models/gaussians8-exact.safetensors    # the analytic model (SEMANTICS §6)

Sources: diffusers DDIMScheduler.set_timesteps (leading/linspace/trailing; arXiv 2305.08891 Table 2),
Karras et al. 2022 (arXiv 2206.00364) eq. 5 and Alg. 1 (heun), k-diffusion's sample_euler_ancestral /
get_ancestral_step and sample_dpmpp_2m_sde (midpoint, eta = 1), Lu et al. 2022 (arXiv 2211.01095) Alg. 2
(dpmpp-2m), Song et al. 2021 DDIM (eta = 0). The exact ODE: in sigma = sqrt((1-abar)/abar) and
x = x_t / sqrt(abar) a mixture's probability-flow ODE is dx/dsigma = sigma sum_k g_k(x) (x - mu_k) / (s_k^2 +
sigma^2), solved with scipy's DOP853 at rtol = atol = 1e-10 (atol 1e-12 for the golden targets).
"""
import argparse
import json
import struct
import sys

import numpy as np
from scipy.integrate import solve_ivp

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from philox import normal_noise  # noqa: E402
from quality_table import read_safetensors_np as read_safetensors  # noqa: E402

def write_safetensors(path, tensors, meta):
    header, blobs, off = {}, [], 0
    for name in sorted(tensors):
        raw = np.ascontiguousarray(tensors[name], dtype="<f8").tobytes()
        header[name] = {"dtype": "F64", "shape": list(tensors[name].shape), "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    header["__metadata__"] = {k: str(v) for k, v in meta.items()}
    js = json.dumps(header, separators=(",", ":")).encode()
    js += b" " * ((8 - len(js) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(js)) + js + b"".join(blobs))


def make_model(src, out):
    """gaussians8-exact: means 2 (cos k pi/4, sin k pi/4) minus gaussians8's data_offset, times its data_scale;
    s = 0.1 data_scale; weights 1/8; gaussians8's betas (its file's F32 values, stored as F64); 2048
    data_samples drawn from the mixture (numpy default_rng(0))."""
    t, meta = read_safetensors(src)
    scale = float(meta["data_scale"])
    offset = np.array([float(v) for v in meta["data_offset"].split(",")])
    k = np.arange(8)
    raw = 2.0 * np.stack([np.cos(k * np.pi / 4), np.sin(k * np.pi / 4)], axis=1)
    means = (raw - offset) * scale
    stds = np.full(8, 0.1 * scale)
    rng = np.random.default_rng(0)  # 2048 data points of the mixture, for "start from data" and the views
    comp = rng.integers(0, 8, 2048)
    data = means[comp] + stds[comp, None] * rng.standard_normal((2048, 2))
    write_safetensors(out, {"means": means, "stds": stds, "weights": np.full(8, 1.0 / 8),
                            "betas": t["betas"].astype(np.float64), "data_samples": data},
                      {"kind": "gaussian_mixture", "dataset": "gaussians8-exact", "T": len(t["betas"]),
                       "data_scale": meta["data_scale"], "data_offset": meta["data_offset"],
                       "made_with": "tools/solvers_reference.py --make-model assets/models/gaussians8.safetensors",
                       "note": "the exact 8-Gaussian mixture behind gaussians8 (SEMANTICS §6): eps is exact"})


class Mixture:
    def __init__(self, path):
        t, _ = read_safetensors(path)
        self.mu, self.s = t["means"].astype(np.float64), t["stds"].astype(np.float64)
        self.w = t["weights"] / t["weights"].sum()
        self.abar = np.cumprod(1.0 - t["betas"].astype(np.float64))
        self.T = len(self.abar)

    def eps(self, x, abar):
        """eps* = -sqrt(1-abar) grad log p_t(x), p_t = sum w_k N(sqrt(abar) mu_k, (abar s_k^2 + 1 - abar) I)."""
        d = x.shape[1]
        v = abar * self.s ** 2 + 1.0 - abar
        r = x[:, None, :] - np.sqrt(abar) * self.mu[None, :, :]
        logg = np.log(self.w)[None, :] - 0.5 * d * np.log(v)[None, :] - (r ** 2).sum(-1) / (2 * v[None, :])
        g = np.exp(logg - logg.max(1, keepdims=True))
        g /= g.sum(1, keepdims=True)
        return np.sqrt(1.0 - abar) * (g[:, :, None] * r / v[None, :, None]).sum(1)

    def ode_rhs(self, sigma, y, d):
        """dx/dsigma of the probability-flow ODE in x = x_t / sqrt(abar)."""
        x = y.reshape(-1, d)
        v = self.s ** 2 + sigma ** 2
        r = x[:, None, :] - self.mu[None, :, :]
        logg = np.log(self.w)[None, :] - 0.5 * d * np.log(v)[None, :] - (r ** 2).sum(-1) / (2 * v[None, :])
        g = np.exp(logg - logg.max(1, keepdims=True))
        g /= g.sum(1, keepdims=True)
        return (sigma * (g[:, :, None] * r / v[None, :, None]).sum(1)).ravel()

    def exact(self, x_vp, sigma_from, sigma_to, tol=1e-10):
        """The exact ODE solution at sigma_to (VE state) from the VP state x_vp at sigma_from."""
        d = x_vp.shape[1]
        y0 = (x_vp * np.sqrt(1.0 + sigma_from ** 2)).ravel()
        sol = solve_ivp(self.ode_rhs, (sigma_from, sigma_to), y0, method="DOP853", rtol=tol, atol=tol, args=(d,))
        assert sol.success, sol.message
        return sol.y[:, -1].reshape(-1, d)


# ---- spacings (diffusers DDIMScheduler.set_timesteps with num_train_timesteps = t_start + 1) --------------

def spacing_timesteps(kind, t_start, N, steps_offset=0):
    n = t_start + 1
    if kind == "default":  # ours: round(t_start (N-1-i)/(N-1)) half away from zero
        if N == 1:
            return np.array([t_start])
        return np.floor(t_start * (N - 1 - np.arange(N)) / (N - 1) + 0.5).astype(np.int64)
    if kind == "linspace":
        return np.linspace(0, n - 1, N).round()[::-1].copy().astype(np.int64)
    if kind == "leading":
        step_ratio = n // N
        return (np.arange(0, N) * step_ratio).round()[::-1].copy().astype(np.int64) + steps_offset
    if kind == "trailing":
        step_ratio = n / N
        t = np.round(np.arange(n, 0, -step_ratio)).astype(np.int64) - 1
        return t[:N]  # numpy's arange length can be N + 1 (a trailing -1, e.g. n = 1000, N = 61): dropped
    raise ValueError(kind)


def sigma_of_abar(a):
    return np.sqrt((1.0 - a) / a)


def karras(m, t_start, N, rho=7.0):
    """k-diffusion get_sigmas_karras (without its appended 0) and t(sigma) by log-sigma interpolation."""
    smin, smax = sigma_of_abar(m.abar[0]), sigma_of_abar(m.abar[t_start])
    if N == 1:
        sig = np.array([smax])
    else:
        ramp = np.linspace(0, 1, N)
        sig = (smax ** (1 / rho) + ramp * (smin ** (1 / rho) - smax ** (1 / rho))) ** rho
    log_sigmas = np.log(sigma_of_abar(m.abar))
    t = np.interp(np.log(sig), log_sigmas, np.arange(m.T))
    return sig, t


def step_list(m, spacing, t_start, N):
    """(abar per step, network t per step, noise step key per step for ddim) — abar_N = 1 is implied."""
    if spacing == "karras":
        sig, t = karras(m, t_start, N)
        return 1.0 / (1.0 + sig ** 2), t
    t = spacing_timesteps(spacing, t_start, N)
    return m.abar[t], t.astype(np.float64)


# ---- solvers, each from its source, on the VP state x_t; noise z_k with step key t_k (karras: T + 2 + k) ----

def run(m, solver, spacing, t_start, N, x, seed, frames=False):
    abar, tk = step_list(m, spacing, t_start, N)
    keys = [m.T + 2 + k if spacing == "karras" else int(tk[k]) for k in range(N)]  # SEMANTICS §7
    a = np.append(abar, 1.0)
    sig = sigma_of_abar(a)  # sig[N] = 0
    lam = -np.log(sig[:N])  # lambda = log(alpha / sigma) = -log(sigma_VE)
    out = [x.copy()]
    old_d, h_last = None, None
    for k in range(N):
        e = m.eps(x, a[k])
        D = (x - np.sqrt(1 - a[k]) * e) / np.sqrt(a[k])  # data prediction
        if solver == "ddim":  # Song et al. 2021 eq. 12, eta = 0
            x = np.sqrt(a[k + 1]) * D + np.sqrt(1 - a[k + 1]) * e
        elif solver == "euler-ancestral":  # k-diffusion, VE state
            xv = x / np.sqrt(a[k])
            s, sn = sig[k], sig[k + 1]
            su = min(sn, np.sqrt(sn ** 2 * (s ** 2 - sn ** 2) / s ** 2))
            sd = np.sqrt(sn ** 2 - su ** 2)
            xv = xv + (xv - D) / s * (sd - s)
            if sn > 0:
                xv = xv + normal_noise(seed, keys[k], x.shape[0], x.shape[1]) * su
            x = np.sqrt(a[k + 1]) * xv
        elif solver == "heun":  # Karras et al. 2022 Alg. 1, VE state; D(x; s) = x - s eps(x / sqrt(1+s^2))
            xv = x / np.sqrt(a[k])
            s, sn = sig[k], sig[k + 1]
            d = (xv - D) / s
            xn = xv + (sn - s) * d
            if sn > 0:
                e2 = m.eps(xn * np.sqrt(a[k + 1]), a[k + 1])
                d2 = e2  # (xn - D(xn; sn)) / sn
                xn = xv + (sn - s) * (0.5 * d + 0.5 * d2)
            x = np.sqrt(a[k + 1]) * xn
        elif solver == "dpmpp-2m":  # Lu et al. 2022 Alg. 2 (VP: alpha = sqrt(abar), sigma = sqrt(1 - abar))
            if k == N - 1:
                x = D
            else:
                h = np.log(np.sqrt(a[k + 1]) / np.sqrt(1 - a[k + 1])) - lam[k]
                Dd = D if old_d is None else (1 + 1 / (2 * (h_last / h))) * D - 1 / (2 * (h_last / h)) * old_d
                x = np.sqrt(1 - a[k + 1]) / np.sqrt(1 - a[k]) * x - np.sqrt(a[k + 1]) * np.expm1(-h) * Dd
                h_last = h
            old_d = D
        elif solver == "dpmpp-2m-sde":  # k-diffusion sample_dpmpp_2m_sde, midpoint, eta = 1, VE state
            if k == N - 1:
                x = D
            else:
                xv = x / np.sqrt(a[k])
                h = -np.log(sig[k + 1]) - lam[k]
                xv = sig[k + 1] / sig[k] * np.exp(-h) * xv + (-np.expm1(-2 * h)) * D
                if old_d is not None:
                    r = h_last / h
                    xv = xv + 0.5 * (-np.expm1(-2 * h)) * (1 / r) * (D - old_d)
                xv = xv + normal_noise(seed, keys[k], x.shape[0], x.shape[1]) * sig[k + 1] * np.sqrt(
                    -np.expm1(-2 * h))
                x = np.sqrt(a[k + 1]) * xv
                h_last = h
            old_d = D
        else:
            raise ValueError(solver)
        out.append(x.copy())
    return (x, out) if frames else x


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="assets/models/gaussians8-exact.safetensors")
    ap.add_argument("--make-model", help="write the gaussians8-exact model from this gaussians8 file to --out")
    ap.add_argument("--out", required=True)
    o = ap.parse_args()
    if o.make_model:
        make_model(o.make_model, o.out)
        return
    m = Mixture(o.model)
    seed, B = 7, 16
    g = {"model": o.model, "seed": seed, "rows": B, "spacings": [], "runs": [], "exact": []}
    for t_start in (999, 500, 37):
        for N in (1, 2, 7, 10, 61, 38):
            if N > t_start + 1:
                continue
            for kind in ("linspace", "leading", "trailing"):
                g["spacings"].append({"spacing": kind, "t_start": t_start, "steps": N,
                                      "t": spacing_timesteps(kind, t_start, N).tolist()})
            sig, t = karras(m, t_start, N)
            g["spacings"].append({"spacing": "karras", "t_start": t_start, "steps": N, "sigma": sig.tolist(),
                                  "t_net": t.tolist()})
    g["spacings"].append({"spacing": "leading", "t_start": 999, "steps": 10, "steps_offset": 1,
                          "t": spacing_timesteps("leading", 999, 10, 1).tolist()})
    x0 = normal_noise(seed, m.T, B, 2)  # SEMANTICS §7 start noise, step key T
    g["x_start"] = x0.ravel().tolist()
    for solver in ("ddim", "dpmpp-2m", "dpmpp-2m-sde", "euler-ancestral", "heun"):
        for spacing, t_start, N in (("default", 999, 12), ("karras", 999, 12), ("trailing", 600, 9), ("leading", 999, 1)):
            x = run(m, solver, spacing, t_start, N, x0, seed)
            g["runs"].append({"solver": solver, "spacing": spacing, "t_start": t_start, "steps": N,
                              "x": x.ravel().tolist()})
    # The exact ODE state at sigma(0) (karras' last nonzero sigma) from x_start at sigma(T-1), 64 rows.
    rows = 64
    xs = normal_noise(seed, m.T, rows, 2)
    smax, smin = sigma_of_abar(m.abar[m.T - 1]), sigma_of_abar(m.abar[0])
    g["exact"] = {"rows": rows, "sigma_from": smax, "sigma_to": smin,
                  "x_ve": m.exact(xs, smax, smin, tol=1e-12).ravel().tolist()}
    with open(o.out, "w") as f:
        json.dump(g, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
