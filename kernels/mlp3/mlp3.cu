// mlp3.cu — the fused bias-free 3-layer MLP y = relu(relu(x W1^T) W2^T) W3^T (SEMANTICS §5) in one launch.
// General path: any sizes, fp32 FMA, activations in shared memory (general_layer.cuh).
// Tensor-core path (bf16 / tf32 operands, fp32 accumulation) for the reference sizes (48-64-40-24, and any sizes
// that pad to the same multiples of 16): one warp per 16 rows (bf16) or 32 rows (tf32) at a time, activations in
// registers, weights in shared memory in fragment order, the next rows' x staged in shared memory by cp.async; x is
// read once and y written once, so large batches are bound by memory bandwidth.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "kernels/shared/general_layer.cuh"
#include "kernels/shared/cuda_error.h"
#include "kernels/kernels.h"
#include "kernels/shared/latency_stamps.cuh"
#include "kernels/mlp3/mlp3_tiled.h"
#include "kernels/shared/mma.cuh"
#include "kernels/shared/pdl.cuh"
#include "kernels/plan/kernel_shapes.h"

namespace diffscope::kernels {

namespace {

constexpr int kThreads = kMlpThreads;

template <int RPT>
__global__ void __launch_bounds__(kThreads) kernel_mlp3_general(const DeviceMlp3 w, const float* __restrict__ x, int B,
                                                                 float* __restrict__ y) {
  constexpr int R = 8 * RPT;
  extern __shared__ float smem_mlp[];
  float* xs = smem_mlp;
  float* h1 = xs + R * w.d0;
  float* h2 = h1 + R * w.d1;
  const int row0 = blockIdx.x * R, nrows = min(R, B - row0);
  for (int i = threadIdx.x; i < R * w.d0; i += kThreads)
    xs[i] = i < nrows * w.d0 ? x[static_cast<size_t>(row0) * w.d0 + i] : 0.f;
  __syncthreads();
  auto relu = [](float v) { return fmaxf(v, 0.f); };
  general_layer<RPT>(xs, w.d0, w.d0, w.W1T, w.d1, nullptr, h1, w.d1, relu);
  __syncthreads();
  general_layer<RPT>(h1, w.d1, w.d1, w.W2T, w.d2, nullptr, h2, w.d2, relu);
  __syncthreads();
  general_layer_epi<RPT>(h2, w.d2, w.d2, w.W3T, w.d3, nullptr, [&](int r, int j, float v) {
    if (r < nrows) y[static_cast<size_t>(row0 + r) * w.d3 + j] = v;
  });
}

// Small batches (latency): one CTA, the transposed weights copied once into shared memory with 16-byte loads,
// then each thread computes up to 4 (row, output) dot products at a time from shared memory.
__global__ void __launch_bounds__(kThreads) kernel_mlp3_small(const DeviceMlp3 w, const float* __restrict__ x, int B,
                                                               float* __restrict__ y) {
  extern __shared__ float4 smem_small4[];
  float* sm = reinterpret_cast<float*>(smem_small4);
  const int d0 = w.d0, d1 = w.d1, d2 = w.d2, d3 = w.d3;
  const int n1 = d0 * d1, n2 = d1 * d2, n3 = d2 * d3;
  auto al = [](int v) { return (v + 3) & ~3; };
  float* W1 = sm;
  float* W2 = W1 + al(n1);
  float* W3 = W2 + al(n2);
  float* xs = W3 + al(n3);
  float* h1 = xs + al(B * d0);
  float* h2 = h1 + al(B * d1);
  auto copy = [](float* dst, const float* src, int n) {
    if ((reinterpret_cast<uintptr_t>(src) & 15) == 0) {
      // Eight 16-byte loads in flight per thread: this copy is latency-bound.
      const float4* s4 = reinterpret_cast<const float4*>(src);
      float4* d4 = reinterpret_cast<float4*>(dst);
      int i = threadIdx.x;
      for (; i + 7 * kThreads < n / 4; i += 8 * kThreads) {
        float4 v[8];
#pragma unroll
        for (int q = 0; q < 8; ++q) v[q] = __ldg(s4 + i + q * kThreads);
#pragma unroll
        for (int q = 0; q < 8; ++q) d4[i + q * kThreads] = v[q];
      }
      for (; i < n / 4; i += kThreads) d4[i] = __ldg(s4 + i);
      for (int i = (n / 4) * 4 + threadIdx.x; i < n; i += kThreads) dst[i] = src[i];
    } else {
      for (int i = threadIdx.x; i < n; i += kThreads) dst[i] = src[i];
    }
  };
  copy(W1, w.W1T, n1);
  copy(W2, w.W2T, n2);
  copy(W3, w.W3T, n3);
  copy(xs, x, B * d0);
  __syncthreads();
  // out[r][j] = act(sum_k in[r][k] WT[k][j]) for r < B, j < N; 4 outputs per thread in flight.
  auto layer = [&](const float* in, int K, const float* WT, int N, float* out, bool relu) {
    const int total = B * N;
    for (int base = threadIdx.x; base < total; base += 4 * kThreads) {
      float acc[4] = {0.f, 0.f, 0.f, 0.f};
      int rr[4], jj[4];
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        const int idx = min(base + m * kThreads, total - 1);
        rr[m] = idx / N;
        jj[m] = idx % N;
      }
#pragma unroll 4
      for (int k = 0; k < K; ++k)
#pragma unroll
        for (int m = 0; m < 4; ++m) acc[m] = fmaf(in[rr[m] * K + k], WT[k * N + jj[m]], acc[m]);
#pragma unroll
      for (int m = 0; m < 4; ++m)
        if (base + m * kThreads < total) out[rr[m] * N + jj[m]] = relu ? fmaxf(acc[m], 0.f) : acc[m];
    }
  };
  layer(xs, d0, W1, d1, h1, true);
  __syncthreads();
  layer(h1, d1, W2, d2, h2, true);
  __syncthreads();
  layer(h2, d2, W3, d3, y, false);
}

// Tiny batches (B <= 16, outputs <= 256 per layer): one CTA. Every weight and x go to shared memory with
// cp.async, all loads issued at once; the weights before pdl_wait(), so with back-to-back calls (launch_pdl)
// they arrive while the previous call still runs. Each layer: thread (j, s) computes output j for all 16 rows
// over the k-chunks of split s (4 k at a time: one 16-byte activation load per row and 4 weight loads per 64 FMA),
// then the splits are summed in order through `red`.
constexpr int kTR = kMlpTinyRows;  // rows

__device__ __forceinline__ void mlp_cp_async16(void* smem, const void* gmem) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(gmem));
}
__device__ __forceinline__ void mlp_cp_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void mlp_cp_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
// Copies n floats (16-byte pieces asynchronously when both ends are aligned; the rest with plain loads).
__device__ __forceinline__ void mlp_copy_async(float* dst, const float* src, int n) {
  int done = 0;
  if ((reinterpret_cast<uintptr_t>(src) & 15) == 0 && (reinterpret_cast<uintptr_t>(dst) & 15) == 0) {
    for (int i = threadIdx.x; i < n / 4; i += kThreads) mlp_cp_async16(dst + 4 * i, src + 4 * i);
    done = (n / 4) * 4;
  }
  for (int i = done + threadIdx.x; i < n; i += kThreads) dst[i] = __ldg(src + i);
}

