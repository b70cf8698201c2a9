// mixture_kernels.h — the analytic Gaussian-mixture model on the GPU (SEMANTICS §6): any step table of
// diffusion/step_table.h with the exact eps instead of a network. Plain C++ header; device pointers.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/solver/solver_kernels.h"

namespace diffscope::kernels {

// means (K, dim), var (K) = s_k^2, logw (K) = log w_k, as float.
struct DeviceMixture {
  int K = 0, dim = 0;
  const float *means = nullptr, *var = nullptr, *logw = nullptr;
};

// Steps [k_begin, k_end) of a step table on x (B, dim), one thread per row: eps is the mixture's exact eps at
// abar[k] (heun's second evaluation at abar2[k]); the update, prev, frames and noise as in SolverArgs `run`
// (its net, tab.tt/tt2 and e1 unused). A family table: the output o is that eps at c_in[k] x (c_in2[k] y), the
// heun map Gx ... Go2 as in SolverSteps.
// one_minus_abar (and 2): 1 - abar computed in double on the host (near abar = 1 the fp32 difference 1 - abar
// loses every digit: at sigma(0) ~ 0.01, 1 - abar ~ 1e-4 carries a 6e-4 relative error).
struct MixtureStepArgs {
  DeviceMixture mix;
  const float *abar = nullptr, *abar2 = nullptr;
  const float *one_minus_abar = nullptr, *one_minus_abar2 = nullptr;
  SolverArgs run;
};

constexpr int kMixtureMaxDim = 16, kMixtureMaxK = 64;
inline bool mixture_kernel_supported(int dim, int K) {
  return dim >= 1 && dim <= kMixtureMaxDim && K >= 1 && K <= kMixtureMaxK;
}
void launch_mixture_steps(const MixtureStepArgs& a, cudaStream_t s);

}  // namespace diffscope::kernels
