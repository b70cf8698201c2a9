// denoise_cluster.cu — the small-batch (latency-bound) fused denoiser, fp32: one thread-block cluster of C CTAs
// (16, else 8) runs all steps for B <= 8 rows. CTA c holds hidden units [c H/C, (c+1) H/C) of W1 and W2 and the
// matching columns of W3 in shared memory, so the 397 KB of fp32 weights of the reference case are spread
// over the cluster. Per step:
//   h1 slice = SiLU(W1[slice] u + b1)            -> all-gathered into every CTA's h1 through distributed smem
//   cluster.sync
//   h2 slice = SiLU(W2[slice] h1 + b2)           (stays local)
//   eps partial = W3[:, slice] h2 slice          -> sent to every CTA
//   cluster.sync
//   eps = b3 + sum of the C partials (same order in every CTA), x <- A x + B eps + S z (every CTA keeps x)
// Two cluster barriers per step; each CTA sums partials in rank order, so the replicas of x stay identical.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <stdexcept>

#include "core/philox_normal.h"
#include "kernels/denoise_common.cuh"
#include "kernels/kernels.h"
#include "kernels/mma.cuh"

namespace cg = cooperative_groups;

namespace diffscope::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kBM = 8;  // rows

struct ClusterLayout {
  int C, HC, K1;
  size_t w1, w2, w3, b1, b2, b3, u, h1, h2, ep, red, total;  // float offsets
};

__host__ __device__ inline ClusterLayout cluster_layout(int dim, int H, int C) {
  ClusterLayout L;
  L.C = C;
  L.HC = H / C;
  L.K1 = dim + 1;
  size_t o = 0;
  auto al = [](size_t v) { return (v + 3) & ~size_t(3); };
  L.w1 = o; o += static_cast<size_t>(L.K1) * L.HC;  // [k][o]
  o = al(o); L.w2 = o; o += static_cast<size_t>(H) * L.HC;     // [k][o]
  o = al(o); L.w3 = o; o += static_cast<size_t>(L.HC) * dim;   // [k in slice][d]
  o = al(o); L.b1 = o; o += L.HC;
  o = al(o); L.b3 = o; o += dim;
  L.b2 = o; o += L.HC;
  o = al(o); L.u = o;  o += static_cast<size_t>(kBM) * L.K1;
  o = al(o); L.h1 = o; o += static_cast<size_t>(kBM) * H;
  o = al(o); L.h2 = o; o += static_cast<size_t>(kBM) * L.HC;
  o = al(o); L.ep = o; o += static_cast<size_t>(C) * kBM * dim;
  o = al(o); L.red = o; o += static_cast<size_t>(kThreads) * kBM + static_cast<size_t>(kBM) * L.HC;
  L.total = o;
  return L;
}

// Partial products of one layer: out(r, o) = sum_k act[r*lda + k] Ws[k*N + o] for o < N (<= 256), r < kBM, split
// over NS = 256/N k-slices (interleaved k, conflict-free), reduced through `red`. Calls fin(r, o, value).
template <class Fin>
__device__ __forceinline__ void cl_layer(const float* act, int lda, int K, const float* Ws, int N, float* red, Fin fin) {
  const int NS = kThreads / N;
  const int o = threadIdx.x % N, ks = threadIdx.x / N;
  if (ks < NS) {
    float acc[kBM];
#pragma unroll
    for (int r = 0; r < kBM; ++r) acc[r] = 0.f;
#pragma unroll 4
    for (int k = ks; k < K; k += NS) {
      const float w = Ws[k * N + o];
#pragma unroll
      for (int r = 0; r < kBM; ++r) acc[r] = fmaf(act[r * lda + k], w, acc[r]);
    }
#pragma unroll
    for (int r = 0; r < kBM; ++r) red[(ks * kBM + r) * N + o] = acc[r];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kBM * N; i += kThreads) {
    const int r = i / N, oo = i % N;
    float s4[4] = {0.f, 0.f, 0.f, 0.f};
    int j = 0;
    for (; j + 4 <= NS; j += 4)
#pragma unroll
      for (int q = 0; q < 4; ++q) s4[q] += red[((j + q) * kBM + r) * N + oo];
    for (; j < NS; ++j) s4[0] += red[(j * kBM + r) * N + oo];
    fin(r, oo, (s4[0] + s4[1]) + (s4[2] + s4[3]));
  }
}

