// denoise_cluster.cu — the small-batch (latency-bound) fused denoiser, fp32: one thread-block cluster of C CTAs
// (16, else 8) runs all steps for B <= 8 rows. CTA c holds hidden units [c H/C, (c+1) H/C) of W1 and W2 and the
// matching columns of W3 in shared memory, so the 397 KB of fp32 weights of the reference case are spread
// over the cluster, and owns output dims [c DC, (c+1) DC), DC = ceil(dim / C). Per step:
//   h1 slice = SiLU(W1[slice] u + b1)            -> all-gathered into every CTA's h1 through distributed smem
//   cluster.sync
//   h2 slice = SiLU(W2[slice] h1 + b2)           (stays local)
//   eps partial = W3[:, slice] h2 slice          -> each dim's partial sent to the CTA owning the dim
//   cluster.sync
//   owner: eps = b3 + sum of the C partials in rank order, x <- A x + B eps + S z -> all-gathered
//   cluster.sync
// Three cluster barriers per step, about 750 16-byte remote stores per CTA (dim 64) instead of 2,400 for an
// all-to-all of the partials. Step coefficients are read 32 steps at a time, one chunk ahead.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "base/philox_normal.h"
#include "kernels/kernels.h"
#include "kernels/plan/kernel_shapes.h"
#include "kernels/shared/cuda_error.h"
#include "kernels/shared/denoise_common.cuh"
#include "kernels/shared/latency_stamps.cuh"
#include "kernels/shared/mma.cuh"
#include "kernels/shared/pdl.cuh"

namespace cg = cooperative_groups;

