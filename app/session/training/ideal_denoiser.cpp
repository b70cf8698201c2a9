// ideal_denoiser.cpp — the empirical distribution's exact denoiser of ideal_denoiser.h.
#include "session/training/ideal_denoiser.h"

#include <algorithm>
#include <cmath>

namespace diffscope {

void ideal_denoiser(const std::vector<float>& data, int dim, const std::vector<double>& x, double alpha,
                    double sigma, std::vector<double>& x0) {
  const size_t m = data.size() / size_t(dim), n = x.size() / size_t(dim);
  x0.assign(x.size(), 0.0);
  std::vector<double> logw(m);
  for (size_t r = 0; r < n; ++r) {
    const double* xr = &x[r * size_t(dim)];
    double top = -INFINITY;
    for (size_t i = 0; i < m; ++i) {
      double d2 = 0;
      for (int j = 0; j < dim; ++j) {
        const double e = xr[j] - alpha * double(data[i * size_t(dim) + size_t(j)]);
        d2 += e * e;
      }
      logw[i] = -d2 / (2 * sigma * sigma);
      top = std::max(top, logw[i]);
    }
    double total = 0;
    double* out = &x0[r * size_t(dim)];
    for (size_t i = 0; i < m; ++i) {
      const double w = std::exp(logw[i] - top);  // the largest weight is 1: no overflow, no total of 0
      total += w;
      for (int j = 0; j < dim; ++j) out[j] += w * double(data[i * size_t(dim) + size_t(j)]);
    }
    for (int j = 0; j < dim; ++j) out[j] /= total;
  }
}

std::vector<float> ideal_samples(const std::vector<float>& data, int dim, const std::vector<float>& z,
                                 const std::vector<std::pair<double, double>>& levels) {
  std::vector<double> x(z.begin(), z.end()), x0;
  for (size_t k = 0; k < levels.size(); ++k) {
    const auto [alpha, sigma] = levels[k];
    ideal_denoiser(data, dim, x, alpha, std::max(sigma, 1e-12), x0);
    if (k + 1 == levels.size()) {
      x = x0;
      break;
    }
    const auto [a2, s2] = levels[k + 1];
    for (size_t i = 0; i < x.size(); ++i) {
      const double eps = (x[i] - alpha * x0[i]) / std::max(sigma, 1e-12);
      x[i] = a2 * x0[i] + s2 * eps;
    }
  }
  return std::vector<float>(x.begin(), x.end());
}

}  // namespace diffscope
