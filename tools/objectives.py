"""objectives.py — the training objectives of tools/train_denoiser.py: what the network reads and what it is
trained to output, per model family (SEMANTICS §2 "Model families"). Plain arithmetic on array-likes (numpy
arrays, torch tensors or floats), no imports, so the closed forms can be checked without torch
(tests/tools/test_objectives.py).

A training pair is the noised state x = alpha x0 + sigma eps at a noise level (alpha, sigma) and the target o
the network learns to output there (loss = mean |o_net(x, time) - o|^2):

  epsilon       o = eps                          VP level: alpha = sqrt(abar[t]), sigma = sqrt(1 - abar[t])
  sample        o = x0                           (Ho et al. 2020; DDPM's linear schedule, time input t / T)
  v_prediction  o = alpha eps - sigma x0         (Salimans & Ho 2022 §4)
  flow          o = eps - x0                     flow level s: alpha = 1 - s, sigma = s (rectified flow as SD3,
                                                 Esser et al. 2024, and diffusers' FlowMatch schedulers;
                                                 time input s, metadata `time_input: s`)

The inverse maps (SEMANTICS §2's table; model/family.cpp output_map) give the data prediction D and eps back
from (x, o) exactly: output_to_data_and_eps.
"""

OBJECTIVES = ("epsilon", "sample", "v_prediction", "flow")
VP_OBJECTIVES = ("epsilon", "sample", "v_prediction")

# File-name suffix of a model trained with each objective: moons.safetensors, moons_sample.safetensors, ...
FILE_SUFFIX = {"epsilon": "", "sample": "_sample", "v_prediction": "_v", "flow": "_flow"}

# What the training loss is, in words (the file's `loss` metadata, after the data set's objective).
LOSS_NAME = {"epsilon": "DDPM eps-prediction MSE", "sample": "x0-prediction MSE (target x0)",
             "v_prediction": "v-prediction MSE (target v = sqrt(abar) eps - sqrt(1 - abar) x0, Salimans & Ho 2022)",
             "flow": "rectified-flow velocity MSE (x_s = (1 - s) x0 + s eps, target v = eps - x0)"}


def check_objective(objective):
    """Raises ValueError naming the value and the valid ones unless `objective` is one of OBJECTIVES."""
    if objective not in OBJECTIVES:
        raise ValueError("objective %r (valid: %s)" % (objective, ", ".join(OBJECTIVES)))
    return objective


def vp_level(abar):
    """(alpha, sigma) = (sqrt(abar), sqrt(1 - abar)) of a VP level; abar an array-like in [0, 1]."""
    return abar ** 0.5, (1 - abar) ** 0.5


def flow_level(s):
    """(alpha, sigma) = (1 - s, s) of a flow level s in [0, 1] (s = 1: pure noise)."""
    return 1 - s, s


def noised(x0, eps, alpha, sigma):
    """The state x = alpha x0 + sigma eps (alpha, sigma broadcast against x0)."""
    return alpha * x0 + sigma * eps


def target(objective, x0, eps, alpha, sigma):
    """The output the network is trained to give at the level (alpha, sigma); flow reads alpha = 1 - s."""
    if objective == "epsilon":
        return eps
    if objective == "sample":
        return x0
    if objective == "v_prediction":
        return alpha * eps - sigma * x0
    if objective == "flow":
        return eps - x0
    raise ValueError(check_objective(objective))


def output_to_data_and_eps(objective, x, o, alpha, sigma):
    """(D, eps) from the state x and the output o at (alpha, sigma) (SEMANTICS §2's output maps)."""
    if objective == "epsilon":
        return (x - sigma * o) / alpha, o
    if objective == "sample":
        return o, (x - alpha * o) / sigma
    if objective == "v_prediction":
        return alpha * x - sigma * o, sigma * x + alpha * o
    if objective == "flow":  # alpha = 1 - s, sigma = s
        return x - sigma * o, x + alpha * o
    raise ValueError(check_objective(objective))
