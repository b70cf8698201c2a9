// gpu_test_util.h — shared helpers of the GPU tests: skip without a device, NaN poisoning, the float64 judge.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "gpu/cuda_backend.h"
#include "gpu/gpu_buffer.h"
#include "../core/model_fixtures.h"

#define SKIP_WITHOUT_CUDA() \
  if (!::diffscope::cuda_device_available()) GTEST_SKIP() << "no CUDA device"

namespace diffscope::test {

inline float nan_f() { return std::numeric_limits<float>::quiet_NaN(); }

// Relative Frobenius error; NaN anywhere in `a` gives +inf (so an unwritten element fails).
template <class B>
double rel_err(const std::vector<float>& a, const std::vector<B>& b) {
  for (float v : a)
    if (!std::isfinite(v)) return std::numeric_limits<double>::infinity();
  return rel_frobenius(a, b);
}

inline std::vector<double> widen(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// Standard-normal-ish inputs (uniform [-1, 1] scaled): never zeros.
inline std::vector<float> random_x(size_t n, uint32_t seed, float scale = 1.5f) {
  std::vector<float> v = random_values(n, seed);
  for (float& x : v) x *= scale;
  return v;
}

// Sets an environment variable for the scope (the kernels' benchmarking knobs are read at each launch).
struct ScopedEnv {
  std::string name;
  ScopedEnv(const char* n, const std::string& v) : name(n) { setenv(n, v.c_str(), 1); }
  ~ScopedEnv() { unsetenv(name.c_str()); }
};

}  // namespace diffscope::test
