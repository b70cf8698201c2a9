// mlp3_tiled.cu — fp32 fused 3-layer MLP y = relu(relu(x W1^T) W2^T) W3^T (SEMANTICS §5) for large batches,
// register-blocked like an SGEMM.
//
// A CTA of 128 threads owns a tile of 128 rows at a time (persistent: it loops over tiles, two CTAs per SM).
// Shared memory holds the three weight matrices (repacked once per CTA, see WPlan), the x tile (cp.async, the next
// tile's copy issued as soon as layer 1 has read the current one, so it overlaps layers 2 and 3) and the
// activations h1, h2. Every layer is the same register-blocked product: thread (rg, cg) of 16 row groups x 8
// column groups computes rows rg + 16 i (i < 8) x its N / 8 contiguous columns; per 4 k it loads 8 float4 of the
// input rows and per k N / 8 weights (float4 broadcasts), so each shared-memory load feeds 8-16 FMAs (the one-row-
// per-thread kernel fed 4, and its LSU was as busy as its FMA pipe: docs/decisions/mlp3-fp32-tiled.md).
// Rows are padded in shared memory so that 8 consecutive rows start in 8 different 4-bank groups (row loads are
// conflict-free). Layer 3 writes its tile to shared memory, which is then stored to y with coalesced 16-byte stores.
#include "kernels/mlp3/mlp3_tiled.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "kernels/shared/cuda_error.h"
#include "kernels/shared/pdl.cuh"

namespace diffscope::kernels {

namespace {

constexpr int kTM = 128;              // rows per tile
constexpr int kTT = 128;              // threads per CTA
constexpr int kRG = 16, kCG = 8;      // row groups x column groups = kTT
constexpr int kRPT = kTM / kRG;       // rows per thread
static_assert(kRG * kCG == kTT, "one thread per (row group, column group)");

// Row stride in shared memory of a d-wide activation: d / 4 odd, so rows r .. r + 7 start in distinct bank quads.
constexpr int pad_stride(int d) { return (d / 4) % 2 == 0 ? d + 4 : d; }

// Shared-memory layout of a layer's weights W^T (K, N): thread column group cg owns columns [cg CW, cg CW + CW).
// Plane A holds, per (k, cg), the first A = 4 floor(CW / 4) of them (float4 loads); plane B the remaining R,
// padded to RP in {0, 1, 2, 4} floats (one float / float2 / float4 load). 48-64-40-24: CW 8 / 5 / 3.
template <int K, int N>
struct WPlan {
  static_assert(N % kCG == 0 && K % 4 == 0, "N a multiple of 8, K a multiple of 4");
  static constexpr int CW = N / kCG;
  static constexpr int A = CW / 4 * 4, R = CW % 4, RP = R == 3 ? 4 : R;
  static constexpr int floats = K * kCG * (A + RP);
  // Fills the layout from WT (K, N) row-major (global memory), zeros in the padding.
  __device__ static void fill(float* ws, const float* __restrict__ WT) {
    constexpr int a = A > 0 ? A : 1, rp = RP > 0 ? RP : 1;  // divisors of the planes that exist
    for (int i = threadIdx.x; i < floats; i += kTT) {
      int k, col;
      bool ok = true;
      if (i < K * kCG * A) {
        k = i / (kCG * a);
        const int rem = i % (kCG * a);
        col = (rem / a) * CW + rem % a;
      } else {
        const int j = i - K * kCG * A;
        k = j / (kCG * rp);
        const int rem = j % (kCG * rp), e = rem % rp;
        col = (rem / rp) * CW + A + e;
        ok = e < R;
      }
      ws[i] = ok ? __ldg(WT + k * N + col) : 0.f;
    }
  }
  // The CW weights of row k for column group cg.
  __device__ static __forceinline__ void load(const float* ws, int k, int cg, float (&w)[CW]) {
    if constexpr (A > 0) {
      const float4* a4 = reinterpret_cast<const float4*>(ws + (k * kCG + cg) * A);
#pragma unroll
      for (int q = 0; q < A / 4; ++q) {
        const float4 v = a4[q];
        w[4 * q] = v.x, w[4 * q + 1] = v.y, w[4 * q + 2] = v.z, w[4 * q + 3] = v.w;
      }
    }
    const float* b = ws + K * kCG * A + (k * kCG + cg) * RP;
    if constexpr (RP == 4) {
      const float4 v = *reinterpret_cast<const float4*>(b);
      w[A] = v.x, w[A + 1] = v.y, w[A + 2] = v.z;
    } else if constexpr (RP == 2) {
      const float2 v = *reinterpret_cast<const float2*>(b);
      w[A] = v.x, w[A + 1] = v.y;
    } else if constexpr (RP == 1) {
      w[A] = b[0];
    }
  }
};

// out = in (kTM, K; row stride SIN) x W^T (K, N) for thread (rg, cg); fin(row, acc) gets each of its 8 rows'
// CW sums (k summed in order 0 .. K-1). The k loop is unrolled twice: unrolled whole (all ~6,600 FMAs of a tile in
// straight-line code) it runs 385 us instead of 369 us at B = 2^20 (docs/decisions/mlp3-fp32-tiled.md).
template <int K, int N, int SIN, class Fin>
__device__ __forceinline__ void tile_layer(const float* in, const float* ws, int rg, int cg, Fin fin) {
  using P = WPlan<K, N>;
  constexpr int CW = P::CW;
  float acc[kRPT][CW];
#pragma unroll
  for (int i = 0; i < kRPT; ++i)
#pragma unroll
    for (int j = 0; j < CW; ++j) acc[i][j] = 0.f;
#pragma unroll 2
  for (int k4 = 0; k4 < K; k4 += 4) {
    float4 a[kRPT];
#pragma unroll
    for (int i = 0; i < kRPT; ++i) a[i] = *reinterpret_cast<const float4*>(in + (rg + kRG * i) * SIN + k4);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      float wv[CW];
      P::load(ws, k4 + kk, cg, wv);
#pragma unroll
      for (int i = 0; i < kRPT; ++i) {
        const float av = kk == 0 ? a[i].x : (kk == 1 ? a[i].y : (kk == 2 ? a[i].z : a[i].w));
#pragma unroll
        for (int j = 0; j < CW; ++j) acc[i][j] = fmaf(av, wv[j], acc[i][j]);
      }
    }
  }
#pragma unroll
  for (int i = 0; i < kRPT; ++i) fin(rg + kRG * i, acc[i]);
}

// Stores CW floats (ReLU'd when RELU) at dst; 16-byte stores when CW is a multiple of 4 (dst then aligned).
template <int CW, bool RELU>
__device__ __forceinline__ void store_cols(float* dst, const float (&v)[CW]) {
  auto f = [](float a) { return RELU ? fmaxf(a, 0.f) : a; };
  if constexpr (CW % 4 == 0) {
#pragma unroll
    for (int q = 0; q < CW / 4; ++q)
      reinterpret_cast<float4*>(dst)[q] = make_float4(f(v[4 * q]), f(v[4 * q + 1]), f(v[4 * q + 2]), f(v[4 * q + 3]));
  } else {
#pragma unroll
    for (int j = 0; j < CW; ++j) dst[j] = f(v[j]);
  }
}

__device__ __forceinline__ void cp_async16_zfill(void* smem, const void* gmem, bool valid) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int n = valid ? 16 : 0;  // 0: nothing read, 16 zero bytes written
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(sa), "l"(gmem), "r"(n));
}

