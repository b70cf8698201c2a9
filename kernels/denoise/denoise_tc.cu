// denoise_tc.cu — the large-batch fused denoiser on tensor cores (bf16 / tf32 operands, fp32 accumulation).
// Persistent CTAs of 8 warps; each warp owns 16*MT rows for all steps and keeps every activation in registers:
// the accumulators of one layer become the A operand of the next (mma.cuh), so the step loop has no shared-
// memory traffic for activations and no __syncthreads. Weights are resident in shared memory in fragment order
// (frag_pack.h), one 8/16-byte load per lane per mma; for tf32 the part of W2 that does not fit is read from
// global memory (L2) in the same order. SiLU via tanh.approx. x and eps stay fp32 in registers, so the affine
// update and the trajectory writes are exact fp32.
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "base/philox_normal.h"
#include "kernels/kernels.h"
#include "kernels/shared/cuda_error.h"
#include "kernels/shared/denoise_common.cuh"
#include "kernels/shared/mma.cuh"

namespace diffscope::kernels {

namespace {

constexpr int kWarps = 8;

// H: hidden; KX: dim padded to 16 (also the padded eps width); MT: m16 tiles per warp; NC: n-blocks per layer-2 chunk.
template <class P, int H, int KX, int MT, int NC>
__global__ void __launch_bounds__(kWarps * 32, 1)
    kernel_denoise_tc(const DenoiseArgs a, const BFrag<P>* __restrict__ gF1, const BFrag<P>* __restrict__ gF2,
                      const BFrag<P>* __restrict__ gF3, const float* __restrict__ w1t_g, int n2s) {
  using BF = BFrag<P>;
  constexpr int KB1 = KX / 16, NB1 = H / 8, KBH = H / 16, NB3 = KX / 8;
  extern __shared__ uint4 smem_tc[];
  BF* sF1 = reinterpret_cast<BF*>(smem_tc);
  BF* sF3 = sF1 + NB1 * KB1 * 32;
  BF* sF2 = sF3 + NB3 * KBH * 32;
  float* sb1 = reinterpret_cast<float*>(sF2 + n2s * KBH * 32);
  float* sw1t = sb1 + H;
  float* sb2 = sw1t + H;
  float* sb3 = sb2 + H;

  // Weights into shared memory (once per CTA).
  {
    const int n1 = NB1 * KB1 * 32, n3 = NB3 * KBH * 32, n2 = n2s * KBH * 32;
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
      sb1[i] = a.net.b1[i];
      sw1t[i] = w1t_g[i];
      sb2[i] = a.net.b2[i];
    }
    for (int i = threadIdx.x; i < KX; i += blockDim.x) sb3[i] = i < a.net.dim ? a.net.b3[i] : 0.f;
  }
  __syncthreads();

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int dim = a.net.dim;
  const int tiles = (a.B + 16 * MT - 1) / (16 * MT);
  const size_t frame_stride = static_cast<size_t>(a.B) * dim;

