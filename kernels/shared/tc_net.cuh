// tc_net.cuh — the network of SEMANTICS §2 (hidden H, dim <= KX <= 64) evaluated by one warp on 16*MT rows with
// mma.sync tensor cores (bf16 / fp16 / tf32 operands, fp32 accumulation), shared by the large-batch denoiser
// (denoise/denoise_tc.cu) and the solver kernel's mma.sync path (solver/solver_tc.cu). Every activation stays in
// registers: the accumulators of one layer become the A operand of the next (mma.cuh), so an evaluation has no
// shared-memory traffic for activations and no __syncthreads. Weights are resident in shared memory in fragment
// order (frag_pack.h), one 8/16-byte load per lane per mma; for tf32 the part of W2 that does not fit is read from
// global memory (L2) in the same order. SiLU via tanh.approx. The input and the output stay fp32 in the accumulator
// layout (one warp's m16 tile m: rows g and g + 8, n8 block nb: columns 8 nb + 2q, +1), so the callers' step updates
// are exact fp32.
#pragma once
#include <cstdint>

#include "kernels/kernels.h"
#include "kernels/shared/mma.cuh"

namespace diffscope::kernels {

// The resident weights of one CTA: fragments of W1 (x part), W3 and the first n2s n-blocks of W2 in shared memory,
// the rest of W2 in global memory; biases and the time column in shared memory.
template <class P, int H, int KX>
struct TcNet {
  using BF = BFrag<P>;
  static constexpr int KB1 = KX / 16, NB1 = H / 8, KBH = H / 16, NB3 = KX / 8;
  const BF *sF1, *sF3, *sF2, *gF2;
  const float *sb1, *sw1t, *sb2, *sb3;
  int n2s;
  // Shared-memory bytes of the resident part, n2s n-blocks of W2 included.
  static constexpr size_t fixed_bytes() { return sizeof(BF) * 32 * (NB1 * KB1 + NB3 * KBH) + sizeof(float) * (3 * H + KX); }
  static constexpr size_t per_nb2_bytes() { return sizeof(BF) * 32 * KBH; }
};

// Copies the weights into shared memory (all threads of the CTA; the caller then runs __syncthreads()).
template <class P, int H, int KX>
__device__ __forceinline__ TcNet<P, H, KX> tc_load_weights(void* smem, const DeviceNet& net, const BFrag<P>* gF1,
                                                          const BFrag<P>* gF2, const BFrag<P>* gF3,
                                                          const float* w1t_g, int n2s) {
  using N = TcNet<P, H, KX>;
  using BF = BFrag<P>;
  BF* sF1 = reinterpret_cast<BF*>(smem);
  BF* sF3 = sF1 + N::NB1 * N::KB1 * 32;
  BF* sF2 = sF3 + N::NB3 * N::KBH * 32;
  float* sb1 = reinterpret_cast<float*>(sF2 + n2s * N::KBH * 32);
  float* sw1t = sb1 + H;
  float* sb2 = sw1t + H;
  float* sb3 = sb2 + H;
  const int n1 = N::NB1 * N::KB1 * 32, n3 = N::NB3 * N::KBH * 32, n2 = n2s * N::KBH * 32;
  // Eight loads in flight per thread: the copy is latency-bound for the small-batch case.
  auto copy = [](BF* dst, const BF* __restrict__ src, int n) {
    int i = threadIdx.x;
    for (; i + 7 * static_cast<int>(blockDim.x) < n; i += 8 * blockDim.x) {
      BF v[8];
#pragma unroll
      for (int q = 0; q < 8; ++q) v[q] = src[i + q * blockDim.x];
#pragma unroll
      for (int q = 0; q < 8; ++q) dst[i + q * blockDim.x] = v[q];
    }
    for (; i < n; i += blockDim.x) dst[i] = src[i];
  };
  copy(sF1, gF1, n1);
  copy(sF3, gF3, n3);
  copy(sF2, gF2, n2);
  for (int i = threadIdx.x; i < H; i += blockDim.x) {
    sb1[i] = net.b1[i];
    sw1t[i] = w1t_g[i];
    sb2[i] = net.b2[i];
  }
  for (int i = threadIdx.x; i < KX; i += blockDim.x) sb3[i] = i < net.dim ? net.b3[i] : 0.f;
  return N{sF1, sF3, sF2, gF2, sb1, sw1t, sb2, sb3, n2s};
}

// One evaluation on the warp's MT m16 tiles: eps = net(scale x, tt) (kScaled; else net(x, tt), scale unused), tt[m][h]
// the time input of tile m's rows g (h = 0) and g + 8 (h = 1). NC: n-blocks per layer-2 chunk.
template <class P, int H, int KX, int MT, int NC, bool kScaled>
__device__ __forceinline__ void tc_eval(const TcNet<P, H, KX>& w, const float (&xs)[MT][KX / 8][4], float scale,
                                        const float (&tt)[MT][2], float (&eps)[MT][KX / 8][4], int lane, int q) {
  using N = TcNet<P, H, KX>;
  using BF = BFrag<P>;
  constexpr int KB1 = N::KB1, NB1 = N::NB1, KBH = N::KBH, NB3 = N::NB3;
  // ---- layer 1: h1 = SiLU(W1x x + w1t tt + b1) -> A fragments (16*MT x H)
  AFrag<P> xa[MT][KB1];
#pragma unroll
  for (int m = 0; m < MT; ++m)
#pragma unroll
    for (int j = 0; j < KB1; ++j) {
      if constexpr (kScaled) {
        float c0[4], c1[4];
#pragma unroll
        for (int e = 0; e < 4; ++e) c0[e] = scale * xs[m][2 * j][e], c1[e] = scale * xs[m][2 * j + 1][e];
        make_afrag(xa[m][j], c0, c1);
      } else {
        make_afrag(xa[m][j], xs[m][2 * j], xs[m][2 * j + 1]);
      }
    }
  AFrag<P> h1[MT][KBH];
#pragma unroll
  for (int j = 0; j < KBH; ++j) {
    float c[MT][2][4];
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int nb = 2 * j + hf, col = nb * 8 + 2 * q;
      const float2 bb = *reinterpret_cast<const float2*>(w.sb1 + col);
      const float2 ww = *reinterpret_cast<const float2*>(w.sw1t + col);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        c[m][hf][0] = fmaf(ww.x, tt[m][0], bb.x);
        c[m][hf][1] = fmaf(ww.y, tt[m][0], bb.y);
        c[m][hf][2] = fmaf(ww.x, tt[m][1], bb.x);
        c[m][hf][3] = fmaf(ww.y, tt[m][1], bb.y);
      }
#pragma unroll
      for (int kb = 0; kb < KB1; ++kb) {
        const BF b = w.sF1[(nb * KB1 + kb) * 32 + lane];
#pragma unroll
        for (int m = 0; m < MT; ++m) mma16(c[m][hf], xa[m][kb], b);
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf)
#pragma unroll
        for (int e = 0; e < 4; ++e) c[m][hf][e] = silu_fast(c[m][hf][e]);
      make_afrag(h1[m][j], c[m][0], c[m][1]);
    }
  }
  // ---- layers 2 and 3, chunked over layer-2 outputs: eps += W3[:, chunk] SiLU(W2[chunk] h1 + b2[chunk])