template <bool V, class Fin>
__device__ __forceinline__ void tiny_layer(const float* in, int K, const float* WT, int N, float* red, Fin fin) {
  const int S = kThreads / N;  // N <= 256
  const int j = threadIdx.x % N, sp = threadIdx.x / N;
  if (sp < S) {
    float acc[kTR];
#pragma unroll
    for (int r = 0; r < kTR; ++r) acc[r] = 0.f;
    if constexpr (V) {
#pragma unroll 2
      for (int k = 4 * sp; k < K; k += 4 * S) {
        const float w0 = WT[k * N + j], w1 = WT[(k + 1) * N + j], w2 = WT[(k + 2) * N + j], w3 = WT[(k + 3) * N + j];
#pragma unroll
        for (int r = 0; r < kTR; ++r) {
          const float4 a4 = *reinterpret_cast<const float4*>(in + r * K + k);
          acc[r] = fmaf(a4.x, w0, acc[r]);
          acc[r] = fmaf(a4.y, w1, acc[r]);
          acc[r] = fmaf(a4.z, w2, acc[r]);
          acc[r] = fmaf(a4.w, w3, acc[r]);
        }
      }
    } else {
#pragma unroll 4
      for (int k = sp; k < K; k += S) {
        const float w = WT[k * N + j];
#pragma unroll
        for (int r = 0; r < kTR; ++r) acc[r] = fmaf(in[r * K + k], w, acc[r]);
      }
    }
#pragma unroll
    for (int r = 0; r < kTR; ++r) red[(sp * kTR + r) * N + j] = acc[r];
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kTR * N; i += kThreads) {
    const int r = i / N, jj = i % N;
    float v = 0.f;
    for (int q = 0; q < S; ++q) v += red[(q * kTR + r) * N + jj];
    fin(r, jj, v);
  }
}

template <class Fin>
__device__ __forceinline__ void tiny_layer_any(const float* in, int K, const float* WT, int N, float* red, Fin fin) {
  if (K % 4 == 0)
    tiny_layer<true>(in, K, WT, N, red, fin);
  else
    tiny_layer<false>(in, K, WT, N, red, fin);
}

