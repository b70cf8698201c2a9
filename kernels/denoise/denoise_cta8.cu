// denoise_cta8.cu — the single-CTA bf16 / fp16 denoiser for B <= 8 rows with the weights as the mma A operand (the
// latency-bound rows): every layer computes out^T = W act^T with hidden units (or output dims) as M (16 per
// m-block) and the batch as N = 8, so a step issues half the mma and half the SiLU of the m16 kernel
// (denoise_cta.cu), whose 16-row tiles are half padding at B = 8. Same weights and fragments as that kernel: the
// bf16 B-operand fragments of W (frag_pack.h) read as A fragments — the A fragment of m-block m, k-block kb is
// {b0 of n-block 2m, b0 of n-block 2m+1, b1 of 2m, b1 of 2m+1} (PTX ISA, m16n8k16 fragment layouts). W2 (128 KB)
// in registers (warp w: m-blocks 2w, 2w+1), W1 and W3 in shared memory. The activations pass between layers as
// bf16 [batch][hidden] in shared memory, each 16-block permuted so that one 8-byte load gives a B fragment.
// Per step: layer 1 (8 mma per warp), barrier, layer 2 (32 mma per warp in 4 chains; the step's Philox noise is
// drawn here, off the layer-3 tail), barrier, layer 3 (KX/16 warps, 16 mma in 4 chains) + the fp32 affine update,
// barrier; the frozen-row flags of a 32-step coefficient chunk are read after one barrier per chunk.
#include <cuda_runtime.h>

#include <Random123/philox.h>

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

constexpr int kThreads = 256, kH = kNetHidden, kRows = kCta8Rows;
constexpr int kCH = kThreads / kRows;  // steps per coefficient chunk (one RowStep per thread)
constexpr int kHS = kH + 16;           // bf16 row stride of h1 / h2: rows 8 banks apart (8-byte B-fragment reads)

template <int KX>
struct Cta8Layout {
  static constexpr int XS = KX + 8;  // fp32 x row stride
  static constexpr int KB1 = KX / 16, NB1 = kH / 8, KBH = kH / 16, NB3 = KX / 8, MB3 = KX / 16;
  static constexpr size_t f1 = 0, f3 = f1 + NB1 * KB1 * 32 * 8, h1 = f3 + NB3 * KBH * 32 * 8,
                          h2 = h1 + kRows * kHS * 2, xs = h2 + kRows * kHS * 2, zs = xs + kRows * XS * 4,
                          b1 = zs + kRows * KX * 4, w1t = b1 + kH * 4, b2 = w1t + kH * 4, b3 = b2 + kH * 4,
                          total = b3 + KX * 4;
};

// Position of k (0..15) inside its permuted 16-block: (2q, 2q+1, 2q+8, 2q+9) -> 4q .. 4q+3.
__device__ __forceinline__ int perm16(int k) { return 4 * ((k & 7) >> 1) + 2 * (k >> 3) + (k & 1); }

template <class Op>
__device__ __forceinline__ void mma_a(float* c, uint2 lo, uint2 hi, uint2 b) {
  AFrag<Op> a = {{lo.x, hi.x, lo.y, hi.y}};
  mma16(c, a, b);
}

// Stores accumulator tile (16 units of m-block m) x (batch 2q, 2q+1) as Op's 16 bits into h[batch][unit], permuted.
template <class Op>
__device__ __forceinline__ void store_h(uint16_t* h, int m, int g, int q, const float* c) {
  const int p0 = 16 * m + perm16(g), p1 = 16 * m + perm16(g + 8);
  h[(2 * q) * kHS + p0] = bits_op<Op>(c[0]);
  h[(2 * q + 1) * kHS + p0] = bits_op<Op>(c[1]);
  h[(2 * q) * kHS + p1] = bits_op<Op>(c[2]);
  h[(2 * q + 1) * kHS + p1] = bits_op<Op>(c[3]);
}

