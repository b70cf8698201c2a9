// denoise_common.cuh — per-row step bookkeeping shared by the denoiser kernels (SEMANTICS §3, §4, §7).
#pragma once
#include <cstdint>

#include "kernels/kernels.h"

namespace diffscope::kernels {

// Coefficients of one row at one step. active == false: frozen (idx < 0), nothing read from the table.
struct RowStep {
  bool active;
  int t;
  float A, B, S, tt;  // tt = t / T, the network's time input
};

__device__ __forceinline__ RowStep row_step(const DenoiseArgs& a, int row, int k) {
  RowStep r{false, 0, 0.f, 0.f, 0.f, 0.f};
  if (row >= a.B) return r;
  const int idx = a.row_t ? __ldg(a.row_t + row) - (k - a.k_begin) : k;
  if (idx < 0) return r;
  r.active = true;
  r.t = __ldg(a.tab.t + idx);
  r.A = __ldg(a.tab.A + idx);
  r.B = __ldg(a.tab.B + idx);
  r.S = __ldg(a.tab.S + idx);
  r.tt = static_cast<float>(r.t) / static_cast<float>(a.tab.T);
  return r;
}

}  // namespace diffscope::kernels