__global__ void __launch_bounds__(kThreads, 1) kernel_mlp3_tiny(const DeviceMlp3 w, const float* __restrict__ x, int B,
                                                                 float* __restrict__ y) {
  extern __shared__ float4 smem_tiny4[];
  float* sm = reinterpret_cast<float*>(smem_tiny4);
  const int d0 = w.d0, d1 = w.d1, d2 = w.d2, d3 = w.d3;
  const MlpTinyLayout L = mlp3_tiny_layout(d0, d1, d2, d3);
  float *W1 = sm + L.W1, *W2 = sm + L.W2, *W3 = sm + L.W3, *xs = sm + L.xs, *h1 = sm + L.h1, *h2 = sm + L.h2,
        *red = sm + L.red;
  pdl_launch_dependents();
  // Weights (written only by cudaMemcpy) are requested before pdl_wait(), x after it (pdl.cuh).
  mlp_copy_async(W1, w.W1T, d0 * d1);
  mlp_copy_async(W2, w.W2T, d1 * d2);
  mlp_copy_async(W3, w.W3T, d2 * d3);
  pdl_wait();
  mlp_copy_async(xs, x, B * d0);
  mlp_cp_commit();
  for (int i = B * d0 + threadIdx.x; i < kTR * d0; i += kThreads) xs[i] = 0.f;  // rows >= B
  mlp_cp_wait<0>();
  __syncthreads();
  tiny_layer_any(xs, d0, W1, d1, red, [&](int r, int j, float v) { h1[r * d1 + j] = fmaxf(v, 0.f); });
  __syncthreads();
  tiny_layer_any(h1, d1, W2, d2, red, [&](int r, int j, float v) { h2[r * d2 + j] = fmaxf(v, 0.f); });
  __syncthreads();
  tiny_layer_any(h2, d2, W3, d3, red, [&](int r, int j, float v) {
    if (r < B) y[static_cast<size_t>(r) * d3 + j] = v;
  });
}

// Tiny batches at compile-time sizes (the reference 48-64-40-24): B <= 16 rows, kTinyRowsPerCta rows per CTA (rows
// are independent, so each CTA runs its rows alone). Each layer's output j is
// computed by 4 adjacent lanes, each over a quarter of k, with its weights in registers (read once per call
// straight from global memory, before pdl_wait()); the 4 partial sums are combined with two warp shuffles, so a
// layer costs one barrier. Activations live in shared memory.
template <int K, int N>
struct ShuffleLayer {
  static_assert(K % 4 == 0 && (K / 4) % 2 == 0 && N * 4 <= kThreads, "4 k-splits of an even length, <= 64 outputs");
  static constexpr int KS = K / 4;  // k per split
  float w[KS];
  // Weights of output j = threadIdx.x / 4, k in [KS s, KS s + KS), s = threadIdx.x % 4; W is (N, K) row-major.
  __device__ __forceinline__ void load(const float* __restrict__ W) {
    const int j = threadIdx.x / 4, s = threadIdx.x % 4;
    if (j >= N) return;
    const float2* src = reinterpret_cast<const float2*>(W + j * K + KS * s);
#pragma unroll
    for (int i = 0; i < KS / 2; ++i) {
      const float2 v = __ldg(src + i);
      w[2 * i] = v.x, w[2 * i + 1] = v.y;
    }
  }
  // out(r, j) = sum_k in[r][k] W[j][k] for the R rows; fin(r, j, v) on the lane s == r % 4.
  template <int R, class Fin>
  __device__ __forceinline__ void run(const float* in, Fin fin) const {
    const int j = threadIdx.x / 4, s = threadIdx.x % 4;
    if (j >= N) return;  // whole groups of 4 lanes leave together; N * 4 is a multiple of 4
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const float2* a2 = reinterpret_cast<const float2*>(in + r * K + KS * s);
      float v = 0.f;
#pragma unroll
      for (int i = 0; i < KS / 2; ++i) {
        const float2 a = a2[i];
        v = fmaf(a.x, w[2 * i], v);
        v = fmaf(a.y, w[2 * i + 1], v);
      }
      acc[r] = v;
    }
    const unsigned mask = N * 4 >= 32 * (threadIdx.x / 32 + 1) ? 0xffffffffu : (1u << ((N * 4) % 32)) - 1u;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      // (s0 + s1) + (s2 + s3) on every lane of the group, in that order
      const float p = acc[r] + __shfl_xor_sync(mask, acc[r], 1);
      const float lo = __shfl_xor_sync(mask, p, 2);
      const float sum = (s & 2) ? lo + p : p + lo;
      if ((r & 3) == s) fin(r, j, sum);
    }
  }
};

