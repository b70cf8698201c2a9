// wgmma_net.cuh — the network of SEMANTICS §2 (hidden 256, dim <= 64) evaluated by one Hopper warpgroup on 64 rows
// with wgmma (sm_90a), shared by the large-batch denoiser (denoise/denoise_wgmma.cu) and the large-batch solver
// kernel (solver/solver_wgmma.cu). All three layers run as wgmma with A from registers (wgmma.cuh): the input
// (16-bit, scaled by the caller's network input scale) for layer 1, whose accumulators start at w1t tt + b1 in fp32;
// SiLU(h1) packed to 16 bits for layer 2 (m64n256k16, 16 k-steps, W2 256x256 resident in shared memory with the
// 128-byte swizzle); SiLU(h2 + b2) for layer 3 (m64nKXk16, accumulators start at b3). The input and the output stay
// fp32 in the accumulator layout (one thread: rows g and g + 8 of its warp's 16, columns 8 nb + 2q, +1), so the
// callers' step updates are exact fp32. Op = Bf16Tag or F16Tag (mma.cuh): the 16-bit operand type of x, W, h1, h2;
// time, biases and accumulation are fp32 for both. Weights are converted once per CTA from the fp32 PyTorch-layout
// copies (DeviceNet::W1, W2, W3).
// Only compiled in an sm_90a pass (__CUDA_ARCH_FEAT_SM90_ALL); the callers compile their bodies out elsewhere.
#pragma once
#include <cstdint>
#include <type_traits>

#include "kernels/kernels.h"
#include "kernels/shared/mma.cuh"
#include "kernels/shared/wgmma.cuh"

