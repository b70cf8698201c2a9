// denoise_wgmma.cu — the large-batch bf16 denoiser on Hopper warpgroup tensor cores (sm_90a, wgmma.mma_async).
// Persistent CTAs of kWarpgroups warpgroups; each warpgroup owns 64 rows for all steps. All three layers run as
// wgmma with A from registers (wgmma.cuh): x (bf16) for layer 1, whose accumulators start at w1t t/T + b1 in fp32;
// SiLU(h1) packed to bf16 for layer 2 (m64n256k16, 16 k-steps, W2 256x256 bf16 resident in shared memory with the
// 128-byte swizzle); SiLU(h2 + b2) for layer 3 (m64nKXk16, accumulators start at b3). x and eps stay fp32 in
// registers in the accumulator layout, so the step update (SEMANTICS §3, noise §7) and the trajectory writes are
// exact fp32, as in denoise_tc.cu (same operand precision: bf16 x, W, h1, h2; fp32 time, biases, accumulation).
// The weights are converted from the fp32 PyTorch-layout copies (DeviceNet::W1, W2, W3) once per CTA.
// Built only in an sm_90a pass (__CUDA_ARCH_FEAT_SM90_ALL); other architectures compile an empty body and
// It runs only where the build has sm_90a code (DIFFSCOPE_HAVE_SM90A: build_has_sm90a) and the device is 9.0.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "base/philox_normal.h"
#include "kernels/kernels.h"
#include "kernels/shared/cuda_error.h"
#include "kernels/shared/denoise_common.cuh"
#include "kernels/shared/mma.cuh"
#include "kernels/shared/wgmma.cuh"

namespace diffscope::kernels {

namespace {

constexpr int kWarpgroups = 2;
constexpr int kThreads = kWarpgroups * 128;
constexpr int kH = 256;

// Shared-memory layout (byte offsets from a 1024-aligned base). KX: dim padded to 16 (layer-1 K, layer-3 N).
template <int KX>
struct WgLayout {
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

// SiLU of two fp32 pre-activations (z = acc + b via h = z/2 = fma(acc, 0.5, b/2)), packed to bf16x2.
// Mode 0: fp32 tanh.approx (two MUFU ops). Mode 1: tanh.approx.bf16x2 and the final fma in bf16x2 (one MUFU op
// for the pair if the hardware packs it; h rounded to bf16 first: about twice the bf16 rounding error of mode 0).
template <int kSiluMode>
__device__ __forceinline__ uint32_t silu_pack(float acc0, float acc1, float hb0, float hb1) {
  const float h0 = fmaf(acc0, 0.5f, hb0), h1 = fmaf(acc1, 0.5f, hb1);
  if constexpr (kSiluMode == 0) {
    return pack_bf16x2(fmaf(h0, tanh_approx(h0), h0), fmaf(h1, tanh_approx(h1), h1));
  } else {
    const uint32_t h = pack_bf16x2(h0, h1);
    uint32_t t, r;
    asm("tanh.approx.bf16x2 %0, %1;" : "=r"(t) : "r"(h));
    asm("fma.rn.bf16x2 %0, %1, %2, %1;" : "=r"(r) : "r"(h), "r"(t));
    return r;
  }
}

// kPingPong: the two warpgroups take turns issuing layer 2 (FlashAttention-3's "ping-pong" schedule, Shah et al.
// 2024, §3.1): warpgroup w waits on barrier 1 + w before issuing and arrives on the other's barrier after, so one
// warpgroup's layer-2 GEMM runs while the other does its SiLU / layer 3 / update / layer 1 (tensor cores and MUFU
// busy at once) instead of both in step. Both warpgroups then run the same number of tiles (a tile past B is
// computed on zeros and neither read nor written) so every barrier has both sides.
template <int KX, int kSiluMode, bool kPingPong>
__global__ void __launch_bounds__(kThreads, 1) kernel_denoise_wgmma(const DenoiseArgs a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  using L = WgLayout<KX>;
  constexpr int NB = KX / 8;  // n8 blocks of x / eps
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (static_cast<uint32_t>(__cvta_generic_to_shared(smem_raw)) & 1023)) & 1023);
  const int dim = a.net.dim;