// R rows per CTA, ceil(B / R) CTAs (rows are independent: each CTA holds every weight in registers).
// Stamp build (ST, latency_stamps.h; step -1, cta = blockIdx.x): slots 0 start, 1 weight loads issued, 2 after
// pdl_wait, 3 x in shared memory, 4 layer 1, 5 layer 2 (each after its barrier), 6 y stored.
template <int D0, int D1, int D2, int D3, int R, bool ST>
__global__ void __launch_bounds__(kThreads, 1) kernel_mlp3_tiny_fixed(const DeviceMlp3 w, const float* __restrict__ x,
                                                                       int B, float* __restrict__ y, long long* stp) {
  __shared__ __align__(16) float xs[R * D0], h1[R * D1], h2[R * D2];
  const int cta = blockIdx.x, row0 = cta * R, nr = min(R, B - row0);
  stamp<ST>(stp, cta, -1, 0, 0);
  pdl_launch_dependents();
  ShuffleLayer<D0, D1> l1;
  ShuffleLayer<D1, D2> l2;
  ShuffleLayer<D2, D3> l3;
  l1.load(w.W1);
  l2.load(w.W2);
  l3.load(w.W3);
  stamp<ST>(stp, cta, -1, 1, 0);
  pdl_wait();  // x and y may be used by the previous kernel (pdl.cuh)
  stamp<ST>(stp, cta, -1, 2, 0);
  const float* xr = x + static_cast<size_t>(row0) * D0;
  for (int i = threadIdx.x; i < R * D0; i += kThreads) xs[i] = i < nr * D0 ? xr[i] : 0.f;
  __syncthreads();
  stamp<ST>(stp, cta, -1, 3, 0);
  l1.template run<R>(xs, [&](int r, int j, float v) { h1[r * D1 + j] = fmaxf(v, 0.f); });
  __syncthreads();
  stamp<ST>(stp, cta, -1, 4, 0);
  l2.template run<R>(h1, [&](int r, int j, float v) { h2[r * D2 + j] = fmaxf(v, 0.f); });
  __syncthreads();
  stamp<ST>(stp, cta, -1, 5, 0);
  float* yr = y + static_cast<size_t>(row0) * D3;
  l3.template run<R>(h2, [&](int r, int j, float v) {
    if (r < nr) yr[r * D3 + j] = v;
  });
  stamp<ST>(stp, cta, -1, 6, 0);
}

template <int R>
cudaError_t launch_tiny_fixed(const DeviceMlp3& w, const float* x, int B, float* y, bool pdl, const LaunchContext& ctx,
                              cudaStream_t s) {
  const int ctas = (B + R - 1) / R;
  long long* stp = ctx.stamps_for(stamp_capacity(ctas, 0));
  auto* kernel = stp ? kernel_mlp3_tiny_fixed<48, 64, 40, 24, R, true> : kernel_mlp3_tiny_fixed<48, 64, 40, 24, R, false>;
  return launch_pdl(kernel, dim3(ctas), dim3(kThreads), 0, s, 0, pdl, w, x, B, y, stp);
}

