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
#include "model_fixtures.h"

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

// Whether the plan can run `path` for this shape and precision on this machine's device, default kernel options.
inline bool path_supported(kernels::DenoisePath path, int dim, int hidden, int B, Precision p) {
  kernels::DenoiseProblem pr;
  pr.B = B, pr.dim = dim, pr.hidden = hidden;
  return kernels::denoise_path_supported(path, pr, p, CudaBackend().device_caps(), {});
}

}  // namespace diffscope::test
