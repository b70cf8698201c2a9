// random_weights.cpp — seeded nn.Linear-like networks and the relative error (see random_weights.h).
#include "model/random_weights.h"

#include <cmath>
#include <limits>
#include <random>

namespace diffscope {
namespace {

void fill_uniform(std::mt19937& rng, std::vector<float>& v, size_t n, int fan_in) {
  const float bound = 1.0f / std::sqrt(static_cast<float>(fan_in));
  std::uniform_real_distribution<float> u(-bound, bound);
  v.resize(n);
  for (float& x : v) x = u(rng);
}

}  // namespace

DiffusionModel make_random_model(int dim, int hidden, uint32_t seed) {
  DiffusionModel m;
  m.net.dim = dim;
  m.net.hidden = hidden;
  std::mt19937 rng(seed);
  fill_uniform(rng, m.net.W1, size_t(hidden) * (dim + 1), dim + 1);
  fill_uniform(rng, m.net.b1, hidden, dim + 1);
  fill_uniform(rng, m.net.W2, size_t(hidden) * hidden, hidden);
  fill_uniform(rng, m.net.b2, hidden, hidden);
  fill_uniform(rng, m.net.W3, size_t(dim) * hidden, hidden);
  fill_uniform(rng, m.net.b3, dim, hidden);
  m.schedule = Schedule::linear(1000);
  return m;
}

Mlp3Weights make_random_mlp3(int d0, int d1, int d2, int d3, uint32_t seed) {
  Mlp3Weights w;
  w.d0 = d0, w.d1 = d1, w.d2 = d2, w.d3 = d3;
  std::mt19937 rng(seed);
  fill_uniform(rng, w.W1, size_t(d1) * d0, d0);
  fill_uniform(rng, w.W2, size_t(d2) * d1, d1);
  fill_uniform(rng, w.W3, size_t(d3) * d2, d2);
  return w;
}

double relative_frobenius_error(const std::vector<float>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    if (!std::isfinite(a[i])) return std::numeric_limits<double>::infinity();
    const double d = a[i] - b[i];
    num += d * d;
    den += b[i] * b[i];
  }
  return std::sqrt(num / den);
}

}  // namespace diffscope
