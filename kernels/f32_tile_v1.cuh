// f32_tile_v1.cuh — session 5's fp32 tile, kept for the A/B against f32_tile.cuh (DIFFSCOPE_F32_TILE=v1); the fp32 FMA network evaluation of a 64-row tile (denoise_f32.cu, denoise_solver_f32.cu): activations
// in shared memory, transposed ([unit][row], row stride kLda floats); weights stream through a double-buffered
// shared-memory stage (cp.async, kKc rows of W^T per chunk) from L2. Each thread owns a 4-row x 16-column register
// tile (4 + 16 floats loaded per 64 FMAs). Layer 3 (dim outputs) uses a 4x4 tile for dim % 4 == 0, or splits k over
// 16 lanes with a shuffle reduction for dim <= 4. SiLU with accurate expf (matches float64 to fp32 rounding).
// hidden == 256 only (f32_tile_supported).
#pragma once
#include <cuda_runtime.h>

#include "kernels/kernels.h"
#include "kernels/mma.cuh"

namespace diffscope::kernels::f32tile_v1 {

constexpr int kThreads = 256, kR = 64, kLda = 68, kKc = 32, kH = 256;

inline bool f32_tile_supported(int dim, int hidden) {
  return hidden == kH && dim >= 1 && (dim <= 4 || (dim % 4 == 0 && dim <= 64));
}
// Dynamic shared memory of a tile kernel: h1T, h2T [256][68], the weight stage [2][kKc][256], uT [dim+1][68].
inline size_t smem_bytes(int dim) {
  return sizeof(float) * (2 * kH * kLda + 2 * kKc * kH + static_cast<size_t>(dim + 1) * kLda);
}

// The tile's shared-memory arrays, carved from the dynamic shared memory.
struct Tile {
  float *h1T, *h2T, *wbuf, *uT;
  __device__ explicit Tile(float* smem) : h1T(smem), h2T(smem + kH * kLda), wbuf(h2T + kH * kLda), uT(wbuf + 2 * kKc * kH) {}
};

// x rows [row0, row0 + nrows) of a (B, dim) matrix into uT (rows past nrows zero) / uT's rows out to dst (the
// tile's first row). Callers sync around them.
__device__ __forceinline__ void load_tile_x(const Tile& t, const float* x, int row0, int nrows, int dim) {
  for (int i = threadIdx.x; i < kR * dim; i += kThreads) {
    const int r = i / dim, d = i % dim;
    t.uT[d * kLda + r] = r < nrows ? x[static_cast<size_t>(row0 + r) * dim + d] : 0.f;
  }
}
__device__ __forceinline__ void store_tile_x(const Tile& t, float* dst, int nrows, int dim) {
  for (int i = threadIdx.x; i < nrows * dim; i += kThreads) dst[i] = t.uT[(i % dim) * kLda + i / dim];
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;"); }
template <int N>
__device__ __forceinline__ void cp_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N));
}

// acc[i][g*4+e] += sum_k inT[k][ty*4+i] * WT[k][g*64 + tx*4 + e] for k < K; WT (K, N) in global memory, N % 4 == 0,
// streamed in chunks of kKc rows through wbuf (2 stages of kKc*N floats). CG column groups of 64 (N <= 64 CG).
template <int CG>
__device__ __forceinline__ void f32_layer(const float* inT, int K, const float* __restrict__ WT, int N, float* wbuf,
                                          float (&acc)[4][4 * CG]) {
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const int nchunks = (K + kKc - 1) / kKc;
  auto issue = [&](int c) {
    const int k0 = c * kKc, rows = min(kKc, K - k0);
    const float4* src = reinterpret_cast<const float4*>(WT + static_cast<size_t>(k0) * N);
    float4* dst = reinterpret_cast<float4*>(wbuf + (c & 1) * kKc * kH);
    for (int i = threadIdx.x; i < rows * N / 4; i += kThreads) cp_async16(dst + i, src + i);
    cp_commit();
  };
  issue(0);
  for (int c = 0; c < nchunks; ++c) {
    if (c + 1 < nchunks) {
      issue(c + 1);
      cp_wait<1>();
    } else {
      cp_wait<0>();
    }
    __syncthreads();
    const float* wb = wbuf + (c & 1) * kKc * kH;
    const int k0 = c * kKc, rows = min(kKc, K - k0);
#pragma unroll 4
    for (int kk = 0; kk < rows; ++kk) {
      const float4 a = *reinterpret_cast<const float4*>(inT + (k0 + kk) * kLda + ty * 4);
      const float av[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
      for (int g = 0; g < CG; ++g) {
        const float4 b = *reinterpret_cast<const float4*>(wb + kk * N + g * 64 + tx * 4);
        const float bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][g * 4 + e] = fmaf(av[i], bv[e], acc[i][g * 4 + e]);
      }
    }
    __syncthreads();
  }
}

