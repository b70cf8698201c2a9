// denoise_f32.cu — the large-batch fused denoiser in fp32 (plain FMA, no tensor cores): one CTA per 64-row tile runs
// all steps; the network evaluation is f32_tile.cuh's (activations in shared memory, weights streamed by cp.async,
// accurate SiLU). Fast path for hidden == 256; other shapes use the general kernel.
#include <cuda_runtime.h>

#include <stdexcept>

#include "core/philox_normal.h"
#include "kernels/denoise_common.cuh"
#include "kernels/cuda_error.h"
#include "kernels/kernels.h"
#include "kernels/f32_tile.cuh"

namespace diffscope::kernels {

namespace {

using namespace f32tile;

// Applies the affine update to x[r][d] (in uT).
__device__ __forceinline__ void update_elem(const RowStep& s, int r, int d, float eps, float* uT, const float* z) {
  float xv = uT[d * kLda + r];
  xv = s.A * xv + s.C * eps;
  if (s.S != 0.f) xv += s.S * z[d & 3];
  uT[d * kLda + r] = xv;
}

__global__ void __launch_bounds__(kThreads, 1) kernel_denoise_f32(const DenoiseArgs a) {
  extern __shared__ float4 smem_f32_4[];
  const Tile t(reinterpret_cast<float*>(smem_f32_4));
  float* uT = t.uT;
  const int dim = a.net.dim;
  __shared__ RowStep rs[kR];
  const int row0 = blockIdx.x * kR, nrows = min(kR, a.B - row0);
  load_tile_x(t, a.x, row0, nrows, dim);
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    __syncthreads();
    bool any = false;
    if (threadIdx.x < kR) {
      rs[threadIdx.x] = row_step(a, row0 + threadIdx.x, k);
      uT[dim * kLda + threadIdx.x] = rs[threadIdx.x].tt;
      any = rs[threadIdx.x].active;
    }
    any = __syncthreads_or(any);
    if (any) {
      f32_eval(a.net, t, [&](int r, int g, const float* e) {
        const RowStep& s = rs[r];
        if (!s.active) return;
        float z[4] = {0.f, 0.f, 0.f, 0.f};
        if (s.S != 0.f) philox_normal4(a.seed, a.row_offset + row0 + r, static_cast<uint32_t>(s.t), g, z);
#pragma unroll
        for (int i = 0; i < 4; ++i)
          if (4 * g + i < dim) update_elem(s, r, 4 * g + i, e[i], uT, z);
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

bool denoise_f32_supported(int dim, int hidden) { return f32_tile_supported(dim, hidden); }

void launch_denoise_f32(const DenoiseArgs& a, cudaStream_t s) {
  const size_t smem = f32tile::smem_bytes(a.net.dim);
  set_max_dynamic_smem(kernel_denoise_f32, smem);
  const int grid = (a.B + kR - 1) / kR;
  kernel_denoise_f32<<<grid, kThreads, smem, s>>>(a);
}

}  // namespace diffscope::kernels
