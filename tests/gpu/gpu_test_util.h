// gpu_test_util.h — shared helpers of the GPU tests: skip without a device, NaN poisoning, the float64 judge.
#pragma once
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "diffusion/cpu_reference.h"
#include "diffusion/step_table.h"
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

// Runs `tab` on the GPU in three launches (the previous data prediction kept by the caller across them) and in
// float64 on the CPU (cpu_ref::run_steps, the same Philox noise: seed, rows from row_offset); returns the relative
// errors of the final state and of the frames.
inline std::pair<double, double> gpu_vs_float64(CudaBackend& be, const DiffusionModel& m, const StepTable& tab,
                                                const std::vector<float>& x0, int B, Precision p,
                                                uint64_t seed = 0xfa111e5ull, uint32_t row_offset = 5) {
  const int dim = m.net.dim, N = tab.steps(), third = N / 3;
  std::vector<double> xd = widen(x0), framesd(size_t(N) * B * dim), prevd(xd.size());
  cpu_ref::run_steps<double>(m, tab, 0, N, xd.data(), B, seed, framesd.data(), row_offset, prevd.data());
  std::vector<float> x = x0, frames(size_t(N) * B * dim, nan_f()), prev(x.size(), nan_f());
  const size_t fs = size_t(B) * dim;
  be.run_steps(m, tab, 0, third, x.data(), B, seed, frames.data(), p, row_offset, prev.data());
  be.run_steps(m, tab, third, 2 * third, x.data(), B, seed, frames.data() + third * fs, p, row_offset, prev.data());
  be.run_steps(m, tab, 2 * third, N, x.data(), B, seed, frames.data() + 2 * third * fs, p, row_offset, prev.data());
  return {rel_err(x, xd), rel_err(frames, framesd)};
}

// Whether the plan can run `path` for this shape and precision on this machine's device, default kernel options.
inline bool path_supported(kernels::DenoisePath path, int dim, int hidden, int B, Precision p) {
  kernels::DenoiseProblem pr;
  pr.B = B, pr.dim = dim, pr.hidden = hidden;
  return kernels::denoise_path_supported(path, pr, p, CudaBackend().device_caps(), {});
}

// Relative Frobenius error of a solver-kernel run (20-50 steps, random weights of scale 0.5) against float64,
// SEMANTICS §8 "Tolerances": fp32 1e-5, tf32 and fp16 1.5e-4, bf16 1e-3 (about 4x the largest measured on the H200:
// tf32 / fp16 3.5e-5, bf16 2.7e-4).
inline double solver_tolerance(Precision p) {
  return p == Precision::Fp32 ? 1e-5 : p == Precision::Bf16 ? 1e-3 : 1.5e-4;
}

}  // namespace diffscope::test
