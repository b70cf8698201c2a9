// f32_tile.cuh — the fp32 FMA network evaluation of an R-row tile (denoise_f32.cu, denoise_solver_f32.cu), hidden
// 256 only (f32_tile_shape, plan/kernel_shapes.h). Activations live in shared memory transposed ([unit][row], row stride LD = R + 4
// floats: the float4 stores of the SiLU epilogue are conflict-free), in ONE buffer that layer 2 overwrites in place
// (every thread has finished reading h1 at the barrier before its stores). Weights stream from L2 through a
// double-buffered shared-memory stage (cp.async, KC rows of W^T per chunk), one barrier per chunk, the next chunk
// issued right after that barrier, across layer and step boundaries (the stream runs one chunk ahead).
// Each thread owns a TR-row x TC-column register tile of a hidden layer (TR / 4 float4 loads of activations and
// TC / 4 float4 loads of weights per TR * TC FMAs, compile-time offsets); a warp covers 4 row groups x 8 column
// groups, so each of those loads is one shared-memory wavefront. Layer 3 (dim outputs) uses 4x4 tiles for
// dim % 4 == 0, or splits k over 16 lanes with a shuffle reduction for dim <= 4. SiLU as z / (1 + exp(-z)) with
// __expf and __fdividef (a few ulp per element; the outputs' error against float64 measured the same as with
// expf and an IEEE division, 7.57e-7 vs 7.56e-7 at B=16,384 dim 64 x 1000 steps, and 4-7% faster).
// 8x8 tiles over 128 rows with 512 threads (four warps per scheduler) are, with the fast SiLU, 22% / 27% faster than
// 4x16 tiles over 64 rows with 256 threads at 16,384 dim 64 / 65,536 dim 2; 8x16 tiles over 128 rows with 256
// threads are as slow as 4x16 (docs/decisions/fp32-tile.md).
#pragma once
#include <cuda_runtime.h>

#include "kernels/kernels.h"
#include "kernels/shared/mma.cuh"

namespace diffscope::kernels::f32tile {

constexpr int kH = 256;


__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;"); }
__device__ __forceinline__ void cp_wait_all() { asm volatile("cp.async.wait_group 0;" ::: "memory"); }
__device__ __forceinline__ float4 lds4(const float* p) { return *reinterpret_cast<const float4*>(p); }

// One tile configuration: NT threads, each a TR x TC register tile of the hidden layers (TR, TC multiples of 4).
template <int NT_, int TR_, int TC_>
struct F32Tile {
  static constexpr int NT = NT_, TR = TR_, TC = TC_, KC = 16;
  static constexpr int RG = TR / 4, CG = TC / 4;  // float4 groups per thread
  static constexpr int TX = kH / TC, TY = NT / TX;  // threads across the columns / the rows
  static constexpr int R = TY * TR, LD = R + 4;
  static constexpr int L3 = (4 * R + NT - 1) / NT;  // layer-3 row groups per thread at dim 64 (and dim <= 4)
  static_assert(TX % 8 == 0 && TY % 4 == 0 && NT % 32 == 0, "a warp is 8 column groups x 4 row groups");

  // Dynamic shared memory: act [256][LD], the weight stage [2][KC][256], uT [dim+1][LD].
  static size_t smem_bytes(int dim) {
    return sizeof(float) * (static_cast<size_t>(kH) * LD + 2 * KC * kH + static_cast<size_t>(dim + 1) * LD);
  }

  struct TileT {
    float *act, *wbuf, *uT;
    __device__ explicit TileT(float* smem) : act(smem), wbuf(smem + kH * LD), uT(wbuf + 2 * KC * kH) {}
  };