// Issues the copy of tile `tile`'s x rows (rows >= B zero-filled) into xs (row stride S0) and commits it.
template <int D0, int S0>
__device__ __forceinline__ void load_x_tile(float* xs, const float* __restrict__ x, int B, int tile) {
  const int row0 = tile * kTM, nr = min(kTM, B - row0);
  const float* src = x + static_cast<size_t>(row0) * D0;
  for (int i = threadIdx.x; i < kTM * D0 / 4; i += kTT) {
    const int r = i / (D0 / 4), c = 4 * (i % (D0 / 4));
    const bool ok = r < nr;
    cp_async16_zfill(xs + r * S0 + c, ok ? src + static_cast<size_t>(r) * D0 + c : x, ok);
  }
  asm volatile("cp.async.commit_group;" ::: "memory");
}

template <int D0, int D1, int D2, int D3>
struct TiledLayout {
  using P1 = WPlan<D0, D1>;
  using P2 = WPlan<D1, D2>;
  using P3 = WPlan<D2, D3>;
  static constexpr int S0 = pad_stride(D0), S1 = pad_stride(D1), S2 = pad_stride(D2), S3 = pad_stride(D3);
  static constexpr int w1 = 0, w2 = w1 + P1::floats, w3 = w2 + P2::floats, xs = w3 + P3::floats,
                       h1 = xs + kTM * S0, h2 = h1 + kTM * S1, total = h2 + kTM * S2;
  static_assert(kTM * S3 <= kTM * S1, "the y tile is staged in h1's space");
  static_assert(xs % 4 == 0 && h1 % 4 == 0 && h2 % 4 == 0 && S0 % 4 == 0 && S1 % 4 == 0 && S2 % 4 == 0 && S3 % 4 == 0,
                "16-byte aligned rows");
  static_assert(D3 % 4 == 0, "y rows stored as float4");
  static constexpr size_t bytes = sizeof(float) * total;
};