  for (int tile = blockIdx.x * kWarps + warp; tile < tiles; tile += gridDim.x * kWarps) {
    int rows[MT][2];
    float xs[MT][NB3][4];
#pragma unroll
    for (int m = 0; m < MT; ++m) {
      rows[m][0] = tile * 16 * MT + m * 16 + g;
      rows[m][1] = rows[m][0] + 8;
      load_acc_rows<NB3>(&xs[m][0][0], a.x, rows[m], q, a.B, dim);
    }

    for (int k = a.k_begin; k < a.k_end; ++k) {
      RowStep st[MT][2];
      bool any = false;
#pragma unroll
      for (int m = 0; m < MT; ++m)
#pragma unroll
        for (int h = 0; h < 2; ++h) {
          st[m][h] = row_step(a, rows[m][h], k);
          any |= st[m][h].active;
        }
      if (__any_sync(0xffffffffu, any)) {
        // ---- layer 1: h1 = SiLU(W1x x + w1t tt + b1) -> A fragments (16*MT x H)
        AFrag<P> xa[MT][KB1];
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
          for (int j = 0; j < KB1; ++j) make_afrag(xa[m][j], xs[m][2 * j], xs[m][2 * j + 1]);
        AFrag<P> h1[MT][KBH];
#pragma unroll
        for (int j = 0; j < KBH; ++j) {
          float c[MT][2][4];
#pragma unroll
          for (int hf = 0; hf < 2; ++hf) {
            const int nb = 2 * j + hf, col = nb * 8 + 2 * q;
            const float2 bb = *reinterpret_cast<const float2*>(sb1 + col);
            const float2 ww = *reinterpret_cast<const float2*>(sw1t + col);
#pragma unroll
            for (int m = 0; m < MT; ++m) {
              c[m][hf][0] = fmaf(ww.x, st[m][0].tt, bb.x);
              c[m][hf][1] = fmaf(ww.y, st[m][0].tt, bb.y);
              c[m][hf][2] = fmaf(ww.x, st[m][1].tt, bb.x);
              c[m][hf][3] = fmaf(ww.y, st[m][1].tt, bb.y);
            }
#pragma unroll
            for (int kb = 0; kb < KB1; ++kb) {
              const BF b = sF1[(nb * KB1 + kb) * 32 + lane];
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
        float eps[MT][NB3][4];
#pragma unroll
        for (int nb = 0; nb < NB3; ++nb) {
          const float2 bb = *reinterpret_cast<const float2*>(sb3 + nb * 8 + 2 * q);
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
            fb[i] = (nb < n2s ? sF2 : gF2) + nb * KBH * 32 + lane;
            const float2 bb = *reinterpret_cast<const float2*>(sb2 + nb * 8 + 2 * q);
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
              const BF b = sF3[(nb * KBH + kb3) * 32 + lane];
#pragma unroll
              for (int m = 0; m < MT; ++m) mma16(eps[m][nb], h2[m], b);
            }
          }
        }
        // ---- the affine update (fp32), noise where S != 0
#pragma unroll
        for (int m = 0; m < MT; ++m)
#pragma unroll
          for (int h = 0; h < 2; ++h) {
            const RowStep& s = st[m][h];
            if (!s.active) continue;
#pragma unroll
            for (int nb = 0; nb < NB3; ++nb) {
              float z0 = 0.f, z1 = 0.f;
              if (s.S != 0.f && nb * 8 < dim) {
                float z[4];
                philox_normal4(a.seed, a.row_offset + rows[m][h], static_cast<uint32_t>(s.t), (nb * 8 + 2 * q) / 4, z);
                z0 = (q & 1) ? z[2] : z[0];
                z1 = (q & 1) ? z[3] : z[1];
              }
              float& x0 = xs[m][nb][2 * h];
              float& x1 = xs[m][nb][2 * h + 1];
              x0 = fmaf(s.S, z0, fmaf(s.C, eps[m][nb][2 * h], s.A * x0));
              x1 = fmaf(s.S, z1, fmaf(s.C, eps[m][nb][2 * h + 1], s.A * x1));
              const int c = nb * 8 + 2 * q;
              if (c >= dim) x0 = 0.f;
              if (c + 1 >= dim) x1 = 0.f;
            }
          }
      }
      if (a.frames) {
#pragma unroll
        for (int m = 0; m < MT; ++m)
          store_acc_rows<NB3>(&xs[m][0][0], a.frames + (k - a.k_begin) * frame_stride, rows[m], q, a.B, dim);
      }
    }
#pragma unroll
    for (int m = 0; m < MT; ++m) store_acc_rows<NB3>(&xs[m][0][0], a.x, rows[m], q, a.B, dim);
  }
}

template <class P, int H, int KX, int MT, int NC>
void launch_tc(const DenoiseArgs& a, const void* f1, const void* f2, const void* f3, cudaStream_t s) {
  using BF = BFrag<P>;
  constexpr int KB1 = KX / 16, NB1 = H / 8, KBH = H / 16, NB3 = KX / 8;
  constexpr size_t fixed = sizeof(BF) * 32 * (NB1 * KB1 + NB3 * KBH) + sizeof(float) * (3 * H + KX);
  constexpr size_t per_nb2 = sizeof(BF) * 32 * KBH;
  constexpr size_t kMaxSmem = 227 * 1024;
  const int n2s = static_cast<int>(std::min<size_t>(NB1, (kMaxSmem - fixed) / per_nb2));
  const size_t smem = fixed + n2s * per_nb2;
  auto kern = kernel_denoise_tc<P, H, KX, MT, NC>;
  set_max_dynamic_smem(kern, smem);
  const int tiles = (a.B + 16 * MT - 1) / (16 * MT);
  const int grid = std::max(1, std::min(a.num_sms, (tiles + kWarps - 1) / kWarps));
  // The time column W1[:, dim] is row `dim` of W1T (dim+1, hidden).
  const float* w1t = a.net.W1T + static_cast<size_t>(a.net.dim) * a.net.hidden;
  kern<<<grid, kWarps * 32, smem, s>>>(a, static_cast<const BF*>(f1), static_cast<const BF*>(f2), static_cast<const BF*>(f3),
                                       w1t, n2s);
}

}  // namespace

void launch_denoise_tc(const DenoiseArgs& a, Precision p, cudaStream_t s) {
  const DeviceNet& n = a.net;
  if (!denoise_tc_shape(n.dim, n.hidden)) throw std::invalid_argument("tensor-core denoiser: unsupported shape");
  if (a.num_sms <= 0) throw std::invalid_argument("tensor-core denoiser: DenoiseArgs::num_sms is not set");
  if (p == Precision::Bf16) {
    if (n.dim <= 16) launch_tc<Bf16Tag, 256, 16, 2, 2>(a, n.f1_bf16, n.f2_bf16, n.f3_bf16, s);
    else launch_tc<Bf16Tag, 256, 64, 1, 4>(a, n.f1_bf16, n.f2_bf16, n.f3_bf16, s);
  } else if (p == Precision::Tf32) {
    if (n.dim <= 16) launch_tc<Tf32Tag, 256, 16, 1, 4>(a, n.f1_tf32, n.f2_tf32, n.f3_tf32, s);
    else launch_tc<Tf32Tag, 256, 64, 1, 2>(a, n.f1_tf32, n.f2_tf32, n.f3_tf32, s);
  } else {
    throw std::invalid_argument("tensor-core denoiser: fp32 runs on the general or cluster kernel");
  }
}

}  // namespace diffscope::kernels