  // x rows [row0, row0 + nrows) of a (B, dim) matrix into uT (rows past nrows zero) / uT's rows out to dst (the
  // tile's first row). Callers sync around them.
  static __device__ __forceinline__ void load_x(const TileT& t, const float* x, int row0, int nrows, int dim) {
    for (int i = threadIdx.x; i < R * dim; i += NT) {
      const int r = i / dim, d = i % dim;
      t.uT[d * LD + r] = r < nrows ? x[static_cast<size_t>(row0 + r) * dim + d] : 0.f;
    }
  }
  static __device__ __forceinline__ void store_x(const TileT& t, float* dst, int nrows, int dim) {
    for (int i = threadIdx.x; i < nrows * dim; i += NT) dst[i] = t.uT[(i % dim) * LD + i / dim];
  }

  // The weight chunks of one evaluation in order — W1T (dim+1 rows), W2T (256), W3T (256 rows of dim; not for
  // dim <= 4, whose layer 3 reads W3T through L1) — repeating evaluation after evaluation. One chunk is in flight
  // ahead of the one computed: `stage` is the stage computed next, `seg` / `chunk` the chunk issued next.
  struct Stream {
    float* wbuf;
    int stage = 0, seg = 0, chunk = 0;
    __device__ Stream(const DeviceNet& net, const TileT& t) : wbuf(t.wbuf) { issue(net, 0); }
    // Issues the next chunk into stage `into` (cp.async, one commit group) and advances. net is the kernel
    // parameter's (read from the parameter bank, not held in registers across the evaluation).
    __device__ __forceinline__ void issue(const DeviceNet& net, int into) {
      const int dim = net.dim;
      const float* W = seg == 0 ? net.W1T : (seg == 1 ? net.W2T : net.W3T);
      const int N = seg == 2 ? dim : kH, K = seg == 0 ? dim + 1 : kH, k0 = chunk * KC, rows = min(KC, K - k0);
      const float4* src = reinterpret_cast<const float4*>(W + static_cast<size_t>(k0) * N);
      float4* dst = reinterpret_cast<float4*>(wbuf + into * KC * kH);
      for (int i = threadIdx.x; i < rows * N / 4; i += NT) cp_async16(dst + i, src + i);
      cp_commit();
      if ((chunk + 1) * KC < K) {
        ++chunk;
      } else {
        chunk = 0;
        seg = seg + 1 == (dim <= 4 ? 2 : 3) ? 0 : seg + 1;
      }
    }
    // Start of a chunk: wait for it, one barrier (the chunk is visible, and every thread has finished the chunk
    // before it, whose stage the next chunk now overwrites), issue the next. Returns the chunk's stage.
    __device__ __forceinline__ const float* begin_chunk(const DeviceNet& net) {
      cp_wait_all();
      __syncthreads();
      issue(net, stage ^ 1);
      return wbuf + stage * KC * kH;
    }
    __device__ __forceinline__ void end_chunk() { stage ^= 1; }
    __device__ void finish() { cp_wait_all(); }
  };

  // The thread's place in the hidden layers' tiles: rows g * TY * 4 + ty * 4 + i, columns c * TX * 4 + tx * 4 + e.
  static __device__ __forceinline__ int tx() {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    return (warp % (TX / 8)) * 8 + (lane & 7);
  }
  static __device__ __forceinline__ int ty() {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    return (warp / (TX / 8)) * 4 + (lane >> 3);
  }

