// solver_update.cuh — the solver kernels' step update (solver_kernels.h, SEMANTICS §3) on one thread's share of an
// mma accumulator tile (mma.cuh: rows[0] / rows[1] are the thread's rows g / g + 8, v[4 nb + e] is element
// (rows[e >> 1], 8 nb + 2q + (e & 1)) for NB n8 blocks), exact fp32, for the tensor-core solver kernels
// (solver_wgmma.cu, solver_tc.cu):
//   stage 1, after o = net(c_in x, tt):  y = A x + C o (+ P prev) + S z;  prev <- Dx x + De o;  heun: g1 = Gx x + Go o;
//   stage 2 (heun, H != 0), after o2 = net(c_in2 y, tt2):  x <- y + H (g2 - g1),  g2 = Gx2 y + Go2 o2.
// With no family map g1 = o, g2 = o2. Noise: Philox row row_offset + row, step key key[k], element col (SEMANTICS §7).
// Columns past dim stay 0.
#pragma once
#include <cstdint>

#include "base/philox_normal.h"
#include "kernels/solver/solver_kernels.h"

namespace diffscope::kernels {

// One step's coefficients (uniform over rows), read once per step.
struct SolverCoefs {
  float A, C, S, P, Dx, De, H, Gx, Go;
  bool gmap;  // heun's first-stage map Gx / Go is set
  uint32_t key;
};
template <bool GMAP>
__device__ __forceinline__ SolverCoefs solver_coefs(const SolverSteps& tab, int k) {
  SolverCoefs c;
  c.A = __ldg(tab.A + k), c.C = __ldg(tab.C + k), c.S = __ldg(tab.S + k);
  c.P = tab.P ? __ldg(tab.P + k) : 0.f;
  c.Dx = tab.P ? __ldg(tab.Dx + k) : 0.f, c.De = tab.P ? __ldg(tab.De + k) : 0.f;
  c.H = tab.H ? __ldg(tab.H + k) : 0.f;
  c.gmap = GMAP && tab.Gx;
  c.Gx = c.gmap ? __ldg(tab.Gx + k) : 0.f, c.Go = c.gmap ? __ldg(tab.Go + k) : 1.f;
  c.key = __ldg(tab.key + k);
  return c;
}

// The per-element value carried across the network evaluation (the previous data prediction, or heun's g1; no table
// has both): in registers (kRegs: N floats) or at the element in `mem` (B, dim).
template <bool kRegs, int N>
struct SolverAux;
template <int N>
struct SolverAux<true, N> {
  float v[N];
  __device__ __forceinline__ float get(int i, const float*, int, int, int) const { return v[i]; }
  __device__ __forceinline__ void set(int i, float*, int, int, int, float x) { v[i] = x; }
};
template <int N>
struct SolverAux<false, N> {
  __device__ __forceinline__ float get(int, const float* mem, int row, int col, int dim) const {
    return mem[static_cast<size_t>(row) * dim + col];
  }
  __device__ __forceinline__ void set(int, float* mem, int row, int col, int dim, float x) {
    mem[static_cast<size_t>(row) * dim + col] = x;
  }
};

// Stage 1 on the share xs (in: x, out: y) with the network output o. aux_mem: a.prev (dpmpp) or a.e1 (heun).
template <int NB, class Aux>
__device__ __forceinline__ void solver_stage1(const SolverArgs& a, const SolverCoefs& c, const int* rows, int q,
                                              float* xs, const float* o, Aux& aux, float* aux_mem) {
  const int dim = a.net.dim;
#pragma unroll
  for (int nb = 0; nb < NB; ++nb) {
    float z[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int i = 4 * nb + e, row = rows[e >> 1], col = nb * 8 + 2 * q + (e & 1);
      const bool inside = row < a.B && col < dim;
      if (c.S != 0.f && (e & 1) == 0 && nb * 8 < dim)
        philox_normal4(a.seed, a.row_offset + row, c.key, (nb * 8 + 2 * q) / 4, z);
      const float xv = xs[i];
      float y = c.A * xv + c.C * o[i];
      if (a.tab.P) {
        if (c.P != 0.f && inside) y += c.P * aux.get(i, aux_mem, row, col, dim);
        if (inside) aux.set(i, aux_mem, row, col, dim, c.Dx * xv + c.De * o[i]);  // this step's data prediction
      }
      if (c.S != 0.f) y += c.S * ((q & 1) ? z[2 + (e & 1)] : z[e & 1]);  // element col % 4 (no dynamic index)
      if (c.H != 0.f && inside) aux.set(i, aux_mem, row, col, dim, c.gmap ? c.Gx * xv + c.Go * o[i] : o[i]);  // g1
      xs[i] = col < dim ? y : 0.f;
    }
  }
}

// Stage 2 (heun's correction at the Euler point, Karras et al. 2022 Alg. 1) on the share xs (in: y, out: x) with
// the second output o2; Gx2 / Go2 from the table when its map is set.
template <int NB, class Aux>
__device__ __forceinline__ void solver_stage2(const SolverArgs& a, const SolverCoefs& c, float Gx2, float Go2,
                                              bool gmap2, const int* rows, int q, float* xs, const float* o2,
                                              const Aux& aux, const float* aux_mem) {
  const int dim = a.net.dim;
#pragma unroll
  for (int nb = 0; nb < NB; ++nb)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int i = 4 * nb + e, row = rows[e >> 1], col = nb * 8 + 2 * q + (e & 1);
      if (row >= a.B || col >= dim) {
        xs[i] = 0.f;
        continue;
      }
      const float yv = xs[i];
      const float g2 = gmap2 ? Gx2 * yv + Go2 * o2[i] : o2[i];
      xs[i] = yv + c.H * (g2 - aux.get(i, aux_mem, row, col, dim));
    }
}

}  // namespace diffscope::kernels