// diag: benchmarking knob (DIFFSCOPE_CLUSTER_DIAG): bit 0 skips the DSMEM pushes (wrong results, timing only).
__global__ void __launch_bounds__(kThreads) kernel_denoise_cluster(const DenoiseArgs a, int diag) {
  cg::cluster_group cluster = cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const int dim = a.net.dim, H = a.net.hidden;
  const ClusterLayout L = cluster_layout(dim, H, C);
  extern __shared__ float4 sm4[];
  float* sm = reinterpret_cast<float*>(sm4);
  float *w1 = sm + L.w1, *w2 = sm + L.w2, *w3 = sm + L.w3, *b1 = sm + L.b1, *b2 = sm + L.b2, *b3 = sm + L.b3;
  float *u = sm + L.u, *h1 = sm + L.h1, *h2 = sm + L.h2, *ep = sm + L.ep, *red = sm + L.red;
  float* h1s = red + kThreads * kBM;  // this CTA's h1 slice (kBM, HC) before it is pushed
  __shared__ RowStep rs[kBM];
  const int HC = L.HC, K1 = L.K1, h0 = rank * HC;

  // Weight slices, read coalesced (k fastest) and stored transposed [k][o].
#pragma unroll 4
  for (int i = threadIdx.x; i < K1 * HC; i += kThreads) {
    const int o = i / K1, k = i % K1;
    w1[k * HC + o] = a.net.W1[static_cast<size_t>(h0 + o) * K1 + k];
  }
#pragma unroll 8
  for (int i = threadIdx.x; i < H * HC; i += kThreads) {
    const int o = i / H, k = i % H;
    w2[k * HC + o] = a.net.W2[static_cast<size_t>(h0 + o) * H + k];
  }
#pragma unroll 4
  for (int i = threadIdx.x; i < HC * dim; i += kThreads) {
    const int d = i / HC, k = i % HC;
    w3[k * dim + d] = a.net.W3[static_cast<size_t>(d) * H + h0 + k];
  }
  for (int i = threadIdx.x; i < HC; i += kThreads) {
    b1[i] = a.net.b1[h0 + i];
    b2[i] = a.net.b2[h0 + i];
  }
  for (int i = threadIdx.x; i < dim; i += kThreads) b3[i] = a.net.b3[i];
  for (int i = threadIdx.x; i < kBM * dim; i += kThreads) {
    const int r = i / dim, d = i % dim;
    u[r * K1 + d] = r < a.B ? a.x[static_cast<size_t>(r) * dim + d] : 0.f;
  }
  // Step coefficients one step ahead (their global-memory latency overlaps the previous step).
  RowStep next{};
  if (threadIdx.x < kBM) next = row_step(a, threadIdx.x, a.k_begin);
  cluster.sync();  // every CTA's shared memory exists before remote writes

  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  const bool vec_h1 = (HC % 4) == 0 && (H % 4) == 0;
  const bool vec_ep = (dim % 4) == 0;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    if (threadIdx.x < kBM) {
      rs[threadIdx.x] = next;
      u[threadIdx.x * K1 + dim] = next.tt;
      if (k + 1 < a.k_end) next = row_step(a, threadIdx.x, k + 1);
    }
    const bool any = __syncthreads_or(threadIdx.x < kBM && rs[threadIdx.x].active);
    if (any) {  // uniform across the cluster: every CTA sees the same rows
      // layer 1 slice -> local h1s, then pushed to every CTA's h1 (16-byte remote stores)
      cl_layer(u, K1, K1, w1, HC, red, [&](int r, int o, float s) { h1s[r * HC + o] = silu_exact(s + b1[o]); });
      __syncthreads();
      if (diag & 1) {
      } else if (vec_h1) {
        const int per_row = HC / 4, n = C * kBM * per_row;
        for (int i = threadIdx.x; i < n; i += kThreads) {
          const int c = i / (kBM * per_row), rem = i % (kBM * per_row), r = rem / per_row, q = rem % per_row;
          float4* dst = reinterpret_cast<float4*>(cluster.map_shared_rank(h1, c) + r * H + h0) + q;
          *dst = reinterpret_cast<const float4*>(h1s + r * HC)[q];
        }
      } else {
        for (int i = threadIdx.x; i < C * kBM * HC; i += kThreads) {
          const int c = i / (kBM * HC), rem = i % (kBM * HC), r = rem / HC, o = rem % HC;
          cluster.map_shared_rank(h1, c)[r * H + h0 + o] = h1s[r * HC + o];
        }
      }
      cluster.sync();
      // layer 2 slice (local)
      cl_layer(h1, H, H, w2, HC, red, [&](int r, int o, float s) { h2[r * HC + o] = silu_exact(s + b2[o]); });
      __syncthreads();
      // layer 3 partial -> own ep[rank] first, then pushed to every other CTA
      float* mine = ep + rank * kBM * dim;
      cl_layer(h2, HC, HC, w3, dim, red, [&](int r, int d, float s) { mine[r * dim + d] = s; });
      __syncthreads();
      if (diag & 1) {
      } else if (vec_ep) {
        const int n4 = kBM * dim / 4;
        for (int i = threadIdx.x; i < C * n4; i += kThreads) {
          const int c = i / n4, q = i % n4;
          if (c == rank) continue;
          reinterpret_cast<float4*>(cluster.map_shared_rank(ep, c) + rank * kBM * dim)[q] =
              reinterpret_cast<const float4*>(mine)[q];
        }
      } else {
        for (int i = threadIdx.x; i < C * kBM * dim; i += kThreads) {
          const int c = i / (kBM * dim), q = i % (kBM * dim);
          if (c != rank) cluster.map_shared_rank(ep, c)[rank * kBM * dim + q] = mine[q];
        }
      }
      cluster.sync();
      // eps = b3 + sum of partials in rank order; affine update (every CTA, identical)
      for (int i = threadIdx.x; i < kBM * dim; i += kThreads) {
        const int r = i / dim, d = i % dim;
        const RowStep& s = rs[r];
        if (!s.active) continue;
        float e4[4] = {0.f, 0.f, 0.f, 0.f};
        int c = 0;
        for (; c + 4 <= C; c += 4)
#pragma unroll
          for (int q = 0; q < 4; ++q) e4[q] += ep[((c + q) * kBM + r) * dim + d];
        for (; c < C; ++c) e4[0] += ep[(c * kBM + r) * dim + d];
        const float e = ((e4[0] + e4[1]) + (e4[2] + e4[3])) + b3[d];
        float xv = s.A * u[r * K1 + d] + s.B * e;
        if (s.S != 0.f) {
          float z[4];
          philox_normal4(a.seed, a.row_offset + r, static_cast<uint32_t>(s.t), d / 4, z);
          xv += s.S * z[d % 4];
        }
        u[r * K1 + d] = xv;
      }
    }
    __syncthreads();
    if (a.frames) {  // each CTA writes a share of the frame
      float* f = a.frames + (k - a.k_begin) * frame_stride;
      for (int i = rank * kThreads + threadIdx.x; i < a.B * dim; i += C * kThreads) f[i] = u[(i / dim) * K1 + i % dim];
    }
  }
  if (rank == 0)
    for (int i = threadIdx.x; i < a.B * dim; i += kThreads) a.x[i] = u[(i / dim) * K1 + i % dim];
  cluster.sync();  // no CTA exits while others may still write into it
}

