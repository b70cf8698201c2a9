// denoise_cta.cu — the small-batch (latency-bound) fused denoiser in bf16 / fp16: one CTA of 8 warps holds every
// weight as 16-bit tensor-core fragments — W1 and W3 in shared memory (64 KB for dim 64, hidden 256), W2 (128 KB) in registers,
// each warp its own 32 output columns — and runs all steps for B <= 16 rows (one m16 tile). Each layer is split
// over the warps by output columns (4 n-blocks = 32 hidden units per warp); the layer's activations are exchanged
// as ready-made A fragments through shared memory, so a step is three short mma chains and three __syncthreads.
// x stays fp32 in shared memory; the affine update is exact fp32.
// Latency: the fragments arrive with cp.async / plain loads, all in flight at once, and are issued before
// pdl_wait() (pdl.cuh), so with back-to-back calls they load while the previous call runs; the step coefficients
// of 16 steps x 16 rows are read by all threads at once, one chunk ahead (no global read inside a step); x rows
// are padded (KX + 8 floats) so the layer-1 fragment reads do not conflict; layer 3 runs two mma chains.
// At B <= 8 launch_denoise_cta runs denoise_cta8.cu's kernel instead (the batch as the mma N: half the mma).
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "base/philox_normal.h"
#include "kernels/denoise/denoise_cta8.h"
#include "kernels/denoise/denoise_cta_common.cuh"
#include "kernels/kernels.h"
#include "kernels/shared/cp_async.cuh"
#include "kernels/shared/cuda_error.h"
#include "kernels/shared/denoise_common.cuh"
#include "kernels/shared/latency_stamps.cuh"
#include "kernels/shared/mma.cuh"
#include "kernels/shared/pdl.cuh"

