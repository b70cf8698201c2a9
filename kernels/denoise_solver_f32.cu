// denoise_solver_f32.cu — issue 15's solvers (solver_kernels.h, SEMANTICS §3) on the tiled fp32 network evaluation
// of the ddim fast path (f32_tile.cuh): one CTA per 64-row tile for all steps, the solver's step update in the
// layer-3 epilogue:
//   x0 = Dx x + De eps;  y = A x + B eps + P prev + S z;  heun: y += H (eps(y, t2) - eps);  prev = x0.
// prev and Heun's first eps per element stay in global memory (read and written once per step by the thread that
// owns the element), as in denoise_solver.cu, whose arithmetic order this keeps. hidden 256, dim <= 4 or % 4 == 0.
#include <cuda_runtime.h>

#include <stdexcept>

#include "core/philox_normal.h"
#include "kernels/cuda_error.h"
#include "kernels/f32_tile.cuh"
#include "kernels/solver_kernels.h"

namespace diffscope::kernels {
namespace {

using namespace f32tile;

__global__ void __launch_bounds__(kThreads, 1) kernel_denoise_solver_f32(const SolverArgs a) {
  extern __shared__ float4 smem_solver_f32[];
  const Tile t(reinterpret_cast<float*>(smem_solver_f32));
  float* uT = t.uT;
  const int dim = a.net.dim;
  const int row0 = blockIdx.x * kR, nrows = min(kR, a.B - row0);
  load_tile_x(t, a.x, row0, nrows, dim);
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    __syncthreads();
    if (threadIdx.x < kR) uT[dim * kLda + threadIdx.x] = __ldg(a.tab.tt + k);
    __syncthreads();
    const float A = __ldg(a.tab.A + k), Ce = __ldg(a.tab.C + k), S = __ldg(a.tab.S + k);
    const float P = a.tab.P ? __ldg(a.tab.P + k) : 0.f;
    const float Dx = a.tab.P ? __ldg(a.tab.Dx + k) : 0.f, De = a.tab.P ? __ldg(a.tab.De + k) : 0.f;
    const float Hk = a.tab.H ? __ldg(a.tab.H + k) : 0.f;
    const uint32_t key = __ldg(a.tab.key + k);
    f32_eval(a.net, t, [&](int r, int g, const float* e) {
      if (r >= nrows) return;
      float z[4] = {0.f, 0.f, 0.f, 0.f};
      if (S != 0.f) philox_normal4(a.seed, a.row_offset + row0 + r, key, g, z);
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int d = 4 * g + i;
        if (d >= dim) continue;
        const size_t gi = static_cast<size_t>(row0 + r) * dim + d;
        const float xv = uT[d * kLda + r];
        float y = A * xv + Ce * e[i];
        if (a.tab.P) {
          const float p = a.prev[gi];
          if (P != 0.f) y += P * p;
          a.prev[gi] = Dx * xv + De * e[i];  // this step's data prediction
        }
        if (S != 0.f) y += S * z[i];
        if (Hk != 0.f) a.e1[gi] = e[i];
        uT[d * kLda + r] = y;
      }
    });
    if (Hk != 0.f) {  // Heun's correction at the Euler point (Karras et al. 2022, Alg. 1)
      __syncthreads();
      if (threadIdx.x < kR) uT[dim * kLda + threadIdx.x] = __ldg(a.tab.tt2 + k);
      __syncthreads();
      f32_eval(a.net, t, [&](int r, int g, const float* e2) {
        if (r >= nrows) return;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int d = 4 * g + i;
          if (d >= dim) continue;
          uT[d * kLda + r] += Hk * (e2[i] - a.e1[static_cast<size_t>(row0 + r) * dim + d]);
        }
      });
    }
    if (a.frames) {
      __syncthreads();
      store_tile_x(t, a.frames + (k - a.k_begin) * frame_stride + static_cast<size_t>(row0) * dim, nrows, dim);
    }
  }
  __syncthreads();
  store_tile_x(t, a.x + static_cast<size_t>(row0) * dim, nrows, dim);
}

}  // namespace

bool denoise_solver_tiled_supported(int dim, int hidden) { return f32_tile_supported(dim, hidden); }

void launch_denoise_solver_tiled(const SolverArgs& a, cudaStream_t s) {
  if (!denoise_solver_tiled_supported(a.net.dim, a.net.hidden))
    throw std::invalid_argument("the tiled solver kernel needs hidden 256 and dim <= 4 or dim % 4 == 0 (<= 64)");
  if (a.B <= 0 || a.k_end <= a.k_begin) return;
  const size_t smem = f32tile::smem_bytes(a.net.dim);
  set_max_dynamic_smem(kernel_denoise_solver_f32, smem);
  kernel_denoise_solver_f32<<<(a.B + kR - 1) / kR, kThreads, smem, s>>>(a);
}

}  // namespace diffscope::kernels
