// model_fixtures.h — in-memory models for the core and CLI tests: zero networks (closed forms) and
// seeded random networks (PyTorch nn.Linear-like uniform init), on the default linear schedule.
#pragma once
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "model/model.h"
#include "model/schedule.h"

namespace diffscope::test {

// All weights and biases zero except b3 = last_bias: eps(x, t) = last_bias for every input.
inline DiffusionModel constant_eps_model(int dim, int hidden, float last_bias, int T = 1000) {
  DiffusionModel m;
  m.net.dim = dim;
  m.net.hidden = hidden;
  m.net.W1.assign(static_cast<size_t>(hidden) * (dim + 1), 0.f);
  m.net.b1.assign(hidden, 0.f);
  m.net.W2.assign(static_cast<size_t>(hidden) * hidden, 0.f);
  m.net.b2.assign(hidden, 0.f);
  m.net.W3.assign(static_cast<size_t>(dim) * hidden, 0.f);
  m.net.b3.assign(dim, last_bias);
  m.schedule = Schedule::linear(T);
  return m;
}

// Uniform(-gain/sqrt(fan_in), gain/sqrt(fan_in)) weights and biases, like nn.Linear's default init.
inline DiffusionModel random_model(int dim, int hidden, uint32_t seed, float gain = 1.f, int T = 1000) {
  DiffusionModel m = constant_eps_model(dim, hidden, 0.f, T);
  std::mt19937 rng(seed);
  auto fill = [&](std::vector<float>& v, int fan_in) {
    std::uniform_real_distribution<float> u(-gain / std::sqrt(float(fan_in)), gain / std::sqrt(float(fan_in)));
    for (float& w : v) w = u(rng);
  };
  fill(m.net.W1, dim + 1);
  fill(m.net.b1, dim + 1);
  fill(m.net.W2, hidden);
  fill(m.net.b2, hidden);
  fill(m.net.W3, hidden);
  fill(m.net.b3, hidden);
  return m;
}

// n values uniform in [-1, 1], seeded.
inline std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

// Relative Frobenius difference |a - b| / |b|.
template <class A, class B>
double rel_frobenius(const std::vector<A>& a, const std::vector<B>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = double(a[i]) - double(b[i]);
    num += d * d;
    den += double(b[i]) * double(b[i]);
  }
  return std::sqrt(num / den);
}

}  // namespace diffscope::test