// Large batches, fp32, the reference sizes, the kernel option mlp3_fp32 = rows (the default is mlp3_tiled.cu's): one thread per row, activations in registers, weights (out, in) in
// shared memory read as 16-byte broadcasts (every lane of a warp reads the same weights).
template <int D0, int D1, int D2, int D3>
__global__ void __launch_bounds__(128) kernel_mlp3_rows(const DeviceMlp3 w, const float* __restrict__ x, int B,
                                                        float* __restrict__ y) {
  __shared__ float4 W1[D1 * D0 / 4], W2[D2 * D1 / 4], W3[D3 * D2 / 4];
  for (int i = threadIdx.x; i < D1 * D0 / 4; i += blockDim.x) W1[i] = __ldg(reinterpret_cast<const float4*>(w.W1) + i);
  for (int i = threadIdx.x; i < D2 * D1 / 4; i += blockDim.x) W2[i] = __ldg(reinterpret_cast<const float4*>(w.W2) + i);
  for (int i = threadIdx.x; i < D3 * D2 / 4; i += blockDim.x) W3[i] = __ldg(reinterpret_cast<const float4*>(w.W3) + i);
  __syncthreads();
  for (int row = blockIdx.x * blockDim.x + threadIdx.x; row < B; row += gridDim.x * blockDim.x) {
    float4 xv[D0 / 4];
    const float4* xr = reinterpret_cast<const float4*>(x + static_cast<size_t>(row) * D0);
#pragma unroll
    for (int q = 0; q < D0 / 4; ++q) xv[q] = __ldcs(xr + q);
    float h1[D1];
#pragma unroll
    for (int j = 0; j < D1; ++j) {
      float a = 0.f;
#pragma unroll
      for (int q = 0; q < D0 / 4; ++q) {
        const float4 ww = W1[j * (D0 / 4) + q];
        a = fmaf(ww.x, xv[q].x, a);
        a = fmaf(ww.y, xv[q].y, a);
        a = fmaf(ww.z, xv[q].z, a);
        a = fmaf(ww.w, xv[q].w, a);
      }
      h1[j] = fmaxf(a, 0.f);
    }
    float h2[D2];
#pragma unroll
    for (int j = 0; j < D2; ++j) {
      float a = 0.f;
#pragma unroll
      for (int q = 0; q < D1 / 4; ++q) {
        const float4 ww = W2[j * (D1 / 4) + q];
        a = fmaf(ww.x, h1[4 * q], a);
        a = fmaf(ww.y, h1[4 * q + 1], a);
        a = fmaf(ww.z, h1[4 * q + 2], a);
        a = fmaf(ww.w, h1[4 * q + 3], a);
      }
      h2[j] = fmaxf(a, 0.f);
    }
    float4* yr = reinterpret_cast<float4*>(y + static_cast<size_t>(row) * D3);
#pragma unroll
    for (int j4 = 0; j4 < D3 / 4; ++j4) {
      float o[4];
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = 4 * j4 + e;
        float a = 0.f;
#pragma unroll
        for (int q = 0; q < D2 / 4; ++q) {
          const float4 ww = W3[j * (D2 / 4) + q];
          a = fmaf(ww.x, h2[4 * q], a);
          a = fmaf(ww.y, h2[4 * q + 1], a);
          a = fmaf(ww.z, h2[4 * q + 2], a);
          a = fmaf(ww.w, h2[4 * q + 3], a);
        }
        o[e] = a;
      }
      __stcs(yr + j4, make_float4(o[0], o[1], o[2], o[3]));
    }
  }
}

// Padded sizes (multiples of 16) of the tensor-core instantiation.
constexpr int P0 = kMlpPad0, P1 = kMlpPad1, P2 = kMlpPad2, P3 = kMlpPad3;

// PF = 1 (the default; the kernel option mlp3_tc_prefetch=0 selects PF = 0): persistent CTAs, and each warp issues
// the loads of its next unit's x right after turning the current one into A fragments, so they are in flight during
// the three layers (ncu: the loop without it waits on the x loads, DRAM 56%). PF = 0 is that loop. T = tiles of 16 rows per warp at a time (a unit of 16 T contiguous rows): with T = 2 each B
// fragment read from shared memory feeds T mma (ncu of T = 1: short-scoreboard stalls on those reads
// 39%, and the mma -> ReLU -> pack chains of one tile left the scheduler idle 34%: two tiles interleave two chains).
// XS (d0 = 48, x 16-byte aligned): each warp's next unit of x goes to shared memory by cp.async (zero-filled past
// B) instead of registers (24 registers per tile no longer held while the loads are in flight). Rows of kXs floats
// (48 + 8: the float2 A-fragment reads of a half-warp hit 16 distinct bank pairs).
constexpr int kXs = 56;
template <int T>
constexpr size_t tc_xs_smem() {
  return sizeof(float) * (kThreads / 32) * T * 16 * kXs;
}

