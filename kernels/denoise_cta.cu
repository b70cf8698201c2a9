// denoise_cta.cu — the small-batch (latency-bound) fused denoiser in bf16: one CTA of 8 warps holds every weight in
// shared memory as bf16 tensor-core fragments (198 KB for dim 64, hidden 256) and runs all steps for B <= 16 rows
// (one m16 tile). Each layer is split over the warps by output columns (4 n-blocks = 32 hidden units per warp);
// the layer's activations are exchanged as ready-made A fragments through shared memory, so a step is three
// short mma chains and three __syncthreads. x stays fp32 in shared memory; the affine update is exact fp32.
#include <cuda_runtime.h>

#include <stdexcept>

#include "core/philox_normal.h"
#include "kernels/denoise_common.cuh"
#include "kernels/kernels.h"
#include "kernels/mma.cuh"

namespace diffscope::kernels {

namespace {

constexpr int kThreads = 256, kH = 256, kRows = 16;

template <int KX>
struct CtaLayout {
  static constexpr int KB1 = KX / 16, NB1 = kH / 8, KBH = kH / 16, NB3 = KX / 8;
  static constexpr size_t f1 = 0, f2 = f1 + NB1 * KB1 * 32 * 8, f3 = f2 + NB1 * KBH * 32 * 8,
                          h1 = f3 + NB3 * KBH * 32 * 8, h2 = h1 + KBH * 32 * 16, xs = h2 + KBH * 32 * 16,
                          b1 = xs + kRows * KX * 4, w1t = b1 + kH * 4, b2 = w1t + kH * 4, b3 = b2 + kH * 4,
                          total = b3 + KX * 4;
};

template <class T>
__device__ __forceinline__ void copy8(T* dst, const T* __restrict__ src, int n) {
  int i = threadIdx.x;
  for (; i + 7 * kThreads < n; i += 8 * kThreads) {
    T v[8];
#pragma unroll
    for (int q = 0; q < 8; ++q) v[q] = src[i + q * kThreads];
#pragma unroll
    for (int q = 0; q < 8; ++q) dst[i + q * kThreads] = v[q];
  }
  for (; i < n; i += kThreads) dst[i] = src[i];
}

template <int KX>
__global__ void __launch_bounds__(kThreads, 1)
    kernel_denoise_cta_bf16(const DenoiseArgs a, const uint2* __restrict__ gF1, const uint2* __restrict__ gF2,
                            const uint2* __restrict__ gF3, const float* __restrict__ w1t_g) {
  using L = CtaLayout<KX>;
  constexpr int KB1 = L::KB1, NB1 = L::NB1, KBH = L::KBH, NB3 = L::NB3;
  extern __shared__ uint4 smem_cta[];
  char* base = reinterpret_cast<char*>(smem_cta);
  uint2* sF1 = reinterpret_cast<uint2*>(base + L::f1);
  uint2* sF2 = reinterpret_cast<uint2*>(base + L::f2);
  uint2* sF3 = reinterpret_cast<uint2*>(base + L::f3);
  uint4* h1f = reinterpret_cast<uint4*>(base + L::h1);
  uint4* h2f = reinterpret_cast<uint4*>(base + L::h2);
  float* xs = reinterpret_cast<float*>(base + L::xs);
  float* sb1 = reinterpret_cast<float*>(base + L::b1);
  float* sw1t = reinterpret_cast<float*>(base + L::w1t);
  float* sb2 = reinterpret_cast<float*>(base + L::b2);
  float* sb3 = reinterpret_cast<float*>(base + L::b3);
  __shared__ RowStep rs[kRows];
  const int dim = a.net.dim;

  copy8(sF2, gF2, NB1 * KBH * 32);
  copy8(sF1, gF1, NB1 * KB1 * 32);
  copy8(sF3, gF3, NB3 * KBH * 32);
  for (int i = threadIdx.x; i < kH; i += kThreads) {
    sb1[i] = a.net.b1[i];
    sw1t[i] = w1t_g[i];
    sb2[i] = a.net.b2[i];
  }
  for (int i = threadIdx.x; i < KX; i += kThreads) sb3[i] = i < dim ? a.net.b3[i] : 0.f;
  for (int i = threadIdx.x; i < kRows * KX; i += kThreads) {
    const int r = i / KX, c = i % KX;
    xs[i] = (r < a.B && c < dim) ? a.x[static_cast<size_t>(r) * dim + c] : 0.f;
  }
  RowStep next{};
  if (threadIdx.x < kRows) next = row_step(a, threadIdx.x, a.k_begin);
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    if (threadIdx.x < kRows) {
      rs[threadIdx.x] = next;
      if (k + 1 < a.k_end) next = row_step(a, threadIdx.x, k + 1);
    }
    const bool any = __syncthreads_or(threadIdx.x < kRows && rs[threadIdx.x].active);
    if (any) {
      const float tt0 = rs[g].tt, tt1 = rs[g + 8].tt;
      // ---- layer 1: this warp's h1 k-blocks 2w, 2w+1 (n-blocks 4w .. 4w+3)
      {
        AFrag<Bf16Tag> xa[KB1];
#pragma unroll
        for (int j = 0; j < KB1; ++j) {
          const float2 v00 = *reinterpret_cast<const float2*>(xs + g * KX + 16 * j + 2 * q);
          const float2 v10 = *reinterpret_cast<const float2*>(xs + (g + 8) * KX + 16 * j + 2 * q);
          const float2 v01 = *reinterpret_cast<const float2*>(xs + g * KX + 16 * j + 8 + 2 * q);
          const float2 v11 = *reinterpret_cast<const float2*>(xs + (g + 8) * KX + 16 * j + 8 + 2 * q);
          const float c0[4] = {v00.x, v00.y, v10.x, v10.y}, c1[4] = {v01.x, v01.y, v11.x, v11.y};
          make_afrag(xa[j], c0, c1);
        }
#pragma unroll
        for (int hb = 0; hb < 2; ++hb) {
          const int j = 2 * warp + hb;
          float c[2][4];
#pragma unroll
          for (int hf = 0; hf < 2; ++hf) {
            const int nb = 2 * j + hf, col = nb * 8 + 2 * q;
            const float2 bb = *reinterpret_cast<const float2*>(sb1 + col);
            const float2 ww = *reinterpret_cast<const float2*>(sw1t + col);
            c[hf][0] = fmaf(ww.x, tt0, bb.x);
            c[hf][1] = fmaf(ww.y, tt0, bb.y);
            c[hf][2] = fmaf(ww.x, tt1, bb.x);
            c[hf][3] = fmaf(ww.y, tt1, bb.y);
#pragma unroll
            for (int kb = 0; kb < KB1; ++kb) mma16(c[hf], xa[kb], sF1[(nb * KB1 + kb) * 32 + lane]);
#pragma unroll
            for (int e = 0; e < 4; ++e) c[hf][e] = silu_fast(c[hf][e]);
          }
          AFrag<Bf16Tag> h;
          make_afrag(h, c[0], c[1]);
          h1f[j * 32 + lane] = make_uint4(h.r[0], h.r[1], h.r[2], h.r[3]);
        }
      }
      __syncthreads();
      // ---- layer 2: n-blocks 4w .. 4w+3 over all 16 k-blocks of h1
      {
        float acc[4][4];
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const float2 bb = *reinterpret_cast<const float2*>(sb2 + (4 * warp + i) * 8 + 2 * q);
          acc[i][0] = bb.x, acc[i][1] = bb.y, acc[i][2] = bb.x, acc[i][3] = bb.y;
        }
#pragma unroll
        for (int kb = 0; kb < KBH; ++kb) {
          const uint4 hv = h1f[kb * 32 + lane];
          const AFrag<Bf16Tag> h = {{hv.x, hv.y, hv.z, hv.w}};
#pragma unroll
          for (int i = 0; i < 4; ++i) mma16(acc[i], h, sF2[((4 * warp + i) * KBH + kb) * 32 + lane]);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][e] = silu_fast(acc[i][e]);
#pragma unroll
        for (int hb = 0; hb < 2; ++hb) {
          AFrag<Bf16Tag> h;
          make_afrag(h, acc[2 * hb], acc[2 * hb + 1]);
          h2f[(2 * warp + hb) * 32 + lane] = make_uint4(h.r[0], h.r[1], h.r[2], h.r[3]);
        }
      }
      __syncthreads();
      // ---- layer 3 (warp w: eps n-block w) and the fp32 affine update
      if (warp < NB3) {
        const int nb = warp, col = nb * 8 + 2 * q;
        const float2 bb = *reinterpret_cast<const float2*>(sb3 + col);
        float e[4] = {bb.x, bb.y, bb.x, bb.y};
#pragma unroll
        for (int kb = 0; kb < KBH; ++kb) {
          const uint4 hv = h2f[kb * 32 + lane];
          const AFrag<Bf16Tag> h = {{hv.x, hv.y, hv.z, hv.w}};
          mma16(e, h, sF3[(nb * KBH + kb) * 32 + lane]);
        }
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int r = g + 8 * hr;
          const RowStep& s = rs[r];
          if (!s.active || col >= dim) continue;
          float z[4] = {0.f, 0.f, 0.f, 0.f};
          if (s.S != 0.f) philox_normal4(a.seed, a.row_offset + r, static_cast<uint32_t>(s.t), col / 4, z);
          const int zo = col & 3;
          float* xr = xs + r * KX + col;
          xr[0] = fmaf(s.S, z[zo], fmaf(s.B, e[2 * hr], s.A * xr[0]));
          if (col + 1 < dim) xr[1] = fmaf(s.S, z[zo + 1], fmaf(s.B, e[2 * hr + 1], s.A * xr[1]));
        }
      }
      __syncthreads();
    }
    if (a.frames) {
      float* f = a.frames + (k - a.k_begin) * frame_stride;
      for (int i = threadIdx.x; i < a.B * dim; i += kThreads) f[i] = xs[(i / dim) * KX + i % dim];
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < a.B * dim; i += kThreads) a.x[i] = xs[(i / dim) * KX + i % dim];
}

