// exact_ode.h — the exact probability-flow ODE sample of an analytic Gaussian-mixture model (SEMANTICS §6),
// the answer every deterministic solver converges to.
#pragma once
#include <vector>

#include "diffusion/guidance.h"
#include "model/gaussian_mixture.h"

namespace diffscope {

// In sigma = sqrt((1 - abar) / abar) and the variance-exploding state x = x_t / sqrt(abar), the mixture's
// probability-flow ODE is schedule-free: dx/dsigma = sigma sum_k g_k(x) (x - mu_k) / (s_k^2 + sigma^2),
// g_k the posterior weights of N(mu_k, (s_k^2 + sigma^2) I). Integrates each row of the VP state x_vp
// (n, dim) from sigma_from to sigma_to (>= 0) with Boost.Odeint's adaptive Dormand-Prince 5(4) at
// absolute and relative tolerance `tol`; returns the VE state (n, dim) at sigma_to. With guidance (SEMANTICS §12)
// the right-hand side is the guided eps: eps_u + w (eps_c - eps_u), eps_c the mixture of class g.class_label's
// components, eps_u the whole mixture, w = g.weight_at_sigma(sigma) (eps_c alone at w = 1); g.rescale must be 0
// (std::invalid_argument: the rescale acts on the family's output, not on eps).
std::vector<double> mixture_ode_solve(const GaussianMixture& m, const double* x_vp, int n, double sigma_from,
                                      double sigma_to, double tol = 1e-10, const Guidance& g = {});

}  // namespace diffscope