// The body of kernel_mlp3_tc (below: the launch bounds differ by variant).
template <class P, int PF, int T, bool XS>
__device__ __forceinline__ void mlp3_tc_body(const DeviceMlp3& w, const float* __restrict__ x, int B,
                                             float* __restrict__ y, const BFrag<P>* __restrict__ g1,
                                             const BFrag<P>* __restrict__ g2, const BFrag<P>* __restrict__ g3) {
  using BF = BFrag<P>;
  constexpr int n1 = (P1 / 8) * (P0 / 16) * 32, n2 = (P2 / 8) * (P1 / 16) * 32, n3 = (P3 / 8) * (P2 / 16) * 32;
  __shared__ BF s1[n1], s2[n2], s3[n3];
  pdl_launch_dependents();
  for (int i = threadIdx.x; i < n1; i += kThreads) s1[i] = g1[i];
  for (int i = threadIdx.x; i < n2; i += kThreads) s2[i] = g2[i];
  for (int i = threadIdx.x; i < n3; i += kThreads) s3[i] = g3[i];
  pdl_wait();  // x and y may be used by the previous kernel (pdl.cuh); the fragments are not
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, q = lane & 3;
  const int units = (B + 16 * T - 1) / (16 * T);
  const int d0 = w.d0, d3 = w.d3;
  // XS: x of unit u -> this warp's xs rows, 16 bytes per cp.async, 6 per lane per tile (rows >= B: zeros).
  extern __shared__ float4 smem_tc_xs[];
  float* xs = reinterpret_cast<float*>(smem_tc_xs) + warp * (T * 16 * kXs);
  auto issue_xs = [&](int u) {
#pragma unroll
    for (int i = 0; i < T * 16 * 12 / 32; ++i) {
      const int idx = i * 32 + lane, rr = idx / 12, c4 = idx % 12, r = u * T * 16 + rr;
      const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(xs + rr * kXs + 4 * c4));
      const float* src = x + static_cast<size_t>(min(r, B - 1)) * 48 + 4 * c4;
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(sa), "l"(src), "r"(r < B ? 16 : 0));
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  // x of unit u -> v: per tile, 3 k16 blocks of A-fragment float pairs, every load issued before any is used
  // (rows >= B read as 0).
  auto load_x = [&](int u, float2 (&v)[T][P0 / 16][4]) {
#pragma unroll
    for (int t = 0; t < T; ++t) {
      const int r0 = (u * T + t) * 16 + g, r1 = r0 + 8;
#pragma unroll
      for (int kb = 0; kb < P0 / 16; ++kb)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int r = (e & 1) ? r1 : r0, c = kb * 16 + 2 * q + ((e & 2) ? 8 : 0);
          if (r < B && c + 1 < d0) {
            v[t][kb][e] = __ldcs(reinterpret_cast<const float2*>(x + static_cast<size_t>(r) * d0 + c));
          } else {
            v[t][kb][e].x = (r < B && c < d0) ? x[static_cast<size_t>(r) * d0 + c] : 0.f;
            v[t][kb][e].y = 0.f;
          }
        }
    }
  };
  const int stride = gridDim.x * (kThreads / 32);
  // Layer of hidden outputs: h[t][j] = relu(a[t] W^T) for the NB/2 A fragments j of N = 8 NB outputs, K = 16 KB;
  // each B fragment (one shared-memory read) feeds the T tiles' mma.
  auto hidden = [&](auto& h, const auto& a, const BF* s, auto nb_c, auto kb_c) {
    constexpr int NB = decltype(nb_c)::value, KB = decltype(kb_c)::value;
#pragma unroll
    for (int j = 0; j < NB / 2; ++j) {
      float c[T][2][4] = {};
#pragma unroll
      for (int hf = 0; hf < 2; ++hf)
#pragma unroll
        for (int kb = 0; kb < KB; ++kb) {
          const BF b = s[((2 * j + hf) * KB + kb) * 32 + lane];
#pragma unroll
          for (int t = 0; t < T; ++t) mma16(c[t][hf], a[t][kb], b);
        }
#pragma unroll
      for (int t = 0; t < T; ++t) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          c[t][0][e] = fmaxf(c[t][0][e], 0.f);
          c[t][1][e] = fmaxf(c[t][1][e], 0.f);
        }
        make_afrag(h[t][j], c[t][0], c[t][1]);
      }
    }
  };
  // One unit from x values v (loaded); unit `next` (if < units) is loaded into v once v is in A fragments.
  auto run_unit = [&](int u, float2 (&v)[T][P0 / 16][4], int next) {
    AFrag<P> xa[T][P0 / 16];
    if constexpr (XS) {
      asm volatile("cp.async.wait_group 0;" ::: "memory");
      __syncwarp();
#pragma unroll
      for (int t = 0; t < T; ++t)
#pragma unroll
        for (int kb = 0; kb < P0 / 16; ++kb)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int r = t * 16 + g + ((e & 1) ? 8 : 0), c = kb * 16 + 2 * q + ((e & 2) ? 8 : 0);
            v[t][kb][e] = *reinterpret_cast<const float2*>(xs + r * kXs + c);
          }
      __syncwarp();  // every lane has read the unit before the next one overwrites it
      if (next < units) issue_xs(next);
    }
#pragma unroll
    for (int t = 0; t < T; ++t)
#pragma unroll
      for (int kb = 0; kb < P0 / 16; ++kb) {
        const float c0[4] = {v[t][kb][0].x, v[t][kb][0].y, v[t][kb][1].x, v[t][kb][1].y};
        const float c1[4] = {v[t][kb][2].x, v[t][kb][2].y, v[t][kb][3].x, v[t][kb][3].y};
        make_afrag(xa[t][kb], c0, c1);
      }
    if (!XS && next < units) load_x(next, v);
    AFrag<P> h1[T][P1 / 16], h2[T][P2 / 16];
    hidden(h1, xa, s1, std::integral_constant<int, P1 / 8>{}, std::integral_constant<int, P0 / 16>{});
    hidden(h2, h1, s2, std::integral_constant<int, P2 / 8>{}, std::integral_constant<int, P1 / 16>{});
    // layer 3 -> y