#pragma unroll
  for (int nb = 0; nb < NB3; ++nb) {
    const float2 bb = *reinterpret_cast<const float2*>(w.sb3 + nb * 8 + 2 * q);
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      eps[m][nb][0] = bb.x;
      eps[m][nb][1] = bb.y;
      eps[m][nb][2] = bb.x;
      eps[m][nb][3] = bb.y;
    }
  }
#pragma unroll 1
  for (int c0 = 0; c0 < NB1; c0 += NC) {
    float acc[MT][NC][4];
    const BF* fb[NC];
#pragma unroll
    for (int i = 0; i < NC; ++i) {
      const int nb = c0 + i;
      fb[i] = (nb < w.n2s ? w.sF2 : w.gF2) + nb * KBH * 32 + lane;
      const float2 bb = *reinterpret_cast<const float2*>(w.sb2 + nb * 8 + 2 * q);
#pragma unroll
      for (int m = 0; m < MT; ++m) {
        acc[m][i][0] = bb.x;
        acc[m][i][1] = bb.y;
        acc[m][i][2] = bb.x;
        acc[m][i][3] = bb.y;
      }
    }
#pragma unroll
    for (int kb = 0; kb < KBH; ++kb) {
      BF b[NC];
#pragma unroll
      for (int i = 0; i < NC; ++i) b[i] = fb[i][kb * 32];
#pragma unroll
      for (int i = 0; i < NC; ++i)
#pragma unroll
        for (int m = 0; m < MT; ++m) mma16(acc[m][i], h1[m][kb], b[i]);
    }
#pragma unroll
    for (int p = 0; p < NC / 2; ++p) {
      AFrag<P> h2[MT];
#pragma unroll
      for (int m = 0; m < MT; ++m) {
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          acc[m][2 * p][e] = silu_fast(acc[m][2 * p][e]);
          acc[m][2 * p + 1][e] = silu_fast(acc[m][2 * p + 1][e]);
        }
        make_afrag(h2[m], acc[m][2 * p], acc[m][2 * p + 1]);
      }
      const int kb3 = c0 / 2 + p;
#pragma unroll
      for (int nb = 0; nb < NB3; ++nb) {
        const BF b = w.sF3[(nb * KBH + kb3) * 32 + lane];
#pragma unroll
        for (int m = 0; m < MT; ++m) mma16(eps[m][nb], h2[m], b);
      }
    }
  }
}

}  // namespace diffscope::kernels