// Two of the four normals philox_normal4 gives for (row, step_key, j): half 0 -> out[0..1], half 1 -> out[2..3],
// the same arithmetic (base/philox_normal.h).
__device__ __forceinline__ void philox_normal2(uint64_t seed, uint32_t row, uint32_t step_key, uint32_t j, int half,
                                               float out[2]) {
  r123::Philox4x32 rng;
  r123::Philox4x32::key_type key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  r123::Philox4x32::ctr_type ctr = {{row, step_key, j, 0u}};
  r123::Philox4x32::ctr_type u = rng(ctr, key);
  const float kTwoPi = 6.283185307179586f;
  const float r = sqrtf(-2.0f * logf(philox_uniform(half ? u[2] : u[0])));
  const float ang = kTwoPi * philox_uniform(half ? u[3] : u[1]);
  out[0] = r * cosf(ang);
  out[1] = r * sinf(ang);
}

// Stamp build (ST, latency_stamps.h): the slots of denoise_cta.cu's kernel.
template <class Op, int KX, bool ST>
__global__ void __launch_bounds__(kThreads, 1)
    kernel_denoise_cta8(const DenoiseArgs a, const uint2* __restrict__ gF1, const uint2* __restrict__ gF2,
                             const uint2* __restrict__ gF3, const float* __restrict__ w1t_g, long long* stp) {
  using L = Cta8Layout<KX>;
  constexpr int KB1 = L::KB1, NB1 = L::NB1, KBH = L::KBH, NB3 = L::NB3, MB3 = L::MB3, XS = L::XS;
  extern __shared__ uint4 smem_cta8[];
  char* base = reinterpret_cast<char*>(smem_cta8);
  const uint2* sF1 = reinterpret_cast<const uint2*>(base + L::f1);
  const uint2* sF3 = reinterpret_cast<const uint2*>(base + L::f3);
  uint16_t* h1 = reinterpret_cast<uint16_t*>(base + L::h1);
  uint16_t* h2 = reinterpret_cast<uint16_t*>(base + L::h2);
  float* xs = reinterpret_cast<float*>(base + L::xs);
  float* zs = reinterpret_cast<float*>(base + L::zs);
  float* sb1 = reinterpret_cast<float*>(base + L::b1);
  float* sw1t = reinterpret_cast<float*>(base + L::w1t);
  float* sb2 = reinterpret_cast<float*>(base + L::b2);
  float* sb3 = reinterpret_cast<float*>(base + L::b3);
  __shared__ float4 cf[kCH * kRows];  // A, C, S, t/T
  __shared__ __align__(16) int cft[kCH * kRows];  // t, or -1: frozen
  const int dim = a.net.dim, nst = a.k_end - a.k_begin;
  stamp<ST>(stp, 0, -1, 0, nst);

  pdl_launch_dependents();
  // Weights: written only by cudaMemcpy (never by a kernel), so they may load before pdl_wait().
  cta::copy_async<kThreads>(base + L::f1, gF1, NB1 * KB1 * 16);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
  uint2 w2r[4][KBH];  // n-blocks 4w .. 4w+3 = m-blocks 2w (0, 1) and 2w + 1 (2, 3)
#pragma unroll
  for (int i = 0; i < 4; ++i)
#pragma unroll
    for (int kb = 0; kb < KBH; ++kb) w2r[i][kb] = __ldg(gF2 + ((4 * warp + i) * KBH + kb) * 32 + lane);
  cta::copy_async<kThreads>(base + L::f3, gF3, NB3 * KBH * 16);
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
  // The noise pair of this thread: row zr, dims 4 zj + 2 zh, + 1 (threads past kRows * KX / 2 draw nothing).
  const int zp = threadIdx.x >> 1, zh = threadIdx.x & 1, zr = zp / (KX / 4), zj = zp % (KX / 4);
  const bool draws = zr < kRows;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    const int kc = (k - a.k_begin) % kCH, ks = k - a.k_begin;
    stamp<ST>(stp, 0, ks, 0, nst);
    if (kc == 0) {
      advance_coef_chunk(a, kRows, k, cf, cft, next);  // new chunk
      __syncthreads();
    }
    const float4* cs = cf + kc * kRows;
    const int* ct = cft + kc * kRows;
    const int4 t0 = reinterpret_cast<const int4*>(ct)[0], t1 = reinterpret_cast<const int4*>(ct)[1];
    const bool any = max(max(max(t0.x, t0.y), max(t0.z, t0.w)), max(max(t1.x, t1.y), max(t1.z, t1.w))) >= 0;
    stamp<ST>(stp, 0, ks, 1, nst);
    if (any) {
      // ---- layer 1: m-blocks 2w, 2w+1 (hidden 32w .. 32w+31) x batch 8
      {
        uint2 bx[KB1];
#pragma unroll
        for (int kb = 0; kb < KB1; ++kb) {
          const float2 v0 = *reinterpret_cast<const float2*>(xs + g * XS + 16 * kb + 2 * q);
          const float2 v1 = *reinterpret_cast<const float2*>(xs + g * XS + 16 * kb + 2 * q + 8);
          bx[kb] = make_uint2(pack_op2<Op>(v0.x, v0.y), pack_op2<Op>(v1.x, v1.y));
        }
        const float tt0 = cs[2 * q].w, tt1 = cs[2 * q + 1].w;
#pragma unroll
        for (int i2 = 0; i2 < 2; ++i2) {
          const int m = 2 * warp + i2, u0 = 16 * m + g, u1 = u0 + 8;
          float c[4] = {fmaf(sw1t[u0], tt0, sb1[u0]), fmaf(sw1t[u0], tt1, sb1[u0]), fmaf(sw1t[u1], tt0, sb1[u1]),
                        fmaf(sw1t[u1], tt1, sb1[u1])};
#pragma unroll
          for (int kb = 0; kb < KB1; ++kb)
            mma_a<Op>(c, sF1[((2 * m) * KB1 + kb) * 32 + lane], sF1[((2 * m + 1) * KB1 + kb) * 32 + lane], bx[kb]);
#pragma unroll
          for (int e = 0; e < 4; ++e) c[e] = silu_fast(c[e]);
          store_h<Op>(h1, m, g, q, c);
        }
      }
      stamp<ST>(stp, 0, ks, 2, nst);
      __syncthreads();
      stamp<ST>(stp, 0, ks, 3, nst);
      // ---- layer 2: m-blocks 2w, 2w+1 over 16 k-blocks, two chains each (even / odd k-blocks); the noise of the
      // step is drawn meanwhile (independent of the chain) into zs
      {
        if (KX == 64 || draws) {  // every thread draws at KX = 64: no branch around the draw
          float z[2];
          philox_normal2(a.seed, a.row_offset + zr, static_cast<uint32_t>(ct[zr]), zj, zh, z);
          *reinterpret_cast<float2*>(zs + zr * KX + 4 * zj + 2 * zh) = make_float2(z[0], z[1]);
        }
        float acc[2][2][4];
#pragma unroll
        for (int i2 = 0; i2 < 2; ++i2) {
          const int u0 = 32 * warp + 16 * i2 + g;
          acc[i2][0][0] = acc[i2][0][1] = sb2[u0];
          acc[i2][0][2] = acc[i2][0][3] = sb2[u0 + 8];
          acc[i2][1][0] = acc[i2][1][1] = acc[i2][1][2] = acc[i2][1][3] = 0.f;
        }
        const uint16_t* hr = h1 + g * kHS + 4 * q;
#pragma unroll
        for (int kb = 0; kb < KBH; ++kb) {
          const uint2 b = *reinterpret_cast<const uint2*>(hr + 16 * kb);
#pragma unroll
          for (int i2 = 0; i2 < 2; ++i2) mma_a<Op>(acc[i2][kb & 1], w2r[2 * i2][kb], w2r[2 * i2 + 1][kb], b);
        }
#pragma unroll
        for (int i2 = 0; i2 < 2; ++i2) {
          float c[4];
#pragma unroll
          for (int e = 0; e < 4; ++e) c[e] = silu_fast(acc[i2][0][e] + acc[i2][1][e]);
          store_h<Op>(h2, 2 * warp + i2, g, q, c);
        }
      }
      stamp<ST>(stp, 0, ks, 4, nst);
      __syncthreads();
      stamp<ST>(stp, 0, ks, 5, nst);
      // ---- layer 3 (warp w < KX/16: output dims 16w .. 16w+15, four chains) and the fp32 affine update
      if (warp < MB3) {
        const int m = warp, d0 = 16 * m + g, d1 = d0 + 8;
        float e[4][4];
#pragma unroll
        for (int j = 0; j < 4; ++j) e[j][0] = e[j][1] = e[j][2] = e[j][3] = 0.f;
        e[0][0] = e[0][1] = sb3[d0];
        e[0][2] = e[0][3] = sb3[d1];
        const uint16_t* hr = h2 + g * kHS + 4 * q;
#pragma unroll
        for (int kb = 0; kb < KBH; ++kb) {
          const uint2 b = *reinterpret_cast<const uint2*>(hr + 16 * kb);
          mma_a<Op>(e[kb & 3], sF3[((2 * m) * KBH + kb) * 32 + lane], sF3[((2 * m + 1) * KBH + kb) * 32 + lane], b);
        }
        float eps[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) eps[i] = (e[0][i] + e[1][i]) + (e[2][i] + e[3][i]);
        stamp_after<ST>(eps[0], stp, 0, ks, 6, nst);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int r = 2 * q + (i & 1), d = (i & 2) ? d1 : d0;
          const float4 s = cs[r];  // A, C, S, t/T
          if (r >= a.B || ct[r] < 0 || d >= dim) continue;
          float* xp = xs + r * XS + d;
          *xp = fmaf(s.z, zs[r * KX + d], fmaf(s.y, eps[i], s.x * *xp));
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
void launch_cta8(const DenoiseArgs& a, const DenoisePlan& plan, const LaunchContext& ctx, cudaStream_t s) {
  constexpr size_t smem = Cta8Layout<KX>::total;
  static_assert(smem + kCH * kRows * (sizeof(float4) + sizeof(int)) <= 227 * 1024,
                "single-CTA layout exceeds shared memory");
  long long* stp = ctx.stamps_for(stamp_capacity(1, a.k_end - a.k_begin));
  auto* kernel = stp ? kernel_denoise_cta8<Op, KX, true> : kernel_denoise_cta8<Op, KX, false>;
  cta::launch(kernel, kThreads, smem, a, cta::fragments<Op>(a.net), stp, plan.pdl, s,
              "single-CTA (B <= 8) denoiser launch");
}

}  // namespace

void launch_denoise_cta8(const DenoiseArgs& a, Precision p, const DenoisePlan& plan, const LaunchContext& ctx,
                         cudaStream_t s) {
  if (!a.net.f2_bf16 || !precision_16bit(p))
    throw std::invalid_argument("single-CTA denoiser: needs bf16 / fp16 and the model's fragments");
  if (a.B > kRows) throw std::invalid_argument("single-CTA (B <= 8) denoiser: B = " + std::to_string(a.B));
  const bool f16 = p == Precision::F16;
  if (a.net.dim <= 16) f16 ? launch_cta8<F16Tag, 16>(a, plan, ctx, s) : launch_cta8<Bf16Tag, 16>(a, plan, ctx, s);
  else f16 ? launch_cta8<F16Tag, 64>(a, plan, ctx, s) : launch_cta8<Bf16Tag, 64>(a, plan, ctx, s);
}

}  // namespace diffscope::kernels