template <int KX>
void launch_cta(const DenoiseArgs& a, cudaStream_t s) {
  constexpr size_t smem = CtaLayout<KX>::total;
  static_assert(smem <= 227 * 1024, "single-CTA layout exceeds shared memory");
  cudaFuncSetAttribute(kernel_denoise_cta_bf16<KX>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  const float* w1t = a.net.W1T + static_cast<size_t>(a.net.dim) * a.net.hidden;
  kernel_denoise_cta_bf16<KX><<<1, kThreads, smem, s>>>(a, static_cast<const uint2*>(a.net.f1_bf16),
                                                       static_cast<const uint2*>(a.net.f2_bf16),
                                                       static_cast<const uint2*>(a.net.f3_bf16), w1t);
}

}  // namespace

bool denoise_cta_supported(int dim, int hidden, int B) { return hidden == kH && dim >= 1 && dim <= 64 && B >= 1 && B <= kRows; }

void launch_denoise_cta(const DenoiseArgs& a, cudaStream_t s) {
  if (!a.net.f2_bf16) throw std::invalid_argument("single-CTA denoiser: no bf16 fragments for this model");
  if (a.net.dim <= 16) launch_cta<16>(a, s);
  else launch_cta<64>(a, s);
}

}  // namespace diffscope::kernels
