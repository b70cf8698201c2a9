// solver_wgmma.cu — the solver kernel (solver_kernels.h: dpmpp-2m, dpmpp-2m-sde, heun, euler-ancestral, karras and
// custom-sigma tables, every model family's table) on Hopper warpgroup tensor cores (sm_90a), bf16 or fp16 operands
// with fp32 accumulation: the network is wg_eval (shared/wgmma_net.cuh), the step update solver_update.cuh's, exact
// fp32 in registers.
// Persistent CTAs of two warpgroups, 64 rows each for all steps, as denoise_wgmma.cu, always on the ping-pong schedule
// (the kernel option wgmma_pingpong is the denoiser's). The previous data prediction
// (dpmpp) and heun's g1 stay in registers at dim <= 16; at dim <= 64 the registers are taken by the network's
// accumulators and they live in SolverArgs::prev / e1 (each element read and written by the thread that owns it).
// Steps are uniform over rows (no per-row t), so both warpgroups evaluate the network equally often and the
// ping-pong barriers always pair up, heun's second evaluation included.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include "kernels/shared/cuda_error.h"
#include "kernels/shared/denoise_common.cuh"
#include "kernels/shared/wgmma_net.cuh"
#include "kernels/solver/solver_kernels.h"
#include "kernels/solver/solver_update.cuh"

namespace diffscope::kernels {
namespace {

constexpr int kThreads = 256;

// SCALED: the network reads c_in x (SolverSteps::scaled()); GMAP: heun's map Gx ... Go2 where set.
template <class Op, int KX, bool kPingPong, bool SCALED, bool GMAP>
__global__ void __launch_bounds__(kThreads, 1) kernel_solver_wgmma(const SolverArgs a) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int NB = KX / 8, NE = NB * 4;
  constexpr bool kRegs = KX == 16;
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = wg_smem_base(smem_raw);
  const int dim = a.net.dim;
  wg_load_weights<Op, KX>(smem, a.net, kThreads);
  fence_proxy_async_smem();
  __syncthreads();
  const WgNet<KX> w = wg_net<KX>(smem);
  const SolverSteps& tab = a.tab;

  const int wg = threadIdx.x >> 7, wq = (threadIdx.x >> 5) & 3, lane = threadIdx.x & 31;
  const int g = lane >> 2, q = lane & 3;
  const int tiles = (a.B + 63) / 64, pairs = (tiles + 1) / 2;
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  if (kPingPong && wg == 1) named_bar_arrive(1, kThreads);  // warpgroup 0 goes first

  for (int pair = blockIdx.x; pair < pairs; pair += gridDim.x) {
    const int tile = 2 * pair + wg;
    if (!kPingPong && tile >= tiles) break;
    const int rows[2] = {tile * 64 + wq * 16 + g, tile * 64 + wq * 16 + g + 8};
    float xs[NE];
    load_acc_rows<NB>(xs, a.x, rows, q, a.B, dim);
    SolverAux<kRegs, NE> aux;  // prev (dpmpp) or g1 (heun): no table has both
    if constexpr (kRegs) {
      if (tab.P && a.k_begin > 0) load_acc_rows<NB>(aux.v, a.prev, rows, q, a.B, dim);
    }
    float* aux_mem = tab.P ? a.prev : a.e1;

    for (int k = a.k_begin; k < a.k_end; ++k) {
      const float tt = __ldg(tab.tt + k);
      const float cin = SCALED && tab.c_in ? __ldg(tab.c_in + k) : 1.f;
      float o[NE];
      wg_eval<Op, KX, 0, kPingPong, SCALED>(w, xs, cin, tt, tt, o, wg, q);
      const SolverCoefs c = solver_coefs<GMAP>(tab, k);
      solver_stage1<NB>(a, c, rows, q, xs, o, aux, aux_mem);
      if (c.H != 0.f) {  // uniform over the CTA: both warpgroups evaluate twice
        const float tt2 = __ldg(tab.tt2 + k);
        const float cin2 = SCALED && tab.c_in2 ? __ldg(tab.c_in2 + k) : 1.f;
        wg_eval<Op, KX, 0, kPingPong, SCALED>(w, xs, cin2, tt2, tt2, o, wg, q);
        const bool gmap2 = GMAP && tab.Gx2;
        solver_stage2<NB>(a, c, gmap2 ? __ldg(tab.Gx2 + k) : 0.f, gmap2 ? __ldg(tab.Go2 + k) : 1.f, gmap2, rows, q, xs,
                          o, aux, aux_mem);
      }
      if (a.frames) store_acc_rows<NB>(xs, a.frames + (k - a.k_begin) * frame_stride, rows, q, a.B, dim);
    }
    store_acc_rows<NB>(xs, a.x, rows, q, a.B, dim);
    if constexpr (kRegs) {
      if (tab.P) store_acc_rows<NB>(aux.v, a.prev, rows, q, a.B, dim);
    }
  }
  if (kPingPong && wg == 0) named_bar_sync(1, kThreads);  // the arrival of warpgroup 1's last turn
#endif  // __CUDA_ARCH_FEAT_SM90_ALL
}

template <class Op, int KX, bool kPingPong, bool SCALED, bool GMAP>
void launch_sw(const SolverArgs& a, const LaunchContext& ctx, cudaStream_t s) {
  using L = WgLayout<KX>;
  auto kern = kernel_solver_wgmma<Op, KX, kPingPong, SCALED, GMAP>;
  ctx.cache->get(reinterpret_cast<const void*>(kern), 0, [&] {  // the shared-memory opt-in, once per device
    set_max_dynamic_smem(kern, L::kAlloc);
    return 1;
  });
  const int sms = std::max(1, ctx.caps.sm_count);
  const int tiles = (a.B + 63) / 64;
  const int grid = std::max(1, std::min(sms, (tiles + 1) / 2));
  kern<<<grid, kThreads, L::kAlloc, s>>>(a);
}

template <class Op, int KX>
void launch_kinds(const SolverArgs& a, const LaunchContext& ctx, cudaStream_t s) {
  if (a.tab.scaled()) launch_sw<Op, KX, true, true, true>(a, ctx, s);
  else if (a.tab.heun_map()) launch_sw<Op, KX, true, false, true>(a, ctx, s);
  else launch_sw<Op, KX, true, false, false>(a, ctx, s);
}

}  // namespace

void launch_solver_wgmma(const SolverArgs& a, Precision p, const LaunchContext& ctx, cudaStream_t s) {
  if (!ctx.caps.wgmma() || !denoise_tc_shape(a.net.dim, a.net.hidden) || !precision_16bit(p))
    throw std::invalid_argument("wgmma solver: needs an sm_90a build on a compute capability 9.0 device, hidden 256, "
                                "dim <= 64, bf16 or fp16");
  if (a.B <= 0 || a.k_end <= a.k_begin) return;
  const bool f16 = p == Precision::F16;
  if (a.net.dim <= 16) f16 ? launch_kinds<F16Tag, 16>(a, ctx, s) : launch_kinds<Bf16Tag, 16>(a, ctx, s);
  else f16 ? launch_kinds<F16Tag, 64>(a, ctx, s) : launch_kinds<Bf16Tag, 64>(a, ctx, s);
}

}  // namespace diffscope::kernels
