// denoise_general.cu — the general fused denoiser: any dim and hidden, fp32 FMA arithmetic, all steps in one
// launch. Each CTA owns R rows for all steps; activations live in shared memory (or a global workspace when
// hidden is too large: the caller's DenoiseArgs::workspace), weights are read transposed (in, out) through L1/L2, coalesced across the warp.
// Also: the eps/x0 field kernel and the Philox start-noise kernel.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "base/philox_normal.h"
#include "kernels/kernels.h"
#include "kernels/shared/cuda_error.h"
#include "kernels/shared/denoise_common.cuh"
#include "kernels/shared/general_layer.cuh"
#include "kernels/shared/mma.cuh"

namespace diffscope::kernels {

namespace {

constexpr int kThreads = 256;

// Shared-memory layout per CTA: u (R, dim+1) | h1 (R, H) | h2 (R, H) | per-row step data.
template <int RPT>
__global__ void __launch_bounds__(kThreads) kernel_denoise_general(const DenoiseArgs a, float* __restrict__ gws) {
  constexpr int R = 8 * RPT;
  extern __shared__ float smem_general[];
  const int dim = a.net.dim, H = a.net.hidden, K1 = dim + 1;
  const size_t act_floats = static_cast<size_t>(R) * (K1 + 2 * H);
  float* act = gws ? gws + blockIdx.x * act_floats : smem_general;
  float* u = act;
  float* h1 = u + R * K1;
  float* h2 = h1 + R * H;
  __shared__ RowStep rs[R];
  const int row0 = blockIdx.x * R;
  const int nrows = min(R, a.B - row0);
  for (int i = threadIdx.x; i < R * dim; i += kThreads) {
    const int r = i / dim, c = i % dim;
    u[r * K1 + c] = r < nrows ? a.x[static_cast<size_t>(row0 + r) * dim + c] : 0.f;
  }
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    __syncthreads();
    bool any = false;
    if (threadIdx.x < R) {
      rs[threadIdx.x] = row_step(a, row0 + threadIdx.x, k);
      u[threadIdx.x * K1 + dim] = rs[threadIdx.x].tt;
      any = rs[threadIdx.x].active;
    }
    any = __syncthreads_or(any);
    if (any) {
      general_layer<RPT>(u, K1, K1, a.net.W1T, H, a.net.b1, h1, H, [](float z) { return silu_exact(z); });
      __syncthreads();
      general_layer<RPT>(h1, H, H, a.net.W2T, H, a.net.b2, h2, H, [](float z) { return silu_exact(z); });
      __syncthreads();
      // Layer 3 + update: thread (ty, tx) owns (row ty + 8i, col j) and updates x there (no other reader).
      general_layer_epi<RPT>(h2, H, H, a.net.W3T, dim, a.net.b3, [&](int r, int j, float e) {
        const RowStep& s = rs[r];
        if (!s.active) return;
        float xv = u[r * K1 + j];
        xv = s.A * xv + s.C * e;
        if (s.S != 0.f) {
          float z[4];
          philox_normal4(a.seed, a.row_offset + row0 + r, static_cast<uint32_t>(s.t), j / 4, z);
          xv += s.S * z[j % 4];
        }
        u[r * K1 + j] = xv;
      });
    }
    if (a.frames) {
      __syncthreads();
      store_tile_rows(u, K1, dim, nrows, a.frames + (k - a.k_begin) * frame_stride + static_cast<size_t>(row0) * dim);
    }
  }
  __syncthreads();
  store_tile_rows(u, K1, dim, nrows, a.x + static_cast<size_t>(row0) * dim);
}

template <int RPT>
__global__ void __launch_bounds__(kThreads) kernel_eps_field(const DeviceNet net, const float* __restrict__ pts, int n,
                                                              float tt, bool x0, float sa, float s1ma,
                                                              float* __restrict__ out, float* __restrict__ gws) {
  constexpr int R = 8 * RPT;
  extern __shared__ float smem_general[];
  const int dim = net.dim, H = net.hidden, K1 = dim + 1;
  const size_t act_floats = static_cast<size_t>(R) * (K1 + 2 * H);
  float* u = gws ? gws + blockIdx.x * act_floats : smem_general;
  float* h1 = u + R * K1;
  float* h2 = h1 + R * H;
  const int row0 = blockIdx.x * R, nrows = min(R, n - row0);
  for (int i = threadIdx.x; i < R * K1; i += kThreads) {
    const int r = i / K1, c = i % K1;
    u[i] = c == dim ? tt : (r < nrows ? pts[static_cast<size_t>(row0 + r) * dim + c] : 0.f);
  }
  __syncthreads();
  general_layer<RPT>(u, K1, K1, net.W1T, H, net.b1, h1, H, [](float z) { return silu_exact(z); });
  __syncthreads();
  general_layer<RPT>(h1, H, H, net.W2T, H, net.b2, h2, H, [](float z) { return silu_exact(z); });
  __syncthreads();
  general_layer_epi<RPT>(h2, H, H, net.W3T, dim, net.b3, [&](int r, int j, float e) {
    if (r >= nrows) return;
    out[static_cast<size_t>(row0 + r) * dim + j] = x0 ? (u[r * K1 + j] - s1ma * e) / sa : e;
  });
}

__global__ void kernel_philox_fill(int B, int dim, float* __restrict__ x, uint64_t seed, uint32_t key, uint32_t row_offset) {
  const int nblk = (dim + 3) / 4;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<int64_t>(B) * nblk) return;
  const int r = static_cast<int>(i / nblk), j = static_cast<int>(i % nblk);
  float z[4];
  philox_normal4(seed, row_offset + r, key, j, z);
  for (int q = 0; q < 4 && 4 * j + q < dim; ++q) x[static_cast<size_t>(r) * dim + 4 * j + q] = z[q];
}