#pragma unroll
    for (int nb = 0; nb < P3 / 8; ++nb) {
      float c[T][4] = {};
#pragma unroll
      for (int kb = 0; kb < P2 / 16; ++kb) {
        const BF b = s3[(nb * (P2 / 16) + kb) * 32 + lane];
#pragma unroll
        for (int t = 0; t < T; ++t) mma16(c[t], h2[t][kb], b);
      }
      const int col = nb * 8 + 2 * q;
#pragma unroll
      for (int t = 0; t < T; ++t)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          const int r = (u * T + t) * 16 + g + 8 * h;
          if (r >= B) continue;
          float* dst = y + static_cast<size_t>(r) * d3 + col;
          if (col + 1 < d3 && (d3 % 2) == 0) {
            __stcs(reinterpret_cast<float2*>(dst), make_float2(c[t][2 * h], c[t][2 * h + 1]));
          } else {
            if (col < d3) dst[0] = c[t][2 * h];
            if (col + 1 < d3) dst[1] = c[t][2 * h + 1];
          }
        }
    }
  };
  int u = blockIdx.x * (kThreads / 32) + warp;
  float2 va[T][P0 / 16][4];
  if constexpr (PF == 0) {
    for (; u < units; u += stride) {
      load_x(u, va);
      run_unit(u, va, units);
    }
  } else {
    if (u < units) {
      if constexpr (XS)
        issue_xs(u);
      else
        load_x(u, va);
    }
    for (; u < units; u += stride) run_unit(u, va, u + stride);
  }
}

// MB > 0: the registers capped so that MB CTAs fit per SM (bf16 "2s" at MB = 2: 128 registers, 64 B spilled;
// "1s" at 4: 64 registers, 16 B spilled; tf32 "1s" at 3: 80 registers, 52 B spilled); MB = 0: no minimum (ptxas's
// choice; bf16 T = 1: 80 registers, three CTAs; an explicit minimum of 1 gave 91 here).
template <class P, int PF, int T, int MB, bool XS>
__global__ void __launch_bounds__(kThreads, MB) kernel_mlp3_tc_mb(const DeviceMlp3 w, const float* __restrict__ x,
                                                                  int B, float* __restrict__ y, const BFrag<P>* g1,
                                                                  const BFrag<P>* g2, const BFrag<P>* g3) {
  mlp3_tc_body<P, PF, T, XS>(w, x, B, y, g1, g2, g3);
}
template <class P, int PF, int T, bool XS>
__global__ void __launch_bounds__(kThreads) kernel_mlp3_tc(const DeviceMlp3 w, const float* __restrict__ x, int B,
                                                            float* __restrict__ y, const BFrag<P>* g1,
                                                            const BFrag<P>* g2, const BFrag<P>* g3) {
  mlp3_tc_body<P, PF, T, XS>(w, x, B, y, g1, g2, g3);
}

// Launches kernel_mlp3_tc: with PF one wave of persistent CTAs (as many as are resident on the device, computed once
// per instantiation and device), else (tiles / 8) CTAs capped at 16 per SM.
template <class P, int PF, int T, int MB, bool XS = false>
cudaError_t launch_tc(const DeviceMlp3& w, const float* x, int B, float* y, bool pdl, const LaunchContext& ctx,
                      cudaStream_t s) {
  auto* kernel = [] {
    if constexpr (MB == 0)
      return kernel_mlp3_tc<P, PF, T, XS>;
    else
      return kernel_mlp3_tc_mb<P, PF, T, MB, XS>;
  }();
  const size_t smem = XS ? tc_xs_smem<T>() : 0;
  const int sms = std::max(1, ctx.caps.sm_count);
  // The shared-memory opt-in and the resident CTAs, once per device.
  const int resident = ctx.cache->get(reinterpret_cast<const void*>(kernel), 0, [&] {
    if (smem > 0) set_max_dynamic_smem(kernel, smem);
    int per_sm = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, smem), "cudaOccupancy");
    return sms * std::max(per_sm, 1);
  });
  const int units = (B + 16 * T - 1) / (16 * T);
  const int grid = std::max(1, std::min((units + 7) / 8, PF ? resident : sms * 16));
  using BF = BFrag<P>;
  const void* const* f = std::is_same_v<P, Bf16Tag> ? w.f_bf16 : std::is_same_v<P, F16Tag> ? w.f_f16 : w.f_tf32;
  return launch_pdl(kernel, dim3(grid), dim3(kThreads), smem, s, 0, pdl, w, x, B, y, static_cast<const BF*>(f[0]),
                    static_cast<const BF*>(f[1]), static_cast<const BF*>(f[2]));
}