  // acc[i][j] += sum_k inT[k][row i] * W[k][column j] for one k; a / b point at the thread's first row / column.
  static __device__ __forceinline__ void fma_k(const float* a, const float* b, float (&acc)[TR][TC]) {
    float av[TR], bv[TC];
#pragma unroll
    for (int g = 0; g < RG; ++g) {
      const float4 v = lds4(a + g * TY * 4);
      av[4 * g] = v.x, av[4 * g + 1] = v.y, av[4 * g + 2] = v.z, av[4 * g + 3] = v.w;
    }
#pragma unroll
    for (int c = 0; c < CG; ++c) {
      const float4 v = lds4(b + c * TX * 4);
      bv[4 * c] = v.x, bv[4 * c + 1] = v.y, bv[4 * c + 2] = v.z, bv[4 * c + 3] = v.w;
    }
#pragma unroll
    for (int i = 0; i < TR; ++i)
#pragma unroll
      for (int j = 0; j < TC; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
  }

  static __device__ __forceinline__ float silu(float z) { return __fdividef(z, 1.0f + __expf(-z)); }

  // A hidden layer (256 outputs): bias, K rows of the stream, SiLU, stored transposed to act. inT == act (layer 2)
  // is allowed: a barrier separates the last read from the stores.
  static __device__ __forceinline__ void hidden_layer(const DeviceNet& net, const float* inT, int K,
                                                      const float* __restrict__ bias, Stream& ws, float* act) {
    const int tx_ = tx(), ty_ = ty();
    float acc[TR][TC];
#pragma unroll
    for (int c = 0; c < CG; ++c) {
      const float4 b = __ldg(reinterpret_cast<const float4*>(bias + c * TX * 4 + tx_ * 4));
#pragma unroll
      for (int i = 0; i < TR; ++i) acc[i][4 * c] = b.x, acc[i][4 * c + 1] = b.y, acc[i][4 * c + 2] = b.z, acc[i][4 * c + 3] = b.w;
    }
    const float* a0 = inT + ty_ * 4;
    for (int k0 = 0; k0 < K; k0 += KC) {
      const float* b0 = ws.begin_chunk(net) + tx_ * 4;
      const float* a = a0 + k0 * LD;
      if (K - k0 >= KC) {
#pragma unroll
        for (int kk = 0; kk < KC; ++kk) fma_k(a + kk * LD, b0 + kk * kH, acc);
      } else {
#pragma unroll 1
        for (int kk = 0; kk < K - k0; ++kk) fma_k(a + kk * LD, b0 + kk * kH, acc);
      }
      ws.end_chunk();
    }
    if (inT == act) __syncthreads();
#pragma unroll
    for (int c = 0; c < CG; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int j = c * TX * 4 + tx_ * 4 + e;
#pragma unroll
        for (int g = 0; g < RG; ++g)
          *reinterpret_cast<float4*>(act + j * LD + g * TY * 4 + ty_ * 4) =
              make_float4(silu(acc[4 * g][4 * c + e]), silu(acc[4 * g + 1][4 * c + e]), silu(acc[4 * g + 2][4 * c + e]),
                          silu(acc[4 * g + 3][4 * c + e]));
      }
  }

  // eps of the tile's R rows (x in uT rows 0..dim-1, the time input in row dim) -> epi(r, g, e): e[i] is eps of
  // row r, dim 4g + i (only i with 4g + i < dim are meaningful), one call per (r, g) by one thread. epi may
  // rewrite uT's x rows (layer 3 reads only act). The caller syncs before uT is read again.
  template <class Epi>
  static __device__ __forceinline__ void eval(const DeviceNet& net, const TileT& t, Stream& ws, Epi&& epi) {
    const int dim = net.dim;
    hidden_layer(net, t.uT, dim + 1, net.b1, ws, t.act);
    hidden_layer(net, t.act, kH, net.b2, ws, t.act);
    if (dim > 4) {
      layer3_tiles(net, t, ws, epi);
    } else {
      __syncthreads();
      layer3_ksplit(net, t, epi);
    }
  }

  // Layer 3 for dim % 4 == 0: 4x4 tiles (column group cg, row groups rg0 + j * per), W3T from the stream. Where
  // the column groups are a multiple of 4, a warp covers 4 column groups x 8 row groups (one wavefront per load).
  template <class Epi>
  static __device__ __forceinline__ void layer3_tiles(const DeviceNet& net, const TileT& t, Stream& ws, Epi&& epi) {
    const int dim = net.dim, ncg = dim / 4, per = NT / ncg;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    int cg, rg0;
    if (ncg == 4 || ncg == 8 || ncg == 16) {
      cg = (warp % (ncg / 4)) * 4 + (lane & 3);
      rg0 = (warp / (ncg / 4)) * 8 + (lane >> 2);
    } else {
      cg = threadIdx.x % ncg;
      rg0 = threadIdx.x < per * ncg ? static_cast<int>(threadIdx.x) / ncg : R;
    }
    float acc[L3][4][4];
    const float4 b = __ldg(reinterpret_cast<const float4*>(net.b3 + cg * 4));
#pragma unroll
    for (int j = 0; j < L3; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[j][i][0] = b.x, acc[j][i][1] = b.y, acc[j][i][2] = b.z, acc[j][i][3] = b.w;
    for (int k0 = 0; k0 < kH; k0 += KC) {
      const float* wb = ws.begin_chunk(net) + cg * 4;
#pragma unroll 4
      for (int kk = 0; kk < KC; ++kk) {
        const float4 w = lds4(wb + kk * dim);
        const float wv[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int j = 0; j < L3; ++j) {
          const int rg = rg0 + j * per;
          if (rg < R / 4) {
            const float4 a = lds4(t.act + (k0 + kk) * LD + rg * 4);
            const float av[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
              for (int e = 0; e < 4; ++e) acc[j][i][e] = fmaf(av[i], wv[e], acc[j][i][e]);
          }
        }
      }
      ws.end_chunk();
    }
#pragma unroll
    for (int j = 0; j < L3; ++j) {
      const int rg = rg0 + j * per;
      if (rg < R / 4) {
#pragma unroll
        for (int i = 0; i < 4; ++i) epi(rg * 4 + i, cg, acc[j][i]);
      }
    }
  }

  // Layer 3 for dim <= 4: 16 lanes split k for a 4-row group, a shuffle reduction, then lane i < 4 finishes row
  // i of the group, so a solver's epilogue (Philox draw and Box-Muller, SEMANTICS §7) runs on four lanes at once.
  template <class Epi>
  static __device__ __forceinline__ void layer3_ksplit(const DeviceNet& net, const TileT& t, Epi&& epi) {
    const int dim = net.dim, lx = threadIdx.x & 15, gy = threadIdx.x >> 4;
#pragma unroll
    for (int j = 0; j < L3; ++j) {
      const int rg = gy + j * (NT / 16);
      float acc[4][4] = {};
      for (int kk = lx; kk < kH; kk += 16) {
        const float4 av = lds4(t.act + kk * LD + rg * 4);
        const float ar[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
        for (int d = 0; d < 4; ++d) {
          const float w = d < dim ? __ldg(net.W3T + kk * dim + d) : 0.f;
#pragma unroll
          for (int i = 0; i < 4; ++i) acc[i][d] = fmaf(ar[i], w, acc[i][d]);
        }
      }
#pragma unroll
      for (int off = 8; off >= 1; off >>= 1)
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
          for (int d = 0; d < 4; ++d) acc[i][d] += __shfl_xor_sync(0xffffffffu, acc[i][d], off);
      if (lx < 4) {
        float e[4];
#pragma unroll
        for (int d = 0; d < 4; ++d) {
          e[d] = acc[0][d];
#pragma unroll
          for (int i = 1; i < 4; ++i) e[d] = lx == i ? acc[i][d] : e[d];  // acc[lx][d] without local memory
          e[d] += d < dim ? __ldg(net.b3 + d) : 0.f;
        }
        epi(rg * 4 + lx, 0, e);
      }
    }
  }
};

// The tile the kernels run: 128 rows, 8 rows x 8 columns per thread, 16 warps; 128 registers (ptxas: the denoiser
// spills nothing, the solver kernel 40 bytes, outside the FMA loops as measured: its rows are not slower than ddim's).
using Tile = F32Tile<512, 8, 8>;

}  // namespace diffscope::kernels::f32tile
