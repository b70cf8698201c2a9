// general_layer.cuh — one dense layer for the general (any-size, fp32 FMA) kernels: a CTA of 256 threads
// (8 row groups ty x 32 column lanes tx) computes out(r, j) = b[j] + sum_k in(r, k) WT[k][j] for its R = 8 RPT
// rows. Thread (ty, tx) owns rows ty + 8i (i < RPT) and columns j0 + tx + 32c (c < 8): the weight loads are
// coalesced across the warp, the activation loads are shared-memory broadcasts.
#pragma once
#include <cstdint>

namespace diffscope::kernels {

template <int RPT, class Epi>
__device__ __forceinline__ void general_layer_epi(const float* in, int ldin, int K, const float* __restrict__ WT, int N,
                                                  const float* __restrict__ b, Epi epi) {
  const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
  for (int j0 = 0; j0 < N; j0 += 256) {
    float acc[RPT][8];
    bool ok[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) {
      const int j = j0 + tx + 32 * c;
      ok[c] = j < N;
      const float bias = (ok[c] && b) ? __ldg(b + j) : 0.f;
#pragma unroll
      for (int i = 0; i < RPT; ++i) acc[i][c] = bias;
    }
    const float* inr = in + ty * ldin;
    const float* wk = WT + j0 + tx;
#pragma unroll 4
    for (int k = 0; k < K; ++k) {
      float w[8], v[RPT];
#pragma unroll
      for (int c = 0; c < 8; ++c) w[c] = ok[c] ? __ldg(wk + static_cast<size_t>(k) * N + 32 * c) : 0.f;
#pragma unroll
      for (int i = 0; i < RPT; ++i) v[i] = inr[8 * i * ldin + k];
#pragma unroll
      for (int i = 0; i < RPT; ++i)
#pragma unroll
        for (int c = 0; c < 8; ++c) acc[i][c] = fmaf(v[i], w[c], acc[i][c]);
    }
#pragma unroll
    for (int i = 0; i < RPT; ++i)
#pragma unroll
      for (int c = 0; c < 8; ++c)
        if (ok[c]) epi(ty + 8 * i, j0 + tx + 32 * c, acc[i][c]);
  }
}

// out[r * ldo + j] = act(layer value).
template <int RPT, class Act>
__device__ __forceinline__ void general_layer(const float* in, int ldin, int K, const float* __restrict__ WT, int N,
                                              const float* __restrict__ b, float* out, int ldo, Act act) {
  general_layer_epi<RPT>(in, ldin, K, WT, N, b, [&](int r, int j, float v) { out[r * ldo + j] = act(v); });
}

// Copies rows [0, nrows) of a row tile u (row stride ldu, the first dim columns: x) to dst (nrows, dim), row-major;
// every thread of the block takes part.
__device__ inline void store_tile_rows(const float* u, int ldu, int dim, int nrows, float* __restrict__ dst) {
  for (int i = threadIdx.x; i < nrows * dim; i += blockDim.x) dst[i] = u[(i / dim) * ldu + i % dim];
}

}  // namespace diffscope::kernels
