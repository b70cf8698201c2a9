// exact_ode.cpp — the Gaussian mixture's probability-flow ODE in sigma (exact_ode.h), Boost.Odeint dopri5.
#include "diffusion/exact_ode.h"

#include <algorithm>
#include <boost/numeric/odeint.hpp>
#include <cmath>
#include <stdexcept>

namespace diffscope {

namespace {

// eps of the components of class cls (-1: all) at the VE state x and level sigma (SEMANTICS §6), into dx.
void mixture_ve_eps(const GaussianMixture& m, const std::vector<double>& x, double sigma, int cls,
                    std::vector<double>& logg, std::vector<double>& dx) {
  const int d = m.dim;
  double best = -INFINITY;
  for (int k = 0; k < m.K; ++k) {
    if (!m.in_class(k, cls)) {
      logg[k] = -INFINITY;
      continue;
    }
    const double v = m.stds[k] * m.stds[k] + sigma * sigma;
    double d2 = 0;
    for (int j = 0; j < d; ++j) d2 += std::pow(x[j] - m.means[k * d + j], 2);
    logg[k] = std::log(m.weights[k]) - 0.5 * d * std::log(v) - d2 / (2 * v);
    best = std::max(best, logg[k]);
  }
  double total = 0;
  for (int k = 0; k < m.K; ++k) total += (logg[k] = std::exp(logg[k] - best));
  std::fill(dx.begin(), dx.end(), 0.0);
  for (int k = 0; k < m.K; ++k) {
    if (!m.in_class(k, cls)) continue;
    const double v = m.stds[k] * m.stds[k] + sigma * sigma, g = logg[k] / total;
    for (int j = 0; j < d; ++j) dx[j] += sigma * g * (x[j] - m.means[k * d + j]) / v;
  }
}

}  // namespace

std::vector<double> mixture_ode_solve(const GaussianMixture& m, const double* x_vp, int n, double sigma_from,
                                      double sigma_to, double tol, const Guidance& g) {
  namespace ode = boost::numeric::odeint;
  using State = std::vector<double>;
  if (g.rescale != 0.0) throw std::invalid_argument("mixture_ode_solve: guidance rescale has no exact ODE in eps");
  const int d = m.dim;
  std::vector<double> logg(m.K), uncond(static_cast<size_t>(d));
  // dx/dsigma for one row (SEMANTICS §6, §12, exact_ode.h).
  auto rhs = [&](const State& x, State& dx, double sigma) {
    const double w = g.weight_at_sigma(sigma);
    mixture_ve_eps(m, x, sigma, w == 0.0 ? -1 : g.class_label, logg, dx);
    if (w == 0.0 || w == 1.0) return;
    mixture_ve_eps(m, x, sigma, -1, logg, uncond);
    for (int j = 0; j < d; ++j) dx[j] = uncond[j] + w * (dx[j] - uncond[j]);
  };
  std::vector<double> out(static_cast<size_t>(n) * d);
  const double scale = std::sqrt(1.0 + sigma_from * sigma_from);  // x_ve = x_vp / sqrt(abar)
  for (int i = 0; i < n; ++i) {
    State x(x_vp + static_cast<size_t>(i) * d, x_vp + static_cast<size_t>(i + 1) * d);
    for (double& v : x) v *= scale;
    const double dt0 = (sigma_to - sigma_from) * 1e-3;
    ode::integrate_adaptive(ode::make_controlled(tol, tol, ode::runge_kutta_dopri5<State>()), rhs, x, sigma_from,
                            sigma_to, dt0);
    std::copy(x.begin(), x.end(), out.begin() + static_cast<size_t>(i) * d);
  }
  return out;
}

}  // namespace diffscope
