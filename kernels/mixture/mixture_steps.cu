// mixture_steps.cu — step tables on the analytic Gaussian mixture (mixture_kernels.h, SEMANTICS §3, §6): one
// thread per row, the exact eps in fp32 (log-sum-exp over the components), the extended step update of
// kernels/solver/denoise_solver.cu, Philox noise keyed by the table (SEMANTICS §7). A family table (SEMANTICS §3)
// reads the mixture's eps at the VP state c_in x as the model's output o, and heun's correction differences its
// g = Gx x + Go o.
#include <cuda_runtime.h>

#include "base/philox_normal.h"
#include "kernels/mixture/mixture_kernels.h"

namespace diffscope::kernels {
namespace {

// eps*(x) = sqrt(1 - a) sum_k g_k (x - sqrt(a) mu_k) / v_k, v_k = a s_k^2 + 1 - a (SEMANTICS §6).
// oma = 1 - a, computed in double on the host (MixtureStepArgs).
__device__ void mixture_eps(const DeviceMixture& m, const float* x, float a, float oma, float* e) {
  const int d = m.dim;
  const float sa = sqrtf(a), s1 = sqrtf(oma);
  float lg[kMixtureMaxK];
  float best = -INFINITY;
  for (int k = 0; k < m.K; ++k) {
    const float v = a * __ldg(m.var + k) + oma;
    float d2 = 0.f;
    for (int j = 0; j < d; ++j) {
      const float r = x[j] - sa * __ldg(m.means + k * d + j);
      d2 += r * r;
    }
    lg[k] = __ldg(m.logw + k) - 0.5f * d * logf(v) - d2 / (2.f * v);
    best = fmaxf(best, lg[k]);
  }
  float total = 0.f;
  for (int k = 0; k < m.K; ++k) total += (lg[k] = expf(lg[k] - best));
  for (int j = 0; j < d; ++j) e[j] = 0.f;
  for (int k = 0; k < m.K; ++k) {
    const float v = a * __ldg(m.var + k) + oma, g = lg[k] / total;
    for (int j = 0; j < d; ++j) e[j] += g * (x[j] - sa * __ldg(m.means + k * d + j)) / v;
  }
  for (int j = 0; j < d; ++j) e[j] *= s1;
}

__global__ void kernel_mixture_steps(const MixtureStepArgs ma) {
  const SolverArgs& a = ma.run;
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= a.B) return;
  const int d = ma.mix.dim;
  float x[kMixtureMaxDim], e[kMixtureMaxDim], y[kMixtureMaxDim], e2[kMixtureMaxDim], xin[kMixtureMaxDim];
  float* xr = a.x + static_cast<size_t>(r) * d;
  for (int j = 0; j < d; ++j) x[j] = xr[j];
  for (int k = a.k_begin; k < a.k_end; ++k) {
    const float* xe = x;  // where eps is read: x, or a family table's VP state c_in x
    if (a.tab.c_in) {
      const float c = __ldg(a.tab.c_in + k);
      for (int j = 0; j < d; ++j) xin[j] = c * x[j];
      xe = xin;
    }
    mixture_eps(ma.mix, xe, __ldg(ma.abar + k), __ldg(ma.one_minus_abar + k), e);
    const float A = __ldg(a.tab.A + k), C = __ldg(a.tab.C + k), S = __ldg(a.tab.S + k);
    const float P = a.tab.P ? __ldg(a.tab.P + k) : 0.f;
    for (int j = 0; j < d; ++j) y[j] = A * x[j] + C * e[j];
    if (a.tab.P) {
      float* p = a.prev + static_cast<size_t>(r) * d;
      const float dx = __ldg(a.tab.Dx + k), de = __ldg(a.tab.De + k);
      for (int j = 0; j < d; ++j) {
        if (P != 0.f) y[j] += P * p[j];
        p[j] = dx * x[j] + de * e[j];  // this step's data prediction
      }
    }
    if (S != 0.f) {
      for (int j0 = 0; j0 < d; j0 += 4) {
        float z[4];
        philox_normal4(a.seed, a.row_offset + r, __ldg(a.tab.key + k), j0 / 4, z);
        for (int q = 0; q < 4 && j0 + q < d; ++q) y[j0 + q] += S * z[q];
      }
    }
    const float H = a.tab.H ? __ldg(a.tab.H + k) : 0.f;
    if (H != 0.f) {  // Heun's correction at the Euler point
      const float* ye = y;
      if (a.tab.c_in2) {
        const float c = __ldg(a.tab.c_in2 + k);
        for (int j = 0; j < d; ++j) xin[j] = c * y[j];
        ye = xin;
      }
      mixture_eps(ma.mix, ye, __ldg(ma.abar2 + k), __ldg(ma.one_minus_abar2 + k), e2);
      if (a.tab.Gx || a.tab.Gx2) {  // a family table's differenced quantity g = Gx x + Go o (solver_kernels.h)
        const float gx = a.tab.Gx ? __ldg(a.tab.Gx + k) : 0.f, go = a.tab.Gx ? __ldg(a.tab.Go + k) : 1.f;
        const float gx2 = a.tab.Gx2 ? __ldg(a.tab.Gx2 + k) : 0.f, go2 = a.tab.Gx2 ? __ldg(a.tab.Go2 + k) : 1.f;
        for (int j = 0; j < d; ++j) y[j] += H * ((gx2 * y[j] + go2 * e2[j]) - (gx * x[j] + go * e[j]));
      } else {
        for (int j = 0; j < d; ++j) y[j] += H * (e2[j] - e[j]);
      }
    }
    for (int j = 0; j < d; ++j) x[j] = y[j];
    if (a.frames) {
      float* f = a.frames + static_cast<size_t>(k - a.k_begin) * a.B * d + static_cast<size_t>(r) * d;
      for (int j = 0; j < d; ++j) f[j] = x[j];
    }
  }
  for (int j = 0; j < d; ++j) xr[j] = x[j];
}

}  // namespace

void launch_mixture_steps(const MixtureStepArgs& a, cudaStream_t s) {
  if (a.run.B <= 0 || a.run.k_end <= a.run.k_begin) return;
  kernel_mixture_steps<<<(a.run.B + 127) / 128, 128, 0, s>>>(a);
}

}  // namespace diffscope::kernels
