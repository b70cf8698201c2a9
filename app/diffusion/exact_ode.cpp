// exact_ode.cpp — the Gaussian mixture's probability-flow ODE in sigma (exact_ode.h), Boost.Odeint dopri5.
#include "diffusion/exact_ode.h"

#include <algorithm>
#include <boost/numeric/odeint.hpp>
#include <cmath>

namespace diffscope {

std::vector<double> mixture_ode_solve(const GaussianMixture& m, const double* x_vp, int n, double sigma_from,
                                      double sigma_to, double tol) {
  namespace ode = boost::numeric::odeint;
  using State = std::vector<double>;
  const int d = m.dim;
  std::vector<double> logg(m.K);
  // dx/dsigma for one row (SEMANTICS §6, exact_ode.h).
  auto rhs = [&](const State& x, State& dx, double sigma) {
    double best = -INFINITY;
    for (int k = 0; k < m.K; ++k) {
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
      const double v = m.stds[k] * m.stds[k] + sigma * sigma, g = logg[k] / total;
      for (int j = 0; j < d; ++j) dx[j] += sigma * g * (x[j] - m.means[k * d + j]) / v;
    }
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
