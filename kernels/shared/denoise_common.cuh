// denoise_common.cuh — per-row step bookkeeping shared by the denoiser kernels (SEMANTICS §3, §4, §7).
#pragma once
#include <cstdint>

#include "kernels/kernels.h"

namespace diffscope::kernels {

// Coefficients of one row at one step. active == false: frozen (idx < 0), nothing read from the table.
struct RowStep {
  bool active;
  int t;
  float A, C, S, tt;  // tt = t / T, the network's time input
};

__device__ __forceinline__ RowStep row_step(const DenoiseArgs& a, int row, int k) {
  RowStep r{false, 0, 0.f, 0.f, 0.f, 0.f};
  if (row >= a.B) return r;
  const int idx = a.row_t ? __ldg(a.row_t + row) - (k - a.k_begin) : k;
  if (idx < 0) return r;
  r.active = true;
  r.t = __ldg(a.tab.t + idx);
  r.A = __ldg(a.tab.A + idx);
  r.C = __ldg(a.tab.C + idx);
  r.S = __ldg(a.tab.S + idx);
  r.tt = static_cast<float>(r.t) / static_cast<float>(a.tab.T);
  return r;
}

// Step coefficients read a chunk of steps at a time by a whole CTA: thread i loads the RowStep of step
// kk + i / rows, row i % rows (inactive past k_end), so no global read is left inside a step.
__device__ __forceinline__ RowStep chunk_row_step(const DenoiseArgs& a, int rows, int kk) {
  const int k = kk + static_cast<int>(threadIdx.x) / rows;
  RowStep r{false, 0, 0.f, 0.f, 0.f, 0.f};
  if (k < a.k_end) r = row_step(a, static_cast<int>(threadIdx.x) % rows, k);
  return r;
}

// At the first step k of a chunk: after a barrier (the previous chunk is no longer read) publish the loaded chunk
// to cf / cft (A, C, S, t/T; t or -1 when frozen), one entry per thread, and start loading the next chunk.
__device__ __forceinline__ void advance_coef_chunk(const DenoiseArgs& a, int rows, int k, float4* cf, int* cft,
                                                   RowStep& next) {
  __syncthreads();
  cf[threadIdx.x] = make_float4(next.A, next.C, next.S, next.tt);
  cft[threadIdx.x] = next.active ? next.t : -1;
  next = chunk_row_step(a, rows, k + static_cast<int>(blockDim.x) / rows);
}

}  // namespace diffscope::kernels

// A (B, dim) row-major matrix <-> one thread's share of an mma accumulator tile (mma.cuh): rows[0] / rows[1] are
// the thread's rows g / g + 8, v[4 nb + e] is element (rows[e >> 1], 8 nb + 2q + (e & 1)) for NB n8 blocks.
// Elements outside B x dim load as 0 and are not stored.
template <int NB>
__device__ __forceinline__ void load_acc_rows(float* v, const float* src, const int* rows, int q, int B, int dim) {
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = rows[e >> 1], c = nb * 8 + 2 * q + (e & 1);
      v[4 * nb + e] = (r < B && c < dim) ? src[static_cast<size_t>(r) * dim + c] : 0.f;
    }
}
template <int NB>
__device__ __forceinline__ void store_acc_rows(const float* v, float* dst, const int* rows, int q, int B, int dim) {
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = rows[e >> 1], c = nb * 8 + 2 * q + (e & 1);
      if (r < B && c < dim) dst[static_cast<size_t>(r) * dim + c] = v[4 * nb + e];
    }
}