namespace diffscope::kernels {

namespace {

constexpr int kThreads = 256, kH = kNetHidden, kRows = kCtaRows;
constexpr int kCH = kThreads / kRows;  // steps per coefficient chunk (one RowStep per thread)

template <int KX>
struct CtaLayout {
  static constexpr int XS = KX + 8;  // x row stride: rows g and g + 4 of a fragment read hit different banks
  static constexpr int KB1 = KX / 16, NB1 = kH / 8, KBH = kH / 16, NB3 = KX / 8;
  static constexpr size_t f1 = 0, f3 = f1 + NB1 * KB1 * 32 * 8,  // W2 lives in registers
                          h1 = f3 + NB3 * KBH * 32 * 8, h2 = h1 + KBH * 32 * 16, xs = h2 + KBH * 32 * 16,
                          b1 = xs + kRows * XS * 4, w1t = b1 + kH * 4, b2 = w1t + kH * 4, b3 = b2 + kH * 4,
                          total = b3 + KX * 4;
};

// Stamp build (ST, latency_stamps.h): slots of step -1: 0 start, 1 weight loads issued, 2 after pdl_wait, 3 ready
// (weights in shared memory, x loaded), 4 end; of each step: 0 top, 1 coefficients published (__syncthreads_or),
// 2 layer 1 stored, 3 barrier, 4 layer 2 stored, 5 barrier, 6 layer 3 mma done, 7 x updated, 8 barrier, 9 frames.
template <class Op, int KX, bool ST>
__global__ void __launch_bounds__(kThreads, 1)
    kernel_denoise_cta(const DenoiseArgs a, const uint2* __restrict__ gF1, const uint2* __restrict__ gF2,
                            const uint2* __restrict__ gF3, const float* __restrict__ w1t_g, long long* stp) {
  using L = CtaLayout<KX>;
  constexpr int KB1 = L::KB1, NB1 = L::NB1, KBH = L::KBH, NB3 = L::NB3;
  extern __shared__ uint4 smem_cta[];
  char* base = reinterpret_cast<char*>(smem_cta);
  uint2* sF1 = reinterpret_cast<uint2*>(base + L::f1);
  uint2* sF3 = reinterpret_cast<uint2*>(base + L::f3);
  uint4* h1f = reinterpret_cast<uint4*>(base + L::h1);
  uint4* h2f = reinterpret_cast<uint4*>(base + L::h2);
  float* xs = reinterpret_cast<float*>(base + L::xs);
  float* sb1 = reinterpret_cast<float*>(base + L::b1);
  float* sw1t = reinterpret_cast<float*>(base + L::w1t);
  float* sb2 = reinterpret_cast<float*>(base + L::b2);
  float* sb3 = reinterpret_cast<float*>(base + L::b3);
  constexpr int XS = L::XS;
  // Step coefficients of kCH steps x kRows rows: A, C, S, t/T and t (-1: frozen).
  __shared__ float4 cf[kCH * kRows];
  __shared__ int cft[kCH * kRows];
  const int dim = a.net.dim, nst = a.k_end - a.k_begin;
  stamp<ST>(stp, 0, -1, 0, nst);

  pdl_launch_dependents();
  // Weights: written only by cudaMemcpy (never by a kernel), so they may load before pdl_wait().
  cta::copy_async<kThreads>(sF1, gF1, NB1 * KB1 * 16);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
  // W2: this warp's fragments (4 n-blocks x 16 k-blocks) in registers, 128 per thread; layer 2 then reads only h1
  // from shared memory (in shared memory instead, the reference case ran 43.9 us instead of 38.4 us).
  uint2 w2r[4][KBH];
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int kb = 0; kb < KBH; ++kb) w2r[i][kb] = __ldg(gF2 + ((4 * warp + i) * KBH + kb) * 32 + lane);
  cta::copy_async<kThreads>(sF3, gF3, NB3 * KBH * 16);
  cta::load_biases<KX, kThreads>(a, w1t_g, sb1, sw1t, sb2, sb3);
  stamp<ST>(stp, 0, -1, 1, nst);
  pdl_wait();  // x, row_t and the step table may be written by the previous kernel
  stamp<ST>(stp, 0, -1, 2, nst);
  cta::load_x<kThreads>(a, xs, kRows, XS);
  RowStep next = chunk_row_step(a, kRows, a.k_begin);
  cta::cp_async_wait_all();
  __syncthreads();
  stamp<ST>(stp, 0, -1, 3, nst);

  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    const int kc = (k - a.k_begin) % kCH, ks = k - a.k_begin;
    stamp<ST>(stp, 0, ks, 0, nst);
    const float4* cs = cf + kc * kRows;
    const int* ct = cft + kc * kRows;
    if (kc == 0) advance_coef_chunk(a, kRows, k, cf, cft, next);  // new chunk
    const bool any = __syncthreads_or(threadIdx.x < kRows && ct[threadIdx.x] >= 0);
    stamp<ST>(stp, 0, ks, 1, nst);
    if (any) {
      const float tt0 = cs[g].w, tt1 = cs[g + 8].w;
      // ---- layer 1: this warp's h1 k-blocks 2w, 2w+1 (n-blocks 4w .. 4w+3)
      {
        AFrag<Op> xa[KB1];
#pragma unroll
        for (int j = 0; j < KB1; ++j) {
          const float2 v00 = *reinterpret_cast<const float2*>(xs + g * XS + 16 * j + 2 * q);
          const float2 v10 = *reinterpret_cast<const float2*>(xs + (g + 8) * XS + 16 * j + 2 * q);
          const float2 v01 = *reinterpret_cast<const float2*>(xs + g * XS + 16 * j + 8 + 2 * q);
          const float2 v11 = *reinterpret_cast<const float2*>(xs + (g + 8) * XS + 16 * j + 8 + 2 * q);
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
          AFrag<Op> h;
          make_afrag(h, c[0], c[1]);
          h1f[j * 32 + lane] = make_uint4(h.r[0], h.r[1], h.r[2], h.r[3]);
        }
      }
      stamp<ST>(stp, 0, ks, 2, nst);
      __syncthreads();
      stamp<ST>(stp, 0, ks, 3, nst);
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
          const AFrag<Op> h = {{hv.x, hv.y, hv.z, hv.w}};
#pragma unroll
          for (int i = 0; i < 4; ++i) mma16(acc[i], h, w2r[i][kb]);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[i][e] = silu_fast(acc[i][e]);
#pragma unroll
        for (int hb = 0; hb < 2; ++hb) {
          AFrag<Op> h;
          make_afrag(h, acc[2 * hb], acc[2 * hb + 1]);
          h2f[(2 * warp + hb) * 32 + lane] = make_uint4(h.r[0], h.r[1], h.r[2], h.r[3]);
        }
      }
      stamp<ST>(stp, 0, ks, 4, nst);
      __syncthreads();
      stamp<ST>(stp, 0, ks, 5, nst);
      // ---- layer 3 (warp w: eps n-block w) and the fp32 affine update
      if (warp < NB3) {
        const int nb = warp, col = nb * 8 + 2 * q;
        const float2 bb = *reinterpret_cast<const float2*>(sb3 + col);
        // two chains over the even / odd k-blocks (half the dependent mma latency), summed at the end
        float e[4] = {bb.x, bb.y, bb.x, bb.y}, e2[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
        for (int kb = 0; kb < KBH; kb += 2) {
          const uint4 hv = h2f[kb * 32 + lane], hw = h2f[(kb + 1) * 32 + lane];
          const AFrag<Op> h = {{hv.x, hv.y, hv.z, hv.w}}, h_ = {{hw.x, hw.y, hw.z, hw.w}};
          mma16(e, h, sF3[(nb * KBH + kb) * 32 + lane]);
          mma16(e2, h_, sF3[(nb * KBH + kb + 1) * 32 + lane]);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) e[i] += e2[i];
        stamp_after<ST>(e[0], stp, 0, ks, 6, nst);
#pragma unroll
        for (int hr = 0; hr < 2; ++hr) {
          const int r = g + 8 * hr;
          const float4 s = cs[r];  // A, C, S, t/T
          const int t = ct[r];
          if (t < 0 || col >= dim) continue;
          float z[4] = {0.f, 0.f, 0.f, 0.f};
          if (s.z != 0.f) philox_normal4(a.seed, a.row_offset + r, static_cast<uint32_t>(t), col / 4, z);
          const int zo = col & 3;
          float* xr = xs + r * XS + col;
          xr[0] = fmaf(s.z, z[zo], fmaf(s.y, e[2 * hr], s.x * xr[0]));
          if (col + 1 < dim) xr[1] = fmaf(s.z, z[zo + 1], fmaf(s.y, e[2 * hr + 1], s.x * xr[1]));
        }
        stamp<ST>(stp, 0, ks, 7, nst);
      }
      __syncthreads();
      stamp<ST>(stp, 0, ks, 8, nst);
    }
    if (a.frames) {
      float* f = a.frames + (k - a.k_begin) * frame_stride;
      cta::store_x<kThreads>(a, xs, XS, f);
    }
    stamp<ST>(stp, 0, ks, 9, nst);
  }
  __syncthreads();
  cta::store_x<kThreads>(a, xs, XS, a.x);
  stamp<ST>(stp, 0, -1, 4, nst);
}