template <int D0, int D1, int D2, int D3>
__global__ void __launch_bounds__(kTT, 2) kernel_mlp3_tiled(const DeviceMlp3 w, const float* __restrict__ x, int B,
                                                            float* __restrict__ y) {
  using L = TiledLayout<D0, D1, D2, D3>;
  extern __shared__ float4 smem_tiled4[];
  float* sm = reinterpret_cast<float*>(smem_tiled4);
  float *w1 = sm + L::w1, *w2 = sm + L::w2, *w3 = sm + L::w3, *xs = sm + L::xs, *h1 = sm + L::h1, *h2 = sm + L::h2;
  float* ys = h1;  // layer 3's output tile: h1 is dead once layer 2 has run
  const int tiles = (B + kTM - 1) / kTM;
  pdl_launch_dependents();
  // Weights (written only by cudaMemcpy) before pdl_wait(); x and y after it (pdl.cuh).
  L::P1::fill(w1, w.W1T);
  L::P2::fill(w2, w.W2T);
  L::P3::fill(w3, w.W3T);
  pdl_wait();
  int tile = blockIdx.x;
  if (tile < tiles) load_x_tile<D0, L::S0>(xs, x, B, tile);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // A warp: 8 consecutive row groups (conflict-free row loads) x 4 column groups (weight broadcasts).
  const int rg = (warp & 1) * 8 + (lane & 7), cg = (warp >> 1) * 4 + (lane >> 3);
  for (; tile < tiles; tile += gridDim.x) {
    asm volatile("cp.async.wait_all;" ::: "memory");
    __syncthreads();  // x tile in place; the previous tile's y copy has read ys
    tile_layer<D0, D1, L::S0>(xs, w1, rg, cg, [&](int r, const float(&v)[D1 / kCG]) {
      store_cols<D1 / kCG, true>(h1 + r * L::S1 + cg * (D1 / kCG), v);
    });
    __syncthreads();  // layer 1 has read xs
    if (tile + static_cast<int>(gridDim.x) < tiles) load_x_tile<D0, L::S0>(xs, x, B, tile + gridDim.x);
    tile_layer<D1, D2, L::S1>(h1, w2, rg, cg, [&](int r, const float(&v)[D2 / kCG]) {
      store_cols<D2 / kCG, true>(h2 + r * L::S2 + cg * (D2 / kCG), v);
    });
    __syncthreads();
    tile_layer<D2, D3, L::S2>(h2, w3, rg, cg, [&](int r, const float(&v)[D3 / kCG]) {
      store_cols<D3 / kCG, false>(ys + r * L::S3 + cg * (D3 / kCG), v);
    });
    __syncthreads();
    const int row0 = tile * kTM, nr = min(kTM, B - row0);
    float4* dst = reinterpret_cast<float4*>(y + static_cast<size_t>(row0) * D3);
    for (int i = threadIdx.x; i < nr * (D3 / 4); i += kTT) {
      const int r = i / (D3 / 4), c = 4 * (i % (D3 / 4));
      __stcs(dst + i, *reinterpret_cast<const float4*>(ys + r * L::S3 + c));
    }
  }
}

template <int D0, int D1, int D2, int D3>
cudaError_t launch_tiled(const DeviceMlp3& w, const float* x, int B, float* y, bool pdl, const LaunchContext& ctx,
                         cudaStream_t s) {
  auto* kernel = kernel_mlp3_tiled<D0, D1, D2, D3>;
  constexpr size_t smem = TiledLayout<D0, D1, D2, D3>::bytes;
  // Resident CTAs (two per SM when the carveout allows), computed once per device with the attributes set.
  const int ctas_per_gpu = ctx.cache->get(reinterpret_cast<const void*>(kernel), 0, [&] {
    set_max_dynamic_smem(kernel, smem);
    set_kernel_attribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
    int per_sm = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kTT, smem), "cudaOccupancy");
    return std::max(1, ctx.caps.sm_count) * std::max(per_sm, 1);
  });
  const int tiles = (B + kTM - 1) / kTM;
  return launch_pdl(kernel, dim3(std::min(tiles, ctas_per_gpu)), dim3(kTT), smem, s, 0, pdl, w, x, B, y);
}

}  // namespace

cudaError_t launch_mlp3_tiled(const DeviceMlp3& w, const float* x, int B, float* y, bool pdl, const LaunchContext& ctx,
                              cudaStream_t s) {
  if (B <= 0) return cudaSuccess;
  return launch_tiled<48, 64, 40, 24>(w, x, B, y, pdl, ctx, s);
}

}  // namespace diffscope::kernels