int cluster_size_for(int H) {
  static const int forced = [] {
    const char* e = std::getenv("DIFFSCOPE_CLUSTER_SIZE");  // benchmarking knob: 8 or 16
    return e ? std::atoi(e) : 0;
  }();
  if ((forced == 8 || forced == 16) && H % forced == 0) return forced;
  return H % 16 == 0 ? 16 : (H % 8 == 0 ? 8 : 0);
}

}  // namespace

bool denoise_cluster_supported(int dim, int hidden, int B) {
  const int C = cluster_size_for(hidden);
  if (C == 0 || B > kBM || B < 1 || dim > 256 || hidden / C > 256) return false;
  return cluster_layout(dim, hidden, C).total * sizeof(float) <= 200 * 1024;
}

void launch_denoise_cluster(const DenoiseArgs& a, cudaStream_t s) {
  int C = cluster_size_for(a.net.hidden);
  const ClusterLayout L0 = cluster_layout(a.net.dim, a.net.hidden, C);
  const size_t smem = L0.total * sizeof(float);
  cudaFuncSetAttribute(kernel_denoise_cluster, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  cudaFuncSetAttribute(kernel_denoise_cluster, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (;;) {
    const ClusterLayout L = cluster_layout(a.net.dim, a.net.hidden, C);
    const size_t bytes = L.total * sizeof(float);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(C);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = bytes;
    cfg.stream = s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = C;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    const char* dg = std::getenv("DIFFSCOPE_CLUSTER_DIAG");
    const int diag = dg ? std::atoi(dg) : 0;
    const cudaError_t e = cudaLaunchKernelEx(&cfg, kernel_denoise_cluster, a, diag);
    if (e == cudaSuccess) return;
    (void)cudaGetLastError();
    if (C == 16 && a.net.hidden % 8 == 0) {  // 16-CTA clusters are non-portable: fall back to 8
      C = 8;
      if (cluster_layout(a.net.dim, a.net.hidden, C).total * sizeof(float) > 200 * 1024) break;
      cudaFuncSetAttribute(kernel_denoise_cluster, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           static_cast<int>(cluster_layout(a.net.dim, a.net.hidden, C).total * sizeof(float)));
      continue;
    }
    throw std::runtime_error(std::string("cluster denoiser launch failed: ") + cudaGetErrorString(e));
  }
  throw std::runtime_error("cluster denoiser: no cluster size fits");
}

}  // namespace diffscope::kernels