// Rows per CTA and whether activations fit in shared memory (<= 96 KB so that 2 CTAs share an SM).
struct GeneralPlan {
  int rpt;
  size_t smem_bytes;
  bool global_ws;
};
GeneralPlan plan_general(int dim, int H) {
  for (int rpt : {4, 1}) {
    const size_t bytes = static_cast<size_t>(8 * rpt) * (dim + 1 + 2 * H) * sizeof(float);
    if (bytes <= 96 * 1024) return {rpt, bytes, false};
  }
  return {1, 0, true};
}

// The caller's workspace when the plan needs one (its size: denoise_general_workspace_floats).
float* checked_workspace(const GeneralPlan& p, float* ws) {
  if (p.global_ws && !ws)
    throw std::invalid_argument("general kernel: this hidden size needs a workspace (denoise_general_workspace_floats)");
  return p.global_ws ? ws : nullptr;
}

__global__ void kernel_busy(unsigned long long ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}

}  // namespace

size_t denoise_general_workspace_floats(int dim, int hidden, int rows) {
  const GeneralPlan p = plan_general(dim, hidden);
  if (!p.global_ws || rows <= 0) return 0;
  const int R = 8 * p.rpt, grid = (rows + R - 1) / R;
  return static_cast<size_t>(grid) * R * (dim + 1 + 2 * hidden);
}

void launch_busy(cudaStream_t s, int blocks, double ms) {
  kernel_busy<<<blocks, 128, 0, s>>>(static_cast<unsigned long long>(ms * 1e6));
}

void launch_denoise_general(const DenoiseArgs& a, cudaStream_t s) {
  const GeneralPlan p = plan_general(a.net.dim, a.net.hidden);
  const int R = 8 * p.rpt;
  const int grid = (a.B + R - 1) / R;
  float* ws = checked_workspace(p, a.workspace);
  if (p.rpt == 4) {
    if (p.smem_bytes > 48 * 1024)
      set_max_dynamic_smem(kernel_denoise_general<4>, p.smem_bytes);
    kernel_denoise_general<4><<<grid, kThreads, p.smem_bytes, s>>>(a, ws);
  } else {
    if (p.smem_bytes > 48 * 1024)
      set_max_dynamic_smem(kernel_denoise_general<1>, p.smem_bytes);
    kernel_denoise_general<1><<<grid, kThreads, p.smem_bytes, s>>>(a, ws);
  }
}

void launch_eps_field(const DeviceNet& net, const float* pts, int n, int t, int T, bool predict_x0, float sa,
                      float s1ma, float* out, float* workspace, cudaStream_t s) {
  if (n <= 0) return;
  const GeneralPlan p = plan_general(net.dim, net.hidden);
  const int R = 8 * p.rpt;
  const int grid = (n + R - 1) / R;
  float* ws = checked_workspace(p, workspace);
  const float tt = static_cast<float>(t) / static_cast<float>(T);
  if (p.rpt == 4) {
    if (p.smem_bytes > 48 * 1024)
      set_max_dynamic_smem(kernel_eps_field<4>, p.smem_bytes);
    kernel_eps_field<4><<<grid, kThreads, p.smem_bytes, s>>>(net, pts, n, tt, predict_x0, sa, s1ma, out, ws);
  } else {
    if (p.smem_bytes > 48 * 1024)
      set_max_dynamic_smem(kernel_eps_field<1>, p.smem_bytes);
    kernel_eps_field<1><<<grid, kThreads, p.smem_bytes, s>>>(net, pts, n, tt, predict_x0, sa, s1ma, out, ws);
  }
}

void launch_philox_fill(float* x, int B, int dim, uint64_t seed, uint32_t key, uint32_t row_offset, cudaStream_t s) {
  const int64_t n = static_cast<int64_t>(B) * ((dim + 3) / 4);
  if (n == 0) return;
  kernel_philox_fill<<<static_cast<unsigned>((n + 255) / 256), 256, 0, s>>>(B, dim, x, seed, key, row_offset);
}

}  // namespace diffscope::kernels