  // ---- weights -> shared memory (bf16, K-major, 128-byte swizzle; wgmma.cuh), once per CTA
  {
    const float* __restrict__ W2 = a.net.W2;
    for (int i = threadIdx.x; i < kH * kH / 8; i += kThreads) {  // 16-byte chunks: row n, chunk kc of 32
      const int n = i >> 5, kc = i & 31;
      const float4 v0 = __ldg(reinterpret_cast<const float4*>(W2 + n * kH + kc * 8));
      const float4 v1 = __ldg(reinterpret_cast<const float4*>(W2 + n * kH + kc * 8 + 4));
      const uint4 p = make_uint4(pack_bf16x2(v0.x, v0.y), pack_bf16x2(v0.z, v0.w), pack_bf16x2(v1.x, v1.y),
                                 pack_bf16x2(v1.z, v1.w));
      *reinterpret_cast<uint4*>(smem + L::kW2 + (kc >> 3) * (kH * 128) + n * 128 + (((kc & 7) ^ (n & 7)) << 4)) = p;
    }
    const float* __restrict__ W1 = a.net.W1;  // (hidden, dim + 1)
    for (int i = threadIdx.x; i < kH * 8; i += kThreads) {
      const int n = i >> 3, c = i & 7;
      float v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) {
        const int k = c * 8 + e;
        v[e] = k < dim ? __ldg(W1 + n * (dim + 1) + k) : 0.f;
      }
      const uint4 p = make_uint4(pack_bf16x2(v[0], v[1]), pack_bf16x2(v[2], v[3]), pack_bf16x2(v[4], v[5]),
                                 pack_bf16x2(v[6], v[7]));
      *reinterpret_cast<uint4*>(smem + L::kW1 + n * 128 + ((c ^ (n & 7)) << 4)) = p;
    }
    const float* __restrict__ W3 = a.net.W3;  // (dim, hidden)
    for (int i = threadIdx.x; i < KX * 32; i += kThreads) {
      const int n = i >> 5, kc = i & 31;
      float v[8];
#pragma unroll
      for (int e = 0; e < 8; ++e) v[e] = n < dim ? __ldg(W3 + n * kH + kc * 8 + e) : 0.f;
      const uint4 p = make_uint4(pack_bf16x2(v[0], v[1]), pack_bf16x2(v[2], v[3]), pack_bf16x2(v[4], v[5]),
                                 pack_bf16x2(v[6], v[7]));
      *reinterpret_cast<uint4*>(smem + L::kW3 + (kc >> 3) * L::kW3Block + n * 128 + (((kc & 7) ^ (n & 7)) << 4)) = p;
    }
    const float* w1t = a.net.W1T + static_cast<size_t>(dim) * kH;  // the time column W1[:, dim]
    float4* c1 = reinterpret_cast<float4*>(smem + L::kC1);
    float2* hb2 = reinterpret_cast<float2*>(smem + L::kHb2);
    for (int p = threadIdx.x; p < kH / 2; p += kThreads) {
      c1[p] = make_float4(w1t[2 * p], w1t[2 * p + 1], a.net.b1[2 * p], a.net.b1[2 * p + 1]);
      hb2[p] = make_float2(0.5f * a.net.b2[2 * p], 0.5f * a.net.b2[2 * p + 1]);
    }
    float* b3 = reinterpret_cast<float*>(smem + L::kB3);
    for (int i = threadIdx.x; i < KX; i += kThreads) b3[i] = i < dim ? a.net.b3[i] : 0.f;
  }
  fence_proxy_async_smem();
  __syncthreads();

  const float4* c1 = reinterpret_cast<const float4*>(smem + L::kC1);
  const float2* hb2 = reinterpret_cast<const float2*>(smem + L::kHb2);
  const float* b3 = reinterpret_cast<const float*>(smem + L::kB3);
  const uint64_t d1 = wgmma_desc_sw128(smem + L::kW1), d2 = wgmma_desc_sw128(smem + L::kW2),
                 d3 = wgmma_desc_sw128(smem + L::kW3);