// The tensor-core variant the plan names: no prefetch (T = 1), or prefetch with the plan's tiles and x staging (the
// register cap follows the precision: bf16 2 / 4 CTAs per SM for 2 / 1 staged tiles, tf32 none / 3).
template <class P>
cudaError_t launch_tc_plan(const DeviceMlp3& w, const float* x, int B, float* y, const Mlp3Plan& plan,
                           const LaunchContext& ctx, cudaStream_t s) {
  constexpr bool bf = !std::is_same_v<P, Tf32Tag>;  // 16-bit operands (bf16, fp16): the same register budget
  if (!plan.tc_prefetch) return launch_tc<P, 0, 1, 0>(w, x, B, y, plan.pdl, ctx, s);
  if (plan.tc_x_staged && plan.tc_tiles == 2) return launch_tc<P, 1, 2, bf ? 2 : 0, true>(w, x, B, y, plan.pdl, ctx, s);
  if (plan.tc_x_staged) return launch_tc<P, 1, 1, bf ? 4 : 3, true>(w, x, B, y, plan.pdl, ctx, s);
  return launch_tc<P, 1, 1, 0>(w, x, B, y, plan.pdl, ctx, s);
}

}  // namespace

void launch_mlp3(const DeviceMlp3& w, const float* x, int B, float* y, Precision p, const Mlp3Plan& plan,
                 const LaunchContext& ctx, cudaStream_t s) {
  if (B <= 0) return;
  switch (plan.kernel) {
    case Mlp3Kernel::TensorCore: {
      const cudaError_t e = p == Precision::Bf16  ? launch_tc_plan<Bf16Tag>(w, x, B, y, plan, ctx, s)
                            : p == Precision::F16 ? launch_tc_plan<F16Tag>(w, x, B, y, plan, ctx, s)
                                                  : launch_tc_plan<Tf32Tag>(w, x, B, y, plan, ctx, s);
      if (e != cudaSuccess) throw_cuda_error(e, "mlp3 tensor-core launch");
      return;
    }
    case Mlp3Kernel::TinyFixed: {
      const int rpc = plan.rows_per_cta;
      const cudaError_t e = rpc == 16  ? launch_tiny_fixed<16>(w, x, B, y, plan.pdl, ctx, s)
                            : rpc == 4 ? launch_tiny_fixed<4>(w, x, B, y, plan.pdl, ctx, s)
                            : rpc == 2 ? launch_tiny_fixed<2>(w, x, B, y, plan.pdl, ctx, s)
                                       : launch_tiny_fixed<1>(w, x, B, y, plan.pdl, ctx, s);
      if (e != cudaSuccess) throw_cuda_error(e, "mlp3 launch");
      return;
    }
    case Mlp3Kernel::Tiny: {
      if (plan.smem_bytes > 48 * 1024) set_max_dynamic_smem(kernel_mlp3_tiny, plan.smem_bytes);
      const cudaError_t e =
          launch_pdl(kernel_mlp3_tiny, dim3(1), dim3(kThreads), plan.smem_bytes, s, 0, plan.pdl, w, x, B, y);
      if (e != cudaSuccess) throw_cuda_error(e, "mlp3 launch");
      return;
    }
    case Mlp3Kernel::Small:
      if (plan.smem_bytes > 48 * 1024) set_max_dynamic_smem(kernel_mlp3_small, plan.smem_bytes);
      kernel_mlp3_small<<<1, kThreads, plan.smem_bytes, s>>>(w, x, B, y);
      return;
    case Mlp3Kernel::Rows: {
      const int grid = std::min((B + 127) / 128, std::max(1, ctx.caps.sm_count) * 16);
      kernel_mlp3_rows<48, 64, 40, 24><<<grid, 128, 0, s>>>(w, x, B, y);
      return;
    }
    case Mlp3Kernel::Tiled: check_cuda(launch_mlp3_tiled(w, x, B, y, plan.pdl, ctx, s), "mlp3 tiled launch"); return;
    case Mlp3Kernel::General:
      if (plan.rows_per_cta == 32) {
        if (plan.smem_bytes > 48 * 1024) set_max_dynamic_smem(kernel_mlp3_general<4>, plan.smem_bytes);
        kernel_mlp3_general<4><<<(B + 31) / 32, kThreads, plan.smem_bytes, s>>>(w, x, B, y);
      } else {
        if (plan.smem_bytes > 48 * 1024) set_max_dynamic_smem(kernel_mlp3_general<1>, plan.smem_bytes);
        kernel_mlp3_general<1><<<(B + 7) / 8, kThreads, plan.smem_bytes, s>>>(w, x, B, y);
      }
      return;
  }
}

}  // namespace diffscope::kernels
