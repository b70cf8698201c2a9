// kernel_shapes.h — the shapes each kernel can run and the shared-memory layouts that decide it, written once for
// the plan (host, kernel_plan.cpp) and the kernels (device code includes the same layouts). Plain C++ that nvcc
// also compiles for the device; no CUDA headers.
#pragma once
#include <cstddef>

#if defined(__CUDACC__)
#define DIFFSCOPE_HD __host__ __device__
#else
#define DIFFSCOPE_HD
#endif

namespace diffscope::kernels {

constexpr int kNetHidden = 256;   // the hidden width every fast denoiser kernel is written for
constexpr int kClusterRows = 8;   // rows of the cluster denoiser
constexpr int kClusterThreads = 256;
constexpr size_t kClusterMaxSmem = 200 * 1024;
constexpr int kCtaRows = 16;      // rows of the single-CTA bf16 denoiser (m16)
constexpr int kCta8Rows = 8;      // rows of its weights-as-A variant (n8)
constexpr size_t kSolverMaxSmem = 96 * 1024;
constexpr int kMlpTinyRows = 16;  // rows of the one-CTA fp32 MLP kernels
constexpr int kMlpThreads = 256;
constexpr size_t kMlpMaxSmem = 200 * 1024;
// The tensor-core MLP pads its layers to these sizes (each real size within 16 below its pad).
constexpr int kMlpPad0 = 48, kMlpPad1 = 64, kMlpPad2 = 48, kMlpPad3 = 32;

// ---- denoiser -----------------------------------------------------------------------------------------------
// mma.sync tensor-core kernel, single-CTA and wgmma kernels: hidden 256, dim 1..64.
DIFFSCOPE_HD inline bool denoise_tc_shape(int dim, int hidden) { return hidden == kNetHidden && dim >= 1 && dim <= 64; }
// The fp32 register tile (denoise_f32.cu, denoise_solver_f32.cu): hidden 256, dim <= 4 or a multiple of 4 <= 64.
DIFFSCOPE_HD inline bool f32_tile_shape(int dim, int hidden) {
  return hidden == kNetHidden && dim >= 1 && (dim <= 4 || (dim % 4 == 0 && dim <= 64));
}
// The general solver kernel: 8 * rows_per_thread rows of activations in shared memory.
DIFFSCOPE_HD inline size_t solver_smem_bytes(int rows_per_thread, int dim, int hidden) {
  return static_cast<size_t>(8 * rows_per_thread) * (dim + 1 + 2 * hidden) * sizeof(float);
}
DIFFSCOPE_HD inline bool solver_shape(int dim, int hidden) { return solver_smem_bytes(1, dim, hidden) <= kSolverMaxSmem; }

// Row stride of a cluster weight slice [k][o] with N outputs: padded so that the two k-chunks a warp reads at once
// (N = 16: 16 outputs x 2 chunks 4 k apart) fall in different banks.
DIFFSCOPE_HD inline int cluster_w_ld(int N) { return (N % 32 == 0) ? N : N + 4; }

// The cluster denoiser's shared memory (float offsets) for C CTAs: CTA c holds hidden units [c H/C, (c+1) H/C).
struct ClusterLayout {
  int C, HC, K1, K1p, DC;  // DC: output dims owned by each CTA (eps reduce, x update)
  size_t w1, w2, w3, b1, b2, b3, u, h1, h2, ep, epr, xs, red, total;
};
DIFFSCOPE_HD inline ClusterLayout cluster_layout(int dim, int H, int C) {
  ClusterLayout L;
  L.C = C;
  L.HC = H / C;
  L.K1 = dim + 1;
  L.K1p = (L.K1 + 3) & ~3;
  L.DC = (dim + C - 1) / C;
  size_t o = 0;
  auto al = [](size_t v) { return (v + 3) & ~size_t(3); };
  L.w1 = o; o += static_cast<size_t>(L.K1p) * cluster_w_ld(L.HC);          // [k][o], rows K1..K1p-1 zero
  o = al(o); L.w2 = o; o += static_cast<size_t>(H) * cluster_w_ld(L.HC);   // [k][o]
  o = al(o); L.w3 = o; o += static_cast<size_t>(L.HC) * cluster_w_ld(dim); // [k in slice][d]
  o = al(o); L.b1 = o; o += L.HC;
  o = al(o); L.b3 = o; o += dim;
  L.b2 = o; o += L.HC;
  o = al(o); L.u = o;  o += static_cast<size_t>(kClusterRows) * L.K1p;      // [r][K1p]: x, t/T, zero pad
  o = al(o); L.h1 = o; o += static_cast<size_t>(kClusterRows) * H;
  o = al(o); L.h2 = o; o += static_cast<size_t>(kClusterRows) * L.HC;
  o = al(o); L.ep = o; o += static_cast<size_t>(kClusterRows) * dim;        // this CTA's eps partial [r][d]
  o = al(o); L.epr = o; o += static_cast<size_t>(C) * kClusterRows * L.DC;  // partials of the owned dims [c][r][j]
  o = al(o); L.xs = o; o += static_cast<size_t>(kClusterRows) * L.DC;       // new x of the owned dims [r][j]
  o = al(o); L.red = o; o += static_cast<size_t>(kClusterThreads) * kClusterRows + static_cast<size_t>(kClusterRows) * L.HC;
  L.total = o;
  return L;
}
// Whether C CTAs per cluster hold the network (B <= 8 rows).
DIFFSCOPE_HD inline bool cluster_shape(int dim, int hidden, int B, int C) {
  if (C <= 0 || hidden % C != 0 || B > kClusterRows || B < 1 || dim > 256 || hidden / C > 256) return false;
  return cluster_layout(dim, hidden, C).total * sizeof(float) <= kClusterMaxSmem;
}

// ---- 3-layer MLP ----------------------------------------------------------------------------------------------
DIFFSCOPE_HD inline bool mlp3_tc_shape(int d0, int d1, int d2, int d3) {
  return d0 > kMlpPad0 - 16 && d0 <= kMlpPad0 && d0 % 2 == 0 && d1 > kMlpPad1 - 16 && d1 <= kMlpPad1 &&
         d2 > kMlpPad2 - 16 && d2 <= kMlpPad2 && d3 > kMlpPad3 - 16 && d3 <= kMlpPad3;
}
// The reference sizes, which have the register-held tiny kernel and the register-blocked tiled kernel.
DIFFSCOPE_HD inline bool mlp3_reference_shape(int d0, int d1, int d2, int d3) {
  return d0 == 48 && d1 == 64 && d2 == 40 && d3 == 24;
}
// The one-CTA kernel for up to 16 rows: weights, activations and the k-split reduction (float offsets).
struct MlpTinyLayout {
  size_t W1, W2, W3, xs, h1, h2, red, total;
};
DIFFSCOPE_HD inline MlpTinyLayout mlp3_tiny_layout(int d0, int d1, int d2, int d3) {
  auto al = [](size_t v) { return (v + 3) & ~size_t(3); };
  MlpTinyLayout L;
  size_t o = 0;
  L.W1 = o; o = al(o + size_t(d0) * d1);
  L.W2 = o; o = al(o + size_t(d1) * d2);
  L.W3 = o; o = al(o + size_t(d2) * d3);
  L.xs = o; o = al(o + size_t(kMlpTinyRows) * d0);
  L.h1 = o; o = al(o + size_t(kMlpTinyRows) * d1);
  L.h2 = o; o = al(o + size_t(kMlpTinyRows) * d2);
  L.red = o; o += size_t(kMlpThreads) * kMlpTinyRows;
  L.total = o;
  return L;
}
// The one-CTA kernel for up to 64 rows: weights and the B rows' activations, bytes.
DIFFSCOPE_HD inline size_t mlp3_small_smem(int d0, int d1, int d2, int d3, int B) {
  auto al = [](size_t v) { return (v + 3) & ~size_t(3); };
  return sizeof(float) * (al(size_t(d0) * d1) + al(size_t(d1) * d2) + al(size_t(d2) * d3) + al(size_t(B) * d0) +
                          al(size_t(B) * d1) + al(size_t(B) * d2));
}

}  // namespace diffscope::kernels