namespace diffscope::kernels {

namespace {

constexpr int kThreads = kClusterThreads;
constexpr int kBM = kClusterRows;  // rows
[[maybe_unused]] constexpr int kCH = kThreads / kBM;  // steps per coefficient chunk (one RowStep per thread)

// Partial products of one layer: out(r, o) = sum_k act[r*lda + k] Ws[k*ldw + o] for o < N (<= 256), r < kBM,
// split over NS = 256/N k-slices, reduced through `red`. Calls fin(r, o, value); mid() once the partial products
// are stored (before the reduction's barrier; the stamp build's hook).
// V: k in chunks of 4 (float4 activation loads; needs K % 4 == 0, lda % 4 == 0, 16-byte aligned act),
// chunk c of slice ks = ks + NS j; else interleaved single k.
template <bool V, class Fin, class Mid>
__device__ __forceinline__ void cl_layer(const float* act, int lda, int K, const float* Ws, int N, float* red, Fin fin,
                                         Mid mid) {
  const int NS = kThreads / N;
  const int ldw = cluster_w_ld(N);
  const int o = threadIdx.x % N, ks = threadIdx.x / N;
  if (ks < NS) {
    float acc[kBM];
#pragma unroll
    for (int r = 0; r < kBM; ++r) acc[r] = 0.f;
    if constexpr (V) {
#pragma unroll 2
      for (int k = 4 * ks; k < K; k += 4 * NS) {
        const float w0 = Ws[k * ldw + o], w1 = Ws[(k + 1) * ldw + o], w2 = Ws[(k + 2) * ldw + o],
                    w3 = Ws[(k + 3) * ldw + o];
#pragma unroll
        for (int r = 0; r < kBM; ++r) {
          const float4 a4 = *reinterpret_cast<const float4*>(act + r * lda + k);
          acc[r] = fmaf(a4.x, w0, acc[r]);
          acc[r] = fmaf(a4.y, w1, acc[r]);
          acc[r] = fmaf(a4.z, w2, acc[r]);
          acc[r] = fmaf(a4.w, w3, acc[r]);
        }
      }
    } else {
#pragma unroll 4
      for (int k = ks; k < K; k += NS) {
        const float w = Ws[k * ldw + o];
#pragma unroll
        for (int r = 0; r < kBM; ++r) acc[r] = fmaf(act[r * lda + k], w, acc[r]);
      }
    }
#pragma unroll
    for (int r = 0; r < kBM; ++r) red[(ks * kBM + r) * N + o] = acc[r];
  }
  mid();
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

template <class Fin, class Mid>
__device__ __forceinline__ void cl_layer_any(bool vec, const float* act, int lda, int K, const float* Ws, int N,
                                             float* red, Fin fin, Mid mid) {
  if (vec)
    cl_layer<true>(act, lda, K, Ws, N, red, fin, mid);
  else
    cl_layer<false>(act, lda, K, Ws, N, red, fin, mid);
}

// diag: the kernel option cluster_no_push (plan/kernel_plan.h): bit 0 skips the DSMEM pushes (wrong results, timing only).
// Per step: h1 slices all-gathered (cluster barrier 1); h2 local; eps partials reduce-scattered to the CTA that
// owns each output dim (barrier 2); the owner sums them in rank order, updates x of its dims and all-gathers
// x (barrier 3).
// Stamp build (ST, latency_stamps.h; cta = cluster rank): slots of step -1: 0 start, 1 weight slices stored, 2 after
// pdl_wait, 3 ready (after the first cluster barrier), 4 end; of each step: 0 top, 1 coefficients (__syncthreads_or),
// 16 layer-1 partials, 2 layer 1 reduced, 3 barrier, 4 h1 pushed, 5 cluster barrier 1, 17 layer-2 partials,
// 6 layer 2 reduced, 7 barrier, 18 layer-3 partials, 8 layer 3 reduced, 9 barrier, 10 eps partials pushed,
// 11 arrive + noise, 12 cluster barrier 2 (wait), 13 owned x updated, 14 barrier + x pushed, 15 cluster barrier 3.
template <bool ST>
__global__ void __launch_bounds__(kThreads, 1) kernel_denoise_cluster(const DenoiseArgs a, int diag, long long* stp) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  __trap();  // thread-block clusters need sm_90: the plan (DeviceCaps::clusters) never chooses this kernel below
#else
  cg::cluster_group cluster = cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const int dim = a.net.dim, H = a.net.hidden;
  const ClusterLayout L = cluster_layout(dim, H, C);
  extern __shared__ float4 sm4[];
  float* sm = reinterpret_cast<float*>(sm4);
  float *w1 = sm + L.w1, *w2 = sm + L.w2, *w3 = sm + L.w3, *b1 = sm + L.b1, *b2 = sm + L.b2, *b3 = sm + L.b3;
  float *u = sm + L.u, *h1 = sm + L.h1, *h2 = sm + L.h2, *ep = sm + L.ep, *epr = sm + L.epr, *xs = sm + L.xs,
        *red = sm + L.red;
  float* h1s = red + kThreads * kBM;  // this CTA's h1 slice (kBM, HC) before it is pushed
  // Step coefficients of kCH steps x kBM rows; the next chunk is loaded into registers one chunk ahead.
  __shared__ float4 cf[kCH * kBM];  // A, C, S, t/T
  __shared__ int cft[kCH * kBM];    // t, or -1: frozen
  const int HC = L.HC, K1 = L.K1, K1p = L.K1p, DC = L.DC, h0 = rank * HC;
  const int ldw1 = cluster_w_ld(HC), ldw3 = cluster_w_ld(dim);
  const int d0 = rank * DC, nd = max(0, min(dim, d0 + DC) - d0);  // owned dims [d0, d0 + nd)
  const int nst = a.k_end - a.k_begin;
  stamp<ST>(stp, rank, -1, 0, nst);

  pdl_launch_dependents();
  // Weight slices (written only by cudaMemcpy) load before pdl_wait(); x and the step table after it.
  // Weight slices, read coalesced (k fastest) and stored transposed [k][o].
#pragma unroll 4
  for (int i = threadIdx.x; i < K1p * HC; i += kThreads) {
    const int o = i / K1p, k = i % K1p;
    w1[k * ldw1 + o] = k < K1 ? a.net.W1[static_cast<size_t>(h0 + o) * K1 + k] : 0.f;
  }
#pragma unroll 8
  for (int i = threadIdx.x; i < H * HC; i += kThreads) {
    const int o = i / H, k = i % H;
    w2[k * ldw1 + o] = a.net.W2[static_cast<size_t>(h0 + o) * H + k];
  }
#pragma unroll 4
  for (int i = threadIdx.x; i < HC * dim; i += kThreads) {
    const int d = i / HC, k = i % HC;
    w3[k * ldw3 + d] = a.net.W3[static_cast<size_t>(d) * H + h0 + k];
  }
  for (int i = threadIdx.x; i < HC; i += kThreads) {
    b1[i] = a.net.b1[h0 + i];
    b2[i] = a.net.b2[h0 + i];
  }
  for (int i = threadIdx.x; i < dim; i += kThreads) b3[i] = a.net.b3[i];
  stamp<ST>(stp, rank, -1, 1, nst);
  pdl_wait();
  stamp<ST>(stp, rank, -1, 2, nst);
  for (int i = threadIdx.x; i < kBM * K1p; i += kThreads) {
    const int r = i / K1p, d = i % K1p;
    u[i] = (r < a.B && d < dim) ? a.x[static_cast<size_t>(r) * dim + d] : 0.f;
  }
  RowStep next = chunk_row_step(a, kBM, a.k_begin);
  cluster.sync();  // every CTA's shared memory exists before remote writes
  stamp<ST>(stp, rank, -1, 3, nst);

  const size_t frame_stride = static_cast<size_t>(a.B) * dim;
  const bool vec_h1 = (HC % 4) == 0 && (H % 4) == 0;
  const bool vec_x = (DC % 4) == 0 && (dim % DC) == 0;  // every owned range full, 16-byte pieces
  const bool v2 = (H % 4) == 0, v3 = (HC % 4) == 0;     // layer 1 always (K1p, padded)
  const bool push = !(diag & 1);
  for (int k = a.k_begin; k < a.k_end; ++k) {
    const int kc = (k - a.k_begin) % kCH, ks = k - a.k_begin;
    stamp<ST>(stp, rank, ks, 0, nst);
    if (kc == 0) advance_coef_chunk(a, kBM, k, cf, cft, next);  // new chunk
    if (threadIdx.x < kBM) {
      const float4 c = cf[kc * kBM + threadIdx.x];  // written by this thread (same index) or before a barrier
      u[threadIdx.x * K1p + dim] = c.w;
    }
    const bool any = __syncthreads_or(threadIdx.x < kBM && cft[kc * kBM + threadIdx.x] >= 0);
    stamp<ST>(stp, rank, ks, 1, nst);
    float* f = a.frames ? a.frames + (k - a.k_begin) * frame_stride : nullptr;
    if (!any) {  // uniform across the cluster: every row frozen this step, x unchanged
      if (f)
        for (int i = threadIdx.x; i < a.B * nd; i += kThreads) {
          const int r = i / nd, d = d0 + i % nd;
          f[r * dim + d] = u[r * K1p + d];
        }
      continue;
    }
    // layer 1 slice -> local h1s, then pushed to every CTA's h1 (16-byte remote stores)
    cl_layer<true>(
        u, K1p, K1p, w1, HC, red, [&](int r, int o, float s) { h1s[r * HC + o] = silu_exact(s + b1[o]); },
        [&] { stamp<ST>(stp, rank, ks, 16, nst); });
    stamp<ST>(stp, rank, ks, 2, nst);
    __syncthreads();
    stamp<ST>(stp, rank, ks, 3, nst);
    if (!push) {
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
    stamp<ST>(stp, rank, ks, 4, nst);
    cluster.sync();  // 1: h1 complete everywhere
    stamp<ST>(stp, rank, ks, 5, nst);
    // layer 2 slice (local)
    cl_layer_any(
        v2, h1, H, H, w2, HC, red, [&](int r, int o, float s) { h2[r * HC + o] = silu_exact(s + b2[o]); },
        [&] { stamp<ST>(stp, rank, ks, 17, nst); });
    stamp<ST>(stp, rank, ks, 6, nst);
    __syncthreads();
    stamp<ST>(stp, rank, ks, 7, nst);
    // layer 3 partial over this CTA's hidden slice -> ep, then each dim's partial to the CTA that owns the dim
    cl_layer_any(
        v3, h2, HC, HC, w3, dim, red, [&](int r, int d, float s) { ep[r * dim + d] = s; },
        [&] { stamp<ST>(stp, rank, ks, 18, nst); });
    stamp<ST>(stp, rank, ks, 8, nst);
    __syncthreads();
    stamp<ST>(stp, rank, ks, 9, nst);
    if (!push) {
    } else if (vec_x) {
      const int q4 = dim / 4;  // float4 pieces of a row
      for (int i = threadIdx.x; i < kBM * q4; i += kThreads) {
        const int r = i / q4, d = (i % q4) * 4, c = d / DC, j = d % DC;
        *reinterpret_cast<float4*>(cluster.map_shared_rank(epr, c) + (rank * kBM + r) * DC + j) =
            *reinterpret_cast<const float4*>(ep + r * dim + d);
      }
    } else {
      for (int i = threadIdx.x; i < kBM * dim; i += kThreads) {
        const int r = i / dim, d = i % dim, c = d / DC, j = d % DC;
        cluster.map_shared_rank(epr, c)[(rank * kBM + r) * DC + j] = ep[i];
      }
    }
    // Barrier 2, split: the owned elements' noise (independent of eps) is drawn between arrive and wait, while
    // the partials arrive. Thread i owns element (r, j) = (i / nd, i % nd): kBM * DC <= kThreads (dim <= 256, C >= 8).
    stamp<ST>(stp, rank, ks, 10, nst);
    cluster.barrier_arrive();
    const int io = threadIdx.x;
    const bool own = io < kBM * nd;
    const int ro = own ? io / nd : 0, jo = own ? io % nd : 0, dd = d0 + jo;
    const float4 co = cf[kc * kBM + ro];
    const int to = cft[kc * kBM + ro];
    float zv = 0.f;
    if (own && to >= 0 && co.z != 0.f) {
      float z[4];
      philox_normal4(a.seed, a.row_offset + ro, static_cast<uint32_t>(to), dd / 4, z);
      const int m = dd % 4;
      zv = m == 0 ? z[0] : m == 1 ? z[1] : m == 2 ? z[2] : z[3];
    }
    stamp<ST>(stp, rank, ks, 11, nst);
    cluster.barrier_wait();  // 2: every partial of the owned dims arrived
    stamp<ST>(stp, rank, ks, 12, nst);
    // owned dims: eps = b3 + partials in rank order; x <- A x + B eps + S z; frame; then x to every CTA
    if (own) {
      float xv = u[ro * K1p + dd];
      if (to >= 0) {
        float e = b3[dd];
        for (int q = 0; q < C; ++q) e += epr[(q * kBM + ro) * DC + jo];
        xv = co.x * xv + co.y * e;
        if (co.z != 0.f) xv += co.z * zv;
      }
      xs[ro * DC + jo] = xv;
      if (f && ro < a.B) f[ro * dim + dd] = xv;
    }
    stamp<ST>(stp, rank, ks, 13, nst);
    __syncthreads();
    if (!push) {
      for (int i = threadIdx.x; i < kBM * nd; i += kThreads) u[(i / nd) * K1p + d0 + i % nd] = xs[(i / nd) * DC + i % nd];
    } else if (vec_x) {
      const int q4 = nd > 0 ? DC / 4 : 0;  // a CTA owning no dim pushes nothing
      for (int i = threadIdx.x; i < C * kBM * q4; i += kThreads) {
        const int c = i / (kBM * q4), rem = i % (kBM * q4), r = rem / q4, q = rem % q4;
        *reinterpret_cast<float4*>(cluster.map_shared_rank(u, c) + r * K1p + d0 + 4 * q) =
            *reinterpret_cast<const float4*>(xs + r * DC + 4 * q);
      }
    } else {
      for (int i = threadIdx.x; i < C * kBM * nd; i += kThreads) {
        const int c = i / (kBM * nd), rem = i % (kBM * nd), r = rem / nd, j = rem % nd;
        cluster.map_shared_rank(u, c)[r * K1p + d0 + j] = xs[r * DC + j];
      }
    }
    stamp<ST>(stp, rank, ks, 14, nst);
    cluster.sync();  // 3: x complete everywhere
    stamp<ST>(stp, rank, ks, 15, nst);
  }
  for (int i = threadIdx.x; i < a.B * nd; i += kThreads) {
    const int r = i / nd, d = d0 + i % nd;
    a.x[static_cast<size_t>(r) * dim + d] = u[r * K1p + d];
  }
  stamp<ST>(stp, rank, -1, 4, nst);
  cluster.sync();  // no CTA exits while others may still write into it
#endif
}

}  // namespace

// The cluster size is the plan's; a device that refuses the non-portable 16-CTA cluster runs 8 CTAs instead.
void launch_denoise_cluster(const DenoiseArgs& a, const DenoisePlan& plan, const LaunchContext& ctx, cudaStream_t s) {
  int C = plan.cluster_size;
  const ClusterLayout L0 = cluster_layout(a.net.dim, a.net.hidden, C);
  const size_t smem = L0.total * sizeof(float);
  long long* stp = ctx.stamps_for(stamp_capacity(C, a.k_end - a.k_begin));
  auto* kernel = stp ? kernel_denoise_cluster<true> : kernel_denoise_cluster<false>;
  set_max_dynamic_smem(kernel, smem);
  set_kernel_attribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  for (;;) {
    const ClusterLayout L = cluster_layout(a.net.dim, a.net.hidden, C);
    const size_t bytes = L.total * sizeof(float);
    const int diag = plan.cluster_no_push ? 1 : 0;
    const cudaError_t e = launch_pdl(kernel, dim3(C), dim3(kThreads), bytes, s, C, plan.pdl, a, diag, stp);
    if (e == cudaSuccess) return;
    (void)cudaGetLastError();
    if (C == 16 && a.net.hidden % 8 == 0) {  // 16-CTA clusters are non-portable: fall back to 8
      C = 8;
      if (cluster_layout(a.net.dim, a.net.hidden, C).total * sizeof(float) > kClusterMaxSmem) break;
      set_max_dynamic_smem(kernel, cluster_layout(a.net.dim, a.net.hidden, C).total * sizeof(float));
      continue;
    }
    throw_cuda_error(e, "cluster denoiser launch");
  }
  throw std::runtime_error("cluster denoiser: no cluster size fits");
}

}  // namespace diffscope::kernels