template <class Op, int KX>
void launch_cta(const DenoiseArgs& a, const DenoisePlan& plan, const LaunchContext& ctx, cudaStream_t s) {
  constexpr size_t smem = CtaLayout<KX>::total;
  static_assert(smem + kCH * kRows * (sizeof(float4) + sizeof(int)) <= 227 * 1024,
                "single-CTA layout exceeds shared memory");
  long long* stp = ctx.stamps_for(stamp_capacity(1, a.k_end - a.k_begin));
  auto* kernel = stp ? kernel_denoise_cta<Op, KX, true> : kernel_denoise_cta<Op, KX, false>;
  cta::launch(kernel, kThreads, smem, a, cta::fragments<Op>(a.net), stp, plan.pdl, s, "single-CTA denoiser launch");
}

}  // namespace

// plan.cta_n8 (B <= 8): the weights-as-A kernel of denoise_cta8.cu; else this file's.
void launch_denoise_cta(const DenoiseArgs& a, Precision p, const DenoisePlan& plan, const LaunchContext& ctx,
                        cudaStream_t s) {
  if (!a.net.f2_bf16 || !precision_16bit(p))
    throw std::invalid_argument("single-CTA denoiser: needs bf16 / fp16 and the model's fragments");
  if (plan.cta_n8) return launch_denoise_cta8(a, p, plan, ctx, s);
  const bool f16 = p == Precision::F16;
  if (a.net.dim <= 16) f16 ? launch_cta<F16Tag, 16>(a, plan, ctx, s) : launch_cta<Bf16Tag, 16>(a, plan, ctx, s);
  else f16 ? launch_cta<F16Tag, 64>(a, plan, ctx, s) : launch_cta<Bf16Tag, 64>(a, plan, ctx, s);
}

}  // namespace diffscope::kernels
