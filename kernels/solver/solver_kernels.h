// solver_kernels.h — the fused kernel of the multistep and second-order solvers (dpmpp-2m, dpmpp-2m-sde, heun; any solver on the
// karras spacing): the step table of diffusion/step_table.h with float network timesteps, the previous data
// prediction per row and Heun's second evaluation (SEMANTICS §3). Plain C++ header; device pointers.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kernels.h"

namespace diffscope::kernels {

// Per-step arrays (length n) of a StepTable as float: tt = t_net / T, tt2 = t_net2 / T (the network's time
// inputs), A, C, S, P, Dx, De, H as in StepTable, key = noise_key. P/Dx/De (dpmpp) and H/tt2 (heun) may be null.
struct SolverSteps {
  const float *tt = nullptr, *tt2 = nullptr;
  const float *A = nullptr, *C = nullptr, *S = nullptr, *P = nullptr, *Dx = nullptr, *De = nullptr, *H = nullptr;
  const uint32_t* key = nullptr;
  int n = 0;
};

// Steps [k_begin, k_end) on x (B, dim) in place, fp32 FMA arithmetic (any dim; hidden up to what fits 96 KB of
// shared memory for 8 rows). prev (B, dim): read and rewritten when tab.P is set. e1 (B, dim): workspace when
// tab.H is set. frames optional (k_end - k_begin, B, dim). Noise: Philox row row_offset + r, step_key key[k].
struct SolverArgs {
  DeviceNet net;
  SolverSteps tab;
  float* x = nullptr;
  int B = 0;
  int k_begin = 0, k_end = 0;
  float* frames = nullptr;
  uint64_t seed = 0;
  uint32_t row_offset = 0;
  float* prev = nullptr;
  float* e1 = nullptr;
};

// Launches the solver kernel; throws std::invalid_argument when its activations do not fit in shared memory
// (solver_shape, plan/kernel_shapes.h).
void launch_denoise_solver(const SolverArgs& a, cudaStream_t s);

// The same contract on the ddim fast path's tiled fp32 evaluation (denoise_solver_f32.cu): hidden 256 and dim <= 4
// or dim % 4 == 0 (<= 64) (f32_tile_shape). Throws std::invalid_argument otherwise.
void launch_denoise_solver_tiled(const SolverArgs& a, cudaStream_t s);

}  // namespace diffscope::kernels