  const int wg = threadIdx.x >> 7, wq = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, q = lane & 3;
  const int tiles = (a.B + 63) / 64, pairs = (tiles + 1) / 2;
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  static_assert(kWarpgroups == 2, "the tile pairs and the ping-pong barriers assume two warpgroups");
  if (kPingPong && wg == 1) named_bar_arrive(1, kThreads);  // warpgroup 0 goes first

  for (int pair = blockIdx.x; pair < pairs; pair += gridDim.x) {
    const int tile = 2 * pair + wg;
    if (!kPingPong && tile >= tiles) break;
    const int rows[2] = {tile * 64 + wq * 16 + g, tile * 64 + wq * 16 + g + 8};
    float xs[NB * 4];  // n8 block nb: (rows[0], 8nb+2q), (rows[0], +1), (rows[1], 8nb+2q), (rows[1], +1)
    load_acc_rows<NB>(xs, a.x, rows, q, a.B, dim);

    for (int k = a.k_begin; k < a.k_end; ++k) {
      const RowStep st[2] = {row_step(a, rows[0], k), row_step(a, rows[1], k)};
      // ---- layer 1: acc = w1t t/T + b1 (fp32) + x W1x^T (wgmma)
      float acc[kH / 2];
#pragma unroll
      for (int j = 0; j < kH / 8; ++j) {
        const float4 c = c1[4 * j + q];
        acc[4 * j + 0] = fmaf(c.x, st[0].tt, c.z);
        acc[4 * j + 1] = fmaf(c.y, st[0].tt, c.w);
        acc[4 * j + 2] = fmaf(c.x, st[1].tt, c.z);
        acc[4 * j + 3] = fmaf(c.y, st[1].tt, c.w);
      }
      uint32_t xa[KX / 16][4];
#pragma unroll
      for (int j = 0; j < KX / 16; ++j) {
        xa[j][0] = pack_bf16x2(xs[8 * j + 0], xs[8 * j + 1]);
        xa[j][1] = pack_bf16x2(xs[8 * j + 2], xs[8 * j + 3]);
        xa[j][2] = pack_bf16x2(xs[8 * j + 4], xs[8 * j + 5]);
        xa[j][3] = pack_bf16x2(xs[8 * j + 6], xs[8 * j + 7]);
      }
      wgmma_fence();
#pragma unroll
      for (int j = 0; j < KX / 16; ++j) wgmma_m64n256k16(acc, xa[j], wgmma_desc_add(d1, 32 * j), 1);
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
          h[kb][r] = silu_pack<kSiluMode>(acc[base], acc[base + 1], 0.f, 0.f);
        }
      // ---- layer 2: acc = h1 W2^T (wgmma, 16 k-steps)
      if (kPingPong) named_bar_sync(1 + wg, kThreads);
      wgmma_fence();
#pragma unroll
      for (int kb = 0; kb < kH / 16; ++kb)
        wgmma_m64n256k16(acc, h[kb], wgmma_desc_add(d2, (kb >> 2) * (kH * 128) + (kb & 3) * 32), kb > 0);
      wgmma_commit();
      if (kPingPong) named_bar_arrive(2 - wg, kThreads);
      wgmma_wait_all();
      float eps[NB * 4];
      // ---- SiLU(h2 + b2) -> A fragments
#pragma unroll
      for (int kb = 0; kb < kH / 16; ++kb)
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const int nb = 2 * kb + (r >> 1), base = 4 * nb + 2 * (r & 1);
          const float2 hb = hb2[4 * nb + q];
          h[kb][r] = silu_pack<kSiluMode>(acc[base], acc[base + 1], hb.x, hb.y);
        }
      // ---- layer 3: eps = b3 + h2 W3^T (wgmma m64nKXk16, 16 k-steps)
#pragma unroll
      for (int nb = 0; nb < NB; ++nb) {
        const float2 bb = *reinterpret_cast<const float2*>(b3 + nb * 8 + 2 * q);
        eps[4 * nb + 0] = bb.x;
        eps[4 * nb + 1] = bb.y;
        eps[4 * nb + 2] = bb.x;
        eps[4 * nb + 3] = bb.y;
      }
      wgmma_fence();
#pragma unroll
      for (int kb = 0; kb < kH / 16; ++kb) {
        const uint64_t d = wgmma_desc_add(d3, (kb >> 2) * L::kW3Block + (kb & 3) * 32);
        if constexpr (KX == 16) wgmma_m64n16k16(eps, h[kb], d, 1);
        else wgmma_m64n64k16(eps, h[kb], d, 1);
      }
      wgmma_commit();
      wgmma_wait_all();
      // ---- the affine update (fp32), noise where S != 0
#pragma unroll
      for (int hr = 0; hr < 2; ++hr) {
        const RowStep& s = st[hr];
        if (!s.active) continue;
#pragma unroll
        for (int nb = 0; nb < NB; ++nb) {
          float z0 = 0.f, z1 = 0.f;
          if (s.S != 0.f && nb * 8 < dim) {
            float z[4];
            philox_normal4(a.seed, a.row_offset + rows[hr], static_cast<uint32_t>(s.t), (nb * 8 + 2 * q) / 4, z);
            z0 = (q & 1) ? z[2] : z[0];
            z1 = (q & 1) ? z[3] : z[1];
          }
          float& x0 = xs[4 * nb + 2 * hr];
          float& x1 = xs[4 * nb + 2 * hr + 1];
          x0 = fmaf(s.S, z0, fmaf(s.C, eps[4 * nb + 2 * hr], s.A * x0));
          x1 = fmaf(s.S, z1, fmaf(s.C, eps[4 * nb + 2 * hr + 1], s.A * x1));
          const int c = nb * 8 + 2 * q;
          if (c >= dim) x0 = 0.f;
          if (c + 1 >= dim) x1 = 0.f;
        }
      }
      if (a.frames) store_acc_rows<NB>(xs, a.frames + (k - a.k_begin) * frame_stride, rows, q, a.B, dim);
    }
    store_acc_rows<NB>(xs, a.x, rows, q, a.B, dim);
  }
  if (kPingPong && wg == 0) named_bar_sync(1, kThreads);  // the arrival of warpgroup 1's last turn
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

