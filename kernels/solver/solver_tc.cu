// solver_tc.cu — the solver kernel (solver_kernels.h: dpmpp-2m, dpmpp-2m-sde, heun, euler-ancestral, karras and
// custom-sigma tables, every model family's table) on mma.sync tensor cores: bf16, fp16 or tf32 operands with fp32
// accumulation; the network is tc_eval (shared/tc_net.cuh, denoise_tc.cu's), the step update solver_update.cuh's,
// exact fp32 in registers. Persistent CTAs of 8 warps; each warp owns 16*MT rows for all steps. The previous data
// prediction (dpmpp) and heun's g1 stay in registers at dim <= 16, in SolverArgs::prev / e1 at dim <= 64.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "kernels/shared/cuda_error.h"
#include "kernels/shared/denoise_common.cuh"
#include "kernels/shared/mma.cuh"
#include "kernels/shared/tc_net.cuh"
#include "kernels/solver/solver_kernels.h"
#include "kernels/solver/solver_update.cuh"

namespace diffscope::kernels {
namespace {

constexpr int kWarps = 8;

// SCALED: the network reads c_in x (SolverSteps::scaled()); GMAP: heun's map Gx ... Go2 where set.
template <class P, int H, int KX, int MT, int NC, bool SCALED, bool GMAP>
__global__ void __launch_bounds__(kWarps * 32, 1)
    kernel_solver_tc(const SolverArgs a, const BFrag<P>* __restrict__ gF1, const BFrag<P>* __restrict__ gF2,
                     const BFrag<P>* __restrict__ gF3, const float* __restrict__ w1t_g, int n2s) {
  constexpr int NB = KX / 8, NE = NB * 4;
  constexpr bool kRegs = KX == 16;
  extern __shared__ uint4 smem_tc[];
  const TcNet<P, H, KX> w = tc_load_weights<P, H, KX>(smem_tc, a.net, gF1, gF2, gF3, w1t_g, n2s);
  __syncthreads();
  const SolverSteps& tab = a.tab;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int dim = a.net.dim;
  const int tiles = (a.B + 16 * MT - 1) / (16 * MT);
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  float* aux_mem = tab.P ? a.prev : a.e1;

  for (int tile = blockIdx.x * kWarps + warp; tile < tiles; tile += gridDim.x * kWarps) {
    int rows[MT][2];
    float xs[MT][NB][4];
    SolverAux<kRegs, NE> aux[MT];  // prev (dpmpp) or g1 (heun): no table has both
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      rows[m][0] = tile * 16 * MT + m * 16 + g;
      rows[m][1] = rows[m][0] + 8;
      load_acc_rows<NB>(&xs[m][0][0], a.x, rows[m], q, a.B, dim);
      if constexpr (kRegs) {
        if (tab.P && a.k_begin > 0) load_acc_rows<NB>(aux[m].v, a.prev, rows[m], q, a.B, dim);
      }
    }
    for (int k = a.k_begin; k < a.k_end; ++k) {
      float tt[MT][2];
      const float t1 = __ldg(tab.tt + k);
#pragma unroll
      for (int m = 0; m < MT; ++m) tt[m][0] = tt[m][1] = t1;
      const float cin = SCALED && tab.c_in ? __ldg(tab.c_in + k) : 1.f;
      float o[MT][NB][4];
      tc_eval<P, H, KX, MT, NC, SCALED>(w, xs, cin, tt, o, lane, q);
      const SolverCoefs c = solver_coefs<GMAP>(tab, k);
#pragma unroll
      for (int m = 0; m < MT; ++m) solver_stage1<NB>(a, c, rows[m], q, &xs[m][0][0], &o[m][0][0], aux[m], aux_mem);
      if (c.H != 0.f) {
        const float t2 = __ldg(tab.tt2 + k);
#pragma unroll
        for (int m = 0; m < MT; ++m) tt[m][0] = tt[m][1] = t2;
        const float cin2 = SCALED && tab.c_in2 ? __ldg(tab.c_in2 + k) : 1.f;
        tc_eval<P, H, KX, MT, NC, SCALED>(w, xs, cin2, tt, o, lane, q);
        const bool gmap2 = GMAP && tab.Gx2;
        const float Gx2 = gmap2 ? __ldg(tab.Gx2 + k) : 0.f, Go2 = gmap2 ? __ldg(tab.Go2 + k) : 1.f;
#pragma unroll
        for (int m = 0; m < MT; ++m)
          solver_stage2<NB>(a, c, Gx2, Go2, gmap2, rows[m], q, &xs[m][0][0], &o[m][0][0], aux[m], aux_mem);
      }
      if (a.frames) {
#pragma unroll
        for (int m = 0; m < MT; ++m)
          store_acc_rows<NB>(&xs[m][0][0], a.frames + (k - a.k_begin) * frame_stride, rows[m], q, a.B, dim);
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      store_acc_rows<NB>(&xs[m][0][0], a.x, rows[m], q, a.B, dim);
      if constexpr (kRegs) {
        if (tab.P) store_acc_rows<NB>(aux[m].v, a.prev, rows[m], q, a.B, dim);
      }
    }
  }
}

template <class P, int H, int KX, int MT, int NC, bool SCALED, bool GMAP>
void launch_st(const SolverArgs& a, const void* f1, const void* f2, const void* f3, int num_sms, cudaStream_t s) {
  using BF = BFrag<P>;
  using N = TcNet<P, H, KX>;
  constexpr size_t fixed = N::fixed_bytes(), per_nb2 = N::per_nb2_bytes(), kMaxSmem = 227 * 1024;
  const int n2s = static_cast<int>(std::min<size_t>(N::NB1, (kMaxSmem - fixed) / per_nb2));
  const size_t smem = fixed + n2s * per_nb2;
  auto kern = kernel_solver_tc<P, H, KX, MT, NC, SCALED, GMAP>;
  set_max_dynamic_smem(kern, smem);
  const int tiles = (a.B + 16 * MT - 1) / (16 * MT);
  const int grid = std::max(1, std::min(num_sms, (tiles + kWarps - 1) / kWarps));
  const float* w1t = a.net.W1T + static_cast<size_t>(a.net.dim) * a.net.hidden;  // the time column W1[:, dim]
  kern<<<grid, kWarps * 32, smem, s>>>(a, static_cast<const BF*>(f1), static_cast<const BF*>(f2),
                                       static_cast<const BF*>(f3), w1t, n2s);
}

// The instantiations of denoise_tc.cu (tiles and layer-2 chunks per operand type and width), per table kind.
template <class P, int KX, int MT, int NC>
void launch_kinds(const SolverArgs& a, const void* f1, const void* f2, const void* f3, int num_sms, cudaStream_t s) {
  if (a.tab.scaled()) launch_st<P, 256, KX, MT, NC, true, true>(a, f1, f2, f3, num_sms, s);
  else if (a.tab.heun_map()) launch_st<P, 256, KX, MT, NC, false, true>(a, f1, f2, f3, num_sms, s);
  else launch_st<P, 256, KX, MT, NC, false, false>(a, f1, f2, f3, num_sms, s);
}

}  // namespace

void launch_solver_tc(const SolverArgs& a, Precision p, int num_sms, cudaStream_t s) {
  const DeviceNet& n = a.net;
  if (!denoise_tc_shape(n.dim, n.hidden) || p == Precision::Fp32 || !n.f1_bf16)
    throw std::invalid_argument("tensor-core solver: needs hidden 256, dim <= 64, tf32 / bf16 / fp16 and the fragments");
  if (a.B <= 0 || a.k_end <= a.k_begin) return;
  const int sms = std::max(1, num_sms);
  const bool narrow = n.dim <= 16;
  if (p == Precision::Bf16) {
    if (narrow) launch_kinds<Bf16Tag, 16, 2, 2>(a, n.f1_bf16, n.f2_bf16, n.f3_bf16, sms, s);
    else launch_kinds<Bf16Tag, 64, 1, 4>(a, n.f1_bf16, n.f2_bf16, n.f3_bf16, sms, s);
  } else if (p == Precision::F16) {
    if (narrow) launch_kinds<F16Tag, 16, 2, 2>(a, n.f1_f16, n.f2_f16, n.f3_f16, sms, s);
    else launch_kinds<F16Tag, 64, 1, 4>(a, n.f1_f16, n.f2_f16, n.f3_f16, sms, s);
  } else {
    if (narrow) launch_kinds<Tf32Tag, 16, 1, 4>(a, n.f1_tf32, n.f2_tf32, n.f3_tf32, sms, s);
    else launch_kinds<Tf32Tag, 64, 1, 2>(a, n.f1_tf32, n.f2_tf32, n.f3_tf32, sms, s);
  }
}

}  // namespace diffscope::kernels
