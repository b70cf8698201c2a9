// denoise_tc.cu — the large-batch fused denoiser on tensor cores (bf16 / fp16 / tf32 operands, fp32 accumulation).
// Persistent CTAs of 8 warps; each warp owns 16*MT rows for all steps and evaluates the network with tc_eval
// (shared/tc_net.cuh: every activation in registers, weights resident in shared memory in fragment order). x and eps
// stay fp32 in registers, so the affine update and the trajectory writes are exact fp32.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "base/philox_normal.h"
#include "kernels/kernels.h"
#include "kernels/shared/cuda_error.h"
#include "kernels/shared/denoise_common.cuh"
#include "kernels/shared/mma.cuh"
#include "kernels/shared/tc_net.cuh"

namespace diffscope::kernels {

namespace {

constexpr int kWarps = 8;

// H: hidden; KX: dim padded to 16 (also the padded eps width); MT: m16 tiles per warp; NC: n-blocks per layer-2 chunk.
template <class P, int H, int KX, int MT, int NC>
__global__ void __launch_bounds__(kWarps * 32, 1)
    kernel_denoise_tc(const DenoiseArgs a, const BFrag<P>* __restrict__ gF1, const BFrag<P>* __restrict__ gF2,
                      const BFrag<P>* __restrict__ gF3, const float* __restrict__ w1t_g, int n2s) {
  constexpr int NB3 = KX / 8;
  extern __shared__ uint4 smem_tc[];
  const TcNet<P, H, KX> w = tc_load_weights<P, H, KX>(smem_tc, a.net, gF1, gF2, gF3, w1t_g, n2s);  // once per CTA
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int dim = a.net.dim;
  const int tiles = (a.B + 16 * MT - 1) / (16 * MT);
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;

  for (int tile = blockIdx.x * kWarps + warp; tile < tiles; tile += gridDim.x * kWarps) {
    int rows[MT][2];
    float xs[MT][NB3][4];
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      rows[m][0] = tile * 16 * MT + m * 16 + g;
      rows[m][1] = rows[m][0] + 8;
      load_acc_rows<NB3>(&xs[m][0][0], a.x, rows[m], q, a.B, dim);
    }

    for (int k = a.k_begin; k < a.k_end; ++k) {
      RowStep st[MT][2];
      float tt[MT][2];
      bool any = false;
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          st[m][h] = row_step(a, rows[m][h], k);
          tt[m][h] = st[m][h].tt;
          any |= st[m][h].active;
        }
      if (__any_sync(0xffffffffu, any)) {
        float eps[MT][NB3][4];
        tc_eval<P, H, KX, MT, NC, false>(w, xs, 1.f, tt, eps, lane, q);
        // ---- the affine update (fp32), noise where S != 0
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const RowStep& s = st[m][h];
            if (!s.active) continue;
#pragma unroll
            for (int nb = 0; nb < NB3; ++nb) {
              float z0 = 0.f, z1 = 0.f;
              if (s.S != 0.f && nb * 8 < dim) {
                float z[4];
                philox_normal4(a.seed, a.row_offset + rows[m][h], static_cast<uint32_t>(s.t), (nb * 8 + 2 * q) / 4, z);
                z0 = (q & 1) ? z[2] : z[0];
                z1 = (q & 1) ? z[3] : z[1];
              }
              float& x0 = xs[m][nb][2 * h];
              float& x1 = xs[m][nb][2 * h + 1];
              x0 = fmaf(s.S, z0, fmaf(s.C, eps[m][nb][2 * h], s.A * x0));
              x1 = fmaf(s.S, z1, fmaf(s.C, eps[m][nb][2 * h + 1], s.A * x1));
              const int c = nb * 8 + 2 * q;
              if (c >= dim) x0 = 0.f;
              if (c + 1 >= dim) x1 = 0.f;
            }
          }
      }
      if (a.frames) {
#pragma unroll
        for (int m = 0; m < MT; ++m)
          store_acc_rows<NB3>(&xs[m][0][0], a.frames + (k - a.k_begin) * frame_stride, rows[m], q, a.B, dim);
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m) store_acc_rows<NB3>(&xs[m][0][0], a.x, rows[m], q, a.B, dim);
  }
}

template <class P, int H, int KX, int MT, int NC>
void launch_tc(const DenoiseArgs& a, const void* f1, const void* f2, const void* f3, cudaStream_t s) {
  using BF = BFrag<P>;
  using N = TcNet<P, H, KX>;
  constexpr int NB1 = N::NB1;
  constexpr size_t fixed = N::fixed_bytes(), per_nb2 = N::per_nb2_bytes();
  constexpr size_t kMaxSmem = 227 * 1024;
  const int n2s = static_cast<int>(std::min<size_t>(NB1, (kMaxSmem - fixed) / per_nb2));
  const size_t smem = fixed + n2s * per_nb2;
  auto kern = kernel_denoise_tc<P, H, KX, MT, NC>;
  set_max_dynamic_smem(kern, smem);
  const int tiles = (a.B + 16 * MT - 1) / (16 * MT);
  const int grid = std::max(1, std::min(a.num_sms, (tiles + kWarps - 1) / kWarps));
  // The time column W1[:, dim] is row `dim` of W1T (dim+1, hidden).
  const float* w1t = a.net.W1T + static_cast<size_t>(a.net.dim) * a.net.hidden;
  kern<<<grid, kWarps * 32, smem, s>>>(a, static_cast<const BF*>(f1), static_cast<const BF*>(f2), static_cast<const BF*>(f3),
                                       w1t, n2s);
}

}  // namespace

void launch_denoise_tc(const DenoiseArgs& a, Precision p, cudaStream_t s) {
  const DeviceNet& n = a.net;
  if (!denoise_tc_shape(n.dim, n.hidden)) throw std::invalid_argument("tensor-core denoiser: unsupported shape");
  if (a.num_sms <= 0) throw std::invalid_argument("tensor-core denoiser: DenoiseArgs::num_sms is not set");
  if (p == Precision::Bf16) {
    if (n.dim <= 16) launch_tc<Bf16Tag, 256, 16, 2, 2>(a, n.f1_bf16, n.f2_bf16, n.f3_bf16, s);
    else launch_tc<Bf16Tag, 256, 64, 1, 4>(a, n.f1_bf16, n.f2_bf16, n.f3_bf16, s);
  } else if (p == Precision::F16) {
    if (n.dim <= 16) launch_tc<F16Tag, 256, 16, 2, 2>(a, n.f1_f16, n.f2_f16, n.f3_f16, s);
    else launch_tc<F16Tag, 256, 64, 1, 4>(a, n.f1_f16, n.f2_f16, n.f3_f16, s);
  } else if (p == Precision::Tf32) {
    if (n.dim <= 16) launch_tc<Tf32Tag, 256, 16, 1, 4>(a, n.f1_tf32, n.f2_tf32, n.f3_tf32, s);
    else launch_tc<Tf32Tag, 256, 64, 1, 2>(a, n.f1_tf32, n.f2_tf32, n.f3_tf32, s);
  } else {
    throw std::invalid_argument("tensor-core denoiser: fp32 runs on the general or cluster kernel");
  }
}

}  // namespace diffscope::kernels