template <int KX, int kSiluMode, bool kPingPong>
void launch_wg(const DenoiseArgs& a, const LaunchContext& ctx, cudaStream_t s) {
  using L = WgLayout<KX>;
  auto kern = kernel_denoise_wgmma<KX, kSiluMode, kPingPong>;
  ctx.cache->get(reinterpret_cast<const void*>(kern), 0, [&] {  // the shared-memory opt-in, once per device
    set_max_dynamic_smem(kern, L::kAlloc);
    return 1;
  });
  const int sms = std::max(1, ctx.caps.sm_count);
  const int tiles = (a.B + 63) / 64;
  const int grid = std::max(1, std::min(sms, (tiles + kWarpgroups - 1) / kWarpgroups));
  kern<<<grid, kThreads, L::kAlloc, s>>>(a);
}

}  // namespace

// The plan chooses this kernel only for an sm_90a build on a compute capability 9.0 device (DeviceCaps::wgmma),
// hidden 256, dim <= 64; the SiLU mode and the ping-pong schedule are the plan's.
void launch_denoise_wgmma(const DenoiseArgs& a, const DenoisePlan& plan, const LaunchContext& ctx, cudaStream_t s) {
  if (!ctx.caps.wgmma() || !denoise_tc_shape(a.net.dim, a.net.hidden))
    throw std::invalid_argument("wgmma denoiser: needs an sm_90a build on a compute capability 9.0 device, hidden 256, dim <= 64");
  const bool fast_silu = plan.wgmma_silu_bf16x2, pp = plan.wgmma_pingpong;
  auto launch_kx = [&](auto kx) {
    constexpr int KX = decltype(kx)::value;
    if (pp) fast_silu ? launch_wg<KX, 1, true>(a, ctx, s) : launch_wg<KX, 0, true>(a, ctx, s);
    else fast_silu ? launch_wg<KX, 1, false>(a, ctx, s) : launch_wg<KX, 0, false>(a, ctx, s);
  };
  if (a.net.dim <= 16) launch_kx(std::integral_constant<int, 16>{});
  else launch_kx(std::integral_constant<int, 64>{});
}

bool build_has_sm90a() {
#if defined(DIFFSCOPE_HAVE_SM90A)
  return true;
#else
  return false;
#endif
}

}  // namespace diffscope::kernels
