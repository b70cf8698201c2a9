// denoise_wgmma.cu — the large-batch bf16 / fp16 denoiser on Hopper warpgroup tensor cores (sm_90a, wgmma.mma_async).
// Persistent CTAs of kWarpgroups warpgroups; each warpgroup owns 64 rows for all steps and evaluates the network with
// wg_eval (shared/wgmma_net.cuh: all three layers on wgmma, 16-bit operands, fp32 time, biases and accumulation).
// x and eps stay fp32 in registers in the accumulator layout, so the step update (SEMANTICS §3, noise §7) and the
// trajectory writes are exact fp32, as in denoise_tc.cu.
// Built only in an sm_90a pass (__CUDA_ARCH_FEAT_SM90_ALL); other architectures compile an empty body.
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
#include "kernels/shared/wgmma_net.cuh"

namespace diffscope::kernels {

namespace {

constexpr int kWarpgroups = 2;
constexpr int kThreads = kWarpgroups * 128;

// The two warpgroups take turns issuing layer 2 when kPingPong (wg_eval); both then run the same number of tiles
// (a tile past B is computed on zeros and neither read nor written) so every barrier has both sides.
template <class Op, int KX, int kSiluMode, bool kPingPong>
__global__ void __launch_bounds__(kThreads, 1) kernel_denoise_wgmma(const DenoiseArgs a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int NB = KX / 8;  // n8 blocks of x / eps
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = wg_smem_base(smem_raw);
  const int dim = a.net.dim;
  wg_load_weights<Op, KX>(smem, a.net, kThreads);  // once per CTA
  fence_proxy_async_smem();
  __syncthreads();
  const WgNet<KX> w = wg_net<KX>(smem);

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
      float eps[NB * 4];
      wg_eval<Op, KX, kSiluMode, kPingPong, false>(w, xs, 1.f, st[0].tt, st[1].tt, eps, wg, q);
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

template <class Op, int KX, int kSiluMode, bool kPingPong>
void launch_wg(const DenoiseArgs& a, const LaunchContext& ctx, cudaStream_t s) {
  using L = WgLayout<KX>;
  auto kern = kernel_denoise_wgmma<Op, KX, kSiluMode, kPingPong>;
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
void launch_denoise_wgmma(const DenoiseArgs& a, Precision p, const DenoisePlan& plan, const LaunchContext& ctx,
                          cudaStream_t s) {
  if (!ctx.caps.wgmma() || !denoise_tc_shape(a.net.dim, a.net.hidden) || !precision_16bit(p))
    throw std::invalid_argument("wgmma denoiser: needs an sm_90a build on a compute capability 9.0 device, hidden 256, "
                                "dim <= 64, bf16 or fp16");
  const bool fast_silu = plan.wgmma_silu_bf16x2, pp = plan.wgmma_pingpong;
  // The packed-SiLU variant (a special-function measure, kernel option wgmma_silu) is built for bf16 only.
  auto launch_kx = [&](auto kx) {
    constexpr int KX = decltype(kx)::value;
    if (p == Precision::F16) pp ? launch_wg<F16Tag, KX, 0, true>(a, ctx, s) : launch_wg<F16Tag, KX, 0, false>(a, ctx, s);
    else if (pp) fast_silu ? launch_wg<Bf16Tag, KX, 1, true>(a, ctx, s) : launch_wg<Bf16Tag, KX, 0, true>(a, ctx, s);
    else fast_silu ? launch_wg<Bf16Tag, KX, 1, false>(a, ctx, s) : launch_wg<Bf16Tag, KX, 0, false>(a, ctx, s);
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