// eps of the tile's 64 rows (x in uT rows 0..dim-1, the time input in row dim) -> epi(r, g, e): e[i] is eps of
// row r, dim 4g + i (only i with 4g + i < dim are meaningful), one call per (r, g) by one thread. Layers 1-2 end
// with barriers; epi may rewrite uT's x rows (layer 3 reads only h2T). The caller syncs before uT is read again.
template <class Epi>
__device__ __forceinline__ void f32_eval(const DeviceNet& net, const Tile& t, Epi&& epi) {
  const int dim = net.dim, K1 = dim + 1;
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const bool ksplit = dim <= 4;
  // layers 1 and 2: 64 x 256 outputs, SiLU, stored transposed
  for (int layer = 0; layer < 2; ++layer) {
    const float* inT = layer == 0 ? t.uT : t.h1T;
    float* outT = layer == 0 ? t.h1T : t.h2T;
    const float* bias = layer == 0 ? net.b1 : net.b2;
    float acc[4][16];
#pragma unroll
    for (int g = 0; g < 4; ++g) {
      const float4 b = __ldg(reinterpret_cast<const float4*>(bias + g * 64 + tx * 4));
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        acc[i][g * 4 + 0] = b.x;
        acc[i][g * 4 + 1] = b.y;
        acc[i][g * 4 + 2] = b.z;
        acc[i][g * 4 + 3] = b.w;
      }
    }
    f32_layer<4>(inT, layer == 0 ? K1 : kH, layer == 0 ? net.W1T : net.W2T, kH, t.wbuf, acc);
#pragma unroll
    for (int g = 0; g < 4; ++g)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = g * 64 + tx * 4 + e;
        *reinterpret_cast<float4*>(outT + j * kLda + ty * 4) =
            make_float4(silu_exact(acc[0][g * 4 + e]), silu_exact(acc[1][g * 4 + e]), silu_exact(acc[2][g * 4 + e]),
                        silu_exact(acc[3][g * 4 + e]));
      }
  }
  __syncthreads();
  // layer 3 -> epi
  if (!ksplit) {
    float acc[4][4];
    const bool own = tx * 4 < dim;
    const float4 b = own ? __ldg(reinterpret_cast<const float4*>(net.b3 + tx * 4)) : make_float4(0, 0, 0, 0);
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[i][0] = b.x, acc[i][1] = b.y, acc[i][2] = b.z, acc[i][3] = b.w;
    f32_layer<1>(t.h2T, kH, net.W3T, dim, t.wbuf, acc);
    if (own) {
#pragma unroll
      for (int i = 0; i < 4; ++i) epi(ty * 4 + i, tx, acc[i]);
    }
  } else {
    float acc[4][4] = {};
    for (int kk = tx; kk < kH; kk += 16) {
      const float4 av = *reinterpret_cast<const float4*>(t.h2T + kk * kLda + ty * 4);
      const float ar[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
      for (int d = 0; d < 4; ++d) {
        const float w = d < dim ? __ldg(net.W3T + kk * dim + d) : 0.f;
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i][d] = fmaf(ar[i], w, acc[i][d]);
      }
    }
#pragma unroll
    for (int off = 8; off >= 1; off >>= 1)
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int d = 0; d < 4; ++d) acc[i][d] += __shfl_xor_sync(0xffffffffu, acc[i][d], off);
    // Every lane of the 16 now holds the four rows' sums: lane tx < 4 finishes row ty * 4 + tx, so the epilogue's
    // work (a solver's Philox draw and Box-Muller, SEMANTICS §7) runs on four lanes at once instead of one after
    // the other on lane 0 (issue 15: the stochastic solvers' per-evaluation cost).
    if (tx < 4) {
      float e[4];
#pragma unroll
      for (int d = 0; d < 4; ++d) {
        e[d] = acc[0][d];
#pragma unroll
        for (int i = 1; i < 4; ++i) e[d] = tx == i ? acc[i][d] : e[d];  // acc[tx][d] without local memory
        e[d] += d < dim ? __ldg(net.b3 + d) : 0.f;
      }
      epi(ty * 4 + tx, 0, e);
    }
  }
}

// The kernels' policy interface (f32_tile.cuh's F32Tile): this tile as it was before session 6.
struct F32TileV1 {
  static constexpr int NT = kThreads, R = kR, LD = kLda;
  using TileT = Tile;
  static size_t smem_bytes(int dim) { return f32tile_v1::smem_bytes(dim); }
  struct Stream {
    __device__ Stream(const DeviceNet&, const Tile&) {}
    __device__ void finish() {}
  };
  static __device__ __forceinline__ void load_x(const Tile& t, const float* x, int row0, int nrows, int dim) {
    load_tile_x(t, x, row0, nrows, dim);
  }
  static __device__ __forceinline__ void store_x(const Tile& t, float* dst, int nrows, int dim) {
    store_tile_x(t, dst, nrows, dim);
  }
  template <class Epi>
  static __device__ __forceinline__ void eval(const DeviceNet& net, const Tile& t, Stream&, Epi&& epi) {
    f32_eval(net, t, epi);
  }
};

}  // namespace diffscope::kernels::f32tile_v1