namespace diffscope::kernels {

constexpr int kWgHidden = 256;

// Shared-memory layout (byte offsets from a 1024-aligned base). KX: dim padded to 16 (layer-1 K, layer-3 N).
template <int KX>
struct WgLayout {
  static constexpr int kH = kWgHidden;
  static constexpr int kW2 = 0;                       // 4 k-blocks x (256 rows x 128 B)
  static constexpr int kW1 = kW2 + kH * kH * 2;       // 1 k-block (K padded to 64) x (256 rows x 128 B)
  static constexpr int kW3 = kW1 + kH * 128;          // 4 k-blocks x (KX rows x 128 B)
  static constexpr int kW3Block = KX * 128;
  static constexpr int kC1 = kW3 + 4 * kW3Block;      // float4 per column pair: w1t[c], w1t[c+1], b1[c], b1[c+1]
  static constexpr int kHb2 = kC1 + kH / 2 * 16;      // float2 per column pair: b2[c] / 2, b2[c+1] / 2
  static constexpr int kB3 = kHb2 + kH / 2 * 8;       // KX floats
  static constexpr int kBytes = kB3 + KX * 4;
  static constexpr int kAlloc = kBytes + 1024;        // slack for aligning the base
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The 1024-aligned base of the dynamic shared memory.
__device__ __forceinline__ uint8_t* wg_smem_base(uint8_t* smem_raw) {
  return smem_raw + ((1024 - (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) & 1023)) & 1023);
}

// Weights -> shared memory (16-bit Op, K-major, 128-byte swizzle; wgmma.cuh), by all `nthreads` threads of the CTA.
// The caller then runs fence_proxy_async_smem() and __syncthreads().
template <class Op, int KX>
__device__ __forceinline__ void wg_load_weights(uint8_t* smem, const DeviceNet& net, int nthreads) {
  using L = WgLayout<KX>;
  constexpr int kH = kWgHidden;
  const int dim = net.dim;
  const float* __restrict__ W2 = net.W2;
  for (int i = threadIdx.x; i < kH * kH / 8; i += nthreads) {  // 16-byte chunks: row n, chunk kc of 32
    const int n = i >> 5, kc = i & 31;
    const float4 v0 = __ldg(reinterpret_cast<const float4*>(W2 + n * kH + kc * 8));
    const float4 v1 = __ldg(reinterpret_cast<const float4*>(W2 + n * kH + kc * 8 + 4));
    const uint4 p = make_uint4(pack_op2<Op>(v0.x, v0.y), pack_op2<Op>(v0.z, v0.w), pack_op2<Op>(v1.x, v1.y),
                               pack_op2<Op>(v1.z, v1.w));
    *reinterpret_cast<uint4*>(smem + L::kW2 + (kc >> 3) * (kH * 128) + n * 128 + (((kc & 7) ^ (n & 7)) << 4)) = p;
  }
  const float* __restrict__ W1 = net.W1;  // (hidden, dim + 1)
  for (int i = threadIdx.x; i < kH * 8; i += nthreads) {
    const int n = i >> 3, c = i & 7;
    float v[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) {
      const int k = c * 8 + e;
      v[e] = k < dim ? __ldg(W1 + n * (dim + 1) + k) : 0.f;
    }
    const uint4 p = make_uint4(pack_op2<Op>(v[0], v[1]), pack_op2<Op>(v[2], v[3]), pack_op2<Op>(v[4], v[5]),
                               pack_op2<Op>(v[6], v[7]));
    *reinterpret_cast<uint4*>(smem + L::kW1 + n * 128 + ((c ^ (n & 7)) << 4)) = p;
  }
  const float* __restrict__ W3 = net.W3;  // (dim, hidden)
  for (int i = threadIdx.x; i < KX * 32; i += nthreads) {
    const int n = i >> 5, kc = i & 31;
    float v[8];
#pragma unroll
    for (int e = 0; e < 8; ++e) v[e] = n < dim ? __ldg(W3 + n * kH + kc * 8 + e) : 0.f;
    const uint4 p = make_uint4(pack_op2<Op>(v[0], v[1]), pack_op2<Op>(v[2], v[3]), pack_op2<Op>(v[4], v[5]),
                               pack_op2<Op>(v[6], v[7]));
    *reinterpret_cast<uint4*>(smem + L::kW3 + (kc >> 3) * L::kW3Block + n * 128 + (((kc & 7) ^ (n & 7)) << 4)) = p;
  }
  const float* w1t = net.W1T + static_cast<size_t>(dim) * kH;  // the time column W1[:, dim]
  float4* c1 = reinterpret_cast<float4*>(smem + L::kC1);
  float2* hb2 = reinterpret_cast<float2*>(smem + L::kHb2);
  for (int p = threadIdx.x; p < kH / 2; p += nthreads) {
    c1[p] = make_float4(w1t[2 * p], w1t[2 * p + 1], net.b1[2 * p], net.b1[2 * p + 1]);
    hb2[p] = make_float2(0.5f * net.b2[2 * p], 0.5f * net.b2[2 * p + 1]);
  }
  float* b3 = reinterpret_cast<float*>(smem + L::kB3);
  for (int i = threadIdx.x; i < KX; i += nthreads) b3[i] = i < dim ? net.b3[i] : 0.f;
}

// The resident weights as the evaluation reads them.
template <int KX>
struct WgNet {
  uint64_t d1, d2, d3;  // wgmma descriptors of W1, W2, W3
  const float4* c1;
  const float2* hb2;
  const float* b3;
};
template <int KX>
__device__ __forceinline__ WgNet<KX> wg_net(uint8_t* smem) {
  using L = WgLayout<KX>;
  return WgNet<KX>{wgmma_desc_sw128(smem + L::kW1), wgmma_desc_sw128(smem + L::kW2), wgmma_desc_sw128(smem + L::kW3),
                   reinterpret_cast<const float4*>(smem + L::kC1), reinterpret_cast<const float2*>(smem + L::kHb2),
                   reinterpret_cast<const float*>(smem + L::kB3)};
}

// SiLU of two fp32 pre-activations (z = acc + b via h = z/2 = fma(acc, 0.5, b/2)), packed to Op x2.
// Mode 0: fp32 tanh.approx (two MUFU ops). Mode 1 (bf16 only): tanh.approx.bf16x2 and the final fma in bf16x2 (h
// rounded to bf16 first: about twice the bf16 rounding error of mode 0).
template <class Op, int kSiluMode>
__device__ __forceinline__ uint32_t wg_silu_pack(float acc0, float acc1, float hb0, float hb1) {
  const float h0 = fmaf(acc0, 0.5f, hb0), h1 = fmaf(acc1, 0.5f, hb1);
  if constexpr (kSiluMode == 0) {
    return pack_op2<Op>(fmaf(h0, tanh_approx(h0), h0), fmaf(h1, tanh_approx(h1), h1));
  } else {
    static_assert(std::is_same_v<Op, Bf16Tag>, "the packed SiLU is built for bf16 only");
    const uint32_t h = pack_bf16x2(h0, h1);
    uint32_t t, r;
    asm("tanh.approx.bf16x2 %0, %1;" : "=r"(t) : "r"(h));
    asm("fma.rn.bf16x2 %0, %1, %2, %1;" : "=r"(r) : "r"(h), "r"(t));
    return r;
  }
}

// One evaluation of the network on the warpgroup's 64 rows: out = net(scale x, tt) in the accumulator layout
// (KX / 2 floats per thread: n8 block nb holds (row g, 8nb+2q), (g, +1), (g + 8, 8nb+2q), (g + 8, +1)); tt0 / tt1:
// the time input of the thread's rows g and g + 8. kScaled: the network reads scale * x (else x; scale unused).
// kPingPong (FlashAttention-3's ping-pong schedule, Shah et al. 2024, §3.1): warpgroup wg waits on barrier 1 + wg
// before issuing layer 2 and arrives on the other's barrier after, so one warpgroup's layer-2 GEMM runs while the
// other does its SiLU / layer 3 / update / layer 1; both warpgroups must then call this equally often.
template <class Op, int KX, int kSiluMode, bool kPingPong, bool kScaled>
__device__ __forceinline__ void wg_eval(const WgNet<KX>& w, const float (&x)[KX / 2], float scale, float tt0, float tt1,
                                        float (&out)[KX / 2], int wg, int q) {
  constexpr int kH = kWgHidden, NB = KX / 8;
  // ---- layer 1: acc = w1t tt + b1 (fp32) + x W1x^T (wgmma)
  float acc[kH / 2];
#pragma unroll
  for (int j = 0; j < kH / 8; ++j) {
    const float4 c = w.c1[4 * j + q];
    acc[4 * j + 0] = fmaf(c.x, tt0, c.z);
    acc[4 * j + 1] = fmaf(c.y, tt0, c.w);
    acc[4 * j + 2] = fmaf(c.x, tt1, c.z);
    acc[4 * j + 3] = fmaf(c.y, tt1, c.w);
  }
  uint32_t xa[KX / 16][4];
#pragma unroll
  for (int j = 0; j < KX / 16; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const float lo = x[8 * j + 2 * r], hi = x[8 * j + 2 * r + 1];
      xa[j][r] = kScaled ? pack_op2<Op>(scale * lo, scale * hi) : pack_op2<Op>(lo, hi);
    }
  wgmma_fence();
#pragma unroll
  for (int j = 0; j < KX / 16; ++j) wgmma_m64n256k16(acc, xa[j], wgmma_desc_add(w.d1, 32 * j), 1, Op{});
  wgmma_commit();
  wgmma_wait_all();
  // ---- SiLU(h1) -> A fragments (bias already in the accumulators: hb = 0)
  uint32_t h[kH / 16][4];
#pragma unroll
  for (int kb = 0; kb < kH / 16; ++kb)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      // register r: n8 block 2kb + (r >> 1), row half (r & 1)
      const int base = 4 * (2 * kb + (r >> 1)) + 2 * (r & 1);
      h[kb][r] = wg_silu_pack<Op, kSiluMode>(acc[base], acc[base + 1], 0.f, 0.f);
    }
  // ---- layer 2: acc = h1 W2^T (wgmma, 16 k-steps)
  if (kPingPong) named_bar_sync(1 + wg, 256);
  wgmma_fence();
#pragma unroll
  for (int kb = 0; kb < kH / 16; ++kb)
    wgmma_m64n256k16(acc, h[kb], wgmma_desc_add(w.d2, (kb >> 2) * (kH * 128) + (kb & 3) * 32), kb > 0, Op{});
  wgmma_commit();
  if (kPingPong) named_bar_arrive(2 - wg, 256);
  wgmma_wait_all();
  // ---- SiLU(h2 + b2) -> A fragments
#pragma unroll
  for (int kb = 0; kb < kH / 16; ++kb)
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const int nb = 2 * kb + (r >> 1), base = 4 * nb + 2 * (r & 1);
      const float2 hb = w.hb2[4 * nb + q];
      h[kb][r] = wg_silu_pack<Op, kSiluMode>(acc[base], acc[base + 1], hb.x, hb.y);
    }
  // ---- layer 3: out = b3 + h2 W3^T (wgmma m64nKXk16, 16 k-steps)
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    const float2 bb = *reinterpret_cast<const float2*>(w.b3 + nb * 8 + 2 * q);
    out[4 * nb + 0] = bb.x;
    out[4 * nb + 1] = bb.y;
    out[4 * nb + 2] = bb.x;
    out[4 * nb + 3] = bb.y;
  }
  wgmma_fence();
#pragma unroll
  for (int kb = 0; kb < kH / 16; ++kb) {
    const uint64_t d = wgmma_desc_add(w.d3, (kb >> 2) * WgLayout<KX>::kW3Block + (kb & 3) * 32);
    if constexpr (KX == 16) wgmma_m64n16k16(out, h[kb], d, 1, Op{});
    else wgmma_m64n64k16(out, h[kb], d, 1, Op{});
  }
  wgmma_commit();
  wgmma_wait_all();
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace diffscope::kernels
