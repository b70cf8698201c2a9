// denoise_f32.cu — the large-batch fused denoiser in fp32 (plain FMA, no tensor cores): one CTA per R-row tile runs
// all steps; the network evaluation is f32_tile.cuh's (activations in shared memory, weights streamed by cp.async,
// SiLU). Fast path for hidden == 256; other shapes use the general kernel.
#include <cuda_runtime.h>

#include <stdexcept>

#include "base/philox_normal.h"
#include "kernels/kernels.h"
#include "kernels/shared/cuda_error.h"
#include "kernels/shared/denoise_common.cuh"
#include "kernels/shared/f32_tile.cuh"

namespace diffscope::kernels {

namespace {

// T: the tile configuration (f32tile::F32Tile<...>).
template <class T>
__global__ void __launch_bounds__(T::NT, 1) kernel_denoise_f32(const DenoiseArgs a) {
  extern __shared__ float4 smem_f32_4[];
  const typename T::TileT t(reinterpret_cast<float*>(smem_f32_4));
  float* uT = t.uT;
  const int dim = a.net.dim;
  __shared__ RowStep rs[T::R];
  const int row0 = blockIdx.x * T::R, nrows = min(T::R, a.B - row0);
  T::load_x(t, a.x, row0, nrows, dim);
  typename T::Stream ws(a.net, t);
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    __syncthreads();
    bool any = false;
    if (threadIdx.x < T::R) {
      rs[threadIdx.x] = row_step(a, row0 + threadIdx.x, k);
      uT[dim * T::LD + threadIdx.x] = rs[threadIdx.x].tt;
      any = rs[threadIdx.x].active;
    }
    any = __syncthreads_or(any);
    if (any) {
      T::eval(a.net, t, ws, [&](int r, int g, const float* e) {
        const RowStep& s = rs[r];
        if (!s.active) return;
        float z[4] = {0.f, 0.f, 0.f, 0.f};
        if (s.S != 0.f) philox_normal4(a.seed, a.row_offset + row0 + r, static_cast<uint32_t>(s.t), g, z);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int d = 4 * g + i;
          if (d < dim) {  // the affine update of x[r][d] (in uT)
            float xv = uT[d * T::LD + r];
            xv = s.A * xv + s.C * e[i];
            if (s.S != 0.f) xv += s.S * z[i];
            uT[d * T::LD + r] = xv;
          }
        }
      });
    }
    if (a.frames) {
      __syncthreads();
      T::store_x(t, a.frames + (k - a.k_begin) * frame_stride + static_cast<size_t>(row0) * dim, nrows, dim);
    }
  }
  ws.finish();
  __syncthreads();
  T::store_x(t, a.x + static_cast<size_t>(row0) * dim, nrows, dim);
}

}  // namespace

void launch_denoise_f32(const DenoiseArgs& a, cudaStream_t s) {
  using T = f32tile::Tile;
  const size_t smem = T::smem_bytes(a.net.dim);
  set_max_dynamic_smem(kernel_denoise_f32<T>, smem);
  kernel_denoise_f32<T><<<(a.B + T::R - 1) / T::R, T::NT, smem, s>>>(a);
}

}  // namespace diffscope::kernels
