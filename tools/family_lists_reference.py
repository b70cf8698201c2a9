"""family_lists_reference.py — the noise-level lists of diffusers' flow and EDM schedulers, computed with the very
torch and numpy operations of diffusers' code (its __init__ / set_timesteps lines, re-typed here without the rest of
the scheduler classes), as golden data for tests/model/test_family.cpp (SEMANTICS §3 "Noise-level lists of the
families"). Needs torch and numpy (no diffusers):

    python3 tools/family_lists_reference.py --out tests/data/family/diffusers_lists.json

Sources (diffusers, src/diffusers/schedulers/): scheduling_flow_match_euler_discrete.py
FlowMatchEulerDiscreteScheduler.__init__, set_timesteps, time_shift, stretch_shift_to_terminal;
scheduling_dpmsolver_multistep.py DPMSolverMultistepScheduler.set_timesteps (use_flow_sigmas, final_sigmas_type
zero); scheduling_edm_euler.py EDMEulerScheduler.set_timesteps, _compute_karras_sigmas,
_compute_exponential_sigmas, precondition_noise.
"""
import argparse
import json
import math

import numpy as np
import torch


def flow_match_euler(T, shift, n, dynamic=False, mu=None, shift_terminal=None):
    # __init__
    timesteps = np.linspace(1, T, T, dtype=np.float32)[::-1].copy()
    timesteps = torch.from_numpy(timesteps).to(dtype=torch.float32)
    sigmas = timesteps / T
    if not dynamic:
        sigmas = shift * sigmas / (1 + (shift - 1) * sigmas)
    sigma_min, sigma_max = sigmas[-1].item(), sigmas[0].item()
    # set_timesteps
    ts = np.linspace(sigma_max * T, sigma_min * T, n)
    s = ts / T
    if dynamic:
        s = math.exp(mu) / (math.exp(mu) + (1 / s - 1) ** 1.0)
    else:
        s = shift * s / (1 + (shift - 1) * s)
    if shift_terminal:
        one_minus_z = 1 - s
        scale_factor = one_minus_z[-1] / (1 - shift_terminal)
        s = 1 - (one_minus_z / scale_factor)
    s = torch.from_numpy(s).to(dtype=torch.float32)
    t = s * T
    s = torch.cat([s, torch.zeros(1)])
    return {"T": T, "shift": shift, "n": n, "dynamic": dynamic, "mu": mu, "shift_terminal": shift_terminal or 0.0,
            "sigmas": s.tolist(), "timesteps": t.tolist()}


def dpm_flow(T, flow_shift, n):
    alphas = np.linspace(1, 1 / T, n + 1)
    sigmas = 1.0 - alphas
    sigmas = np.flip(flow_shift * sigmas / (1 + (flow_shift - 1) * sigmas))[:-1].copy()
    timesteps = (sigmas * T).copy()
    sigmas = np.concatenate([sigmas, [0]]).astype(np.float32)
    return {"T": T, "flow_shift": flow_shift, "n": n, "sigmas": [float(v) for v in sigmas],
            "timesteps": torch.from_numpy(timesteps).to(dtype=torch.int64).tolist()}


def edm(schedule, n, sigma_min=0.002, sigma_max=80.0, rho=7.0):
    ramp = torch.linspace(0, 1, n, dtype=torch.float64)
    if schedule == "karras":
        min_inv_rho, max_inv_rho = sigma_min ** (1 / rho), sigma_max ** (1 / rho)
        sigmas = (max_inv_rho + ramp * (min_inv_rho - max_inv_rho)) ** rho
    else:
        sigmas = torch.linspace(math.log(sigma_min), math.log(sigma_max), len(ramp)).exp().flip(0)
    sigmas = sigmas.to(dtype=torch.float32)
    c_noise = 0.25 * torch.log(sigmas)
    sigmas = torch.cat([sigmas, torch.full((1,), fill_value=0.0)])
    return {"schedule": schedule, "n": n, "sigma_min": sigma_min, "sigma_max": sigma_max, "rho": rho,
            "sigmas": sigmas.tolist(), "timesteps": c_noise.tolist()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    out = {"torch": torch.__version__, "numpy": np.__version__,
           "flow_match_euler": [flow_match_euler(1000, sh, n) for sh in (1.0, 1.73, 3.0, 6.0, 12.0)
                                for n in (1, 2, 4, 28, 50, 1000)],
           "dpm_flow": [dpm_flow(1000, sh, n) for sh in (1.0, 3.0, 5.0, 12.0) for n in (1, 5, 20, 50)],
           "edm": [edm(s, n) for s in ("karras", "exponential") for n in (1, 2, 5, 18, 40)]}
    out["flow_match_euler"] += [flow_match_euler(1000, 1.0, 10, dynamic=True, mu=1.15),
                                flow_match_euler(1000, 3.0, 8, shift_terminal=0.1),
                                flow_match_euler(500, 3.0, 20)]
    with open(a.out, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
