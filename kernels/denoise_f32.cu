// denoise_f32.cu — the large-batch fused denoiser in fp32 (plain FMA, no tensor cores): one CTA per 64-row tile runs
// all steps; activations stay in shared memory, transposed ([unit][row], row stride 68 floats); weights stream
// through a double-buffered shared-memory stage (cp.async, 32 rows of W^T per chunk) from L2. Each thread owns a
// 4-row x 16-column register tile (4 + 16 floats loaded per 64 FMAs). Layer 3 (dim outputs) uses a 4x4 tile for
// dim % 4 == 0, or splits k over 16 lanes with a shuffle reduction for dim <= 4. SiLU with accurate expf, so the
// result matches float64 to fp32 rounding. Fast path for hidden == 256; other shapes use the general kernel.
#include <cuda_runtime.h>

#include <stdexcept>

#include "core/philox_normal.h"
#include "kernels/denoise_common.cuh"
#include "kernels/cuda_error.h"
#include "kernels/kernels.h"
#include "kernels/mma.cuh"

namespace diffscope::kernels {

namespace {

constexpr int kThreads = 256, kR = 64, kLda = 68, kKc = 32, kH = 256;

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

// Applies the affine update to x[r][d] (in uT) and writes the frame element.
__device__ __forceinline__ void update_elem(const DenoiseArgs& a, const RowStep& s, int row, int r, int d, float eps,
                                            float* uT, const float* z) {
  float xv = uT[d * kLda + r];
  xv = s.A * xv + s.B * eps;
  if (s.S != 0.f) xv += s.S * z[d & 3];
  uT[d * kLda + r] = xv;
}

__global__ void __launch_bounds__(kThreads, 1) kernel_denoise_f32(const DenoiseArgs a) {
  extern __shared__ float4 smem_f32_4[];
  float* smem = reinterpret_cast<float*>(smem_f32_4);
  const int dim = a.net.dim, K1 = dim + 1;
  float* h1T = smem;                  // [256][68]
  float* h2T = h1T + kH * kLda;       // [256][68]
  float* wbuf = h2T + kH * kLda;      // [2][16][256]
  float* uT = wbuf + 2 * kKc * kH;    // [K1][68]
  __shared__ RowStep rs[kR];
  const int tx = threadIdx.x & 15, ty = threadIdx.x >> 4;
  const int row0 = blockIdx.x * kR, nrows = min(kR, a.B - row0);
  for (int i = threadIdx.x; i < kR * dim; i += kThreads) {
    const int r = i / dim, d = i % dim;
    uT[d * kLda + r] = r < nrows ? a.x[static_cast<size_t>(row0 + r) * dim + d] : 0.f;
  }
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  const bool ksplit = dim <= 4;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    __syncthreads();
    bool any = false;
    if (threadIdx.x < kR) {
      rs[threadIdx.x] = row_step(a, row0 + threadIdx.x, k);
      uT[dim * kLda + threadIdx.x] = rs[threadIdx.x].tt;
      any = rs[threadIdx.x].active;
    }
    any = __syncthreads_or(any);
    if (any) {
      // layers 1 and 2: 64 x 256 outputs, SiLU, stored transposed
      for (int layer = 0; layer < 2; ++layer) {
        const float* inT = layer == 0 ? uT : h1T;
        float* outT = layer == 0 ? h1T : h2T;
        const float* bias = layer == 0 ? a.net.b1 : a.net.b2;
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
        f32_layer<4>(inT, layer == 0 ? K1 : kH, layer == 0 ? a.net.W1T : a.net.W2T, kH, wbuf, acc);
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
      // layer 3 + the affine update
      if (!ksplit) {
        float acc[4][4];
        const bool own = tx * 4 < dim;
        const float4 b = own ? __ldg(reinterpret_cast<const float4*>(a.net.b3 + tx * 4)) : make_float4(0, 0, 0, 0);
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[i][0] = b.x, acc[i][1] = b.y, acc[i][2] = b.z, acc[i][3] = b.w;
        f32_layer<1>(h2T, kH, a.net.W3T, dim, wbuf, acc);
        if (own) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int r = ty * 4 + i;
            const RowStep& s = rs[r];
            if (!s.active) continue;
            float z[4] = {0.f, 0.f, 0.f, 0.f};
            if (s.S != 0.f) philox_normal4(a.seed, a.row_offset + row0 + r, static_cast<uint32_t>(s.t), tx, z);
#pragma unroll
            for (int e = 0; e < 4; ++e) update_elem(a, s, row0 + r, r, tx * 4 + e, acc[i][e], uT, z);
          }
        }
      } else {
        float acc[4][4] = {};
        for (int kk = tx; kk < kH; kk += 16) {
          const float4 av = *reinterpret_cast<const float4*>(h2T + kk * kLda + ty * 4);
          const float ar[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
          for (int d = 0; d < 4; ++d) {
            const float w = d < dim ? __ldg(a.net.W3T + kk * dim + d) : 0.f;
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
        if (tx == 0) {
#pragma unroll
          for (int i = 0; i < 4; ++i) {
            const int r = ty * 4 + i;
            const RowStep& s = rs[r];
            if (!s.active) continue;
            float z[4] = {0.f, 0.f, 0.f, 0.f};
            if (s.S != 0.f) philox_normal4(a.seed, a.row_offset + row0 + r, static_cast<uint32_t>(s.t), 0, z);
            for (int d = 0; d < dim; ++d) update_elem(a, s, row0 + r, r, d, acc[i][d] + __ldg(a.net.b3 + d), uT, z);
          }
        }
      }
    }
    if (a.frames) {
      __syncthreads();
      float* f = a.frames + (k - a.k_begin) * frame_stride + static_cast<size_t>(row0) * dim;
      for (int i = threadIdx.x; i < nrows * dim; i += kThreads) f[i] = uT[(i % dim) * kLda + i / dim];
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < nrows * dim; i += kThreads)
    a.x[static_cast<size_t>(row0) * dim + i] = uT[(i % dim) * kLda + i / dim];
}

}  // namespace

bool denoise_f32_supported(int dim, int hidden) {
  return hidden == kH && dim >= 1 && (dim <= 4 || (dim % 4 == 0 && dim <= 64));
}

void launch_denoise_f32(const DenoiseArgs& a, cudaStream_t s) {
  const int K1 = a.net.dim + 1;
  const size_t smem = sizeof(float) * (2 * kH * kLda + 2 * kKc * kH + static_cast<size_t>(K1) * kLda);
  set_max_dynamic_smem(kernel_denoise_f32, smem);
  const int grid = (a.B + kR - 1) / kR;
  kernel_denoise_f32<<<grid, kThreads, smem, s>>>(a);
}

}  // namespace diffscope::kernels
