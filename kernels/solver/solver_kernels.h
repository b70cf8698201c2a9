// solver_kernels.h — the fused kernels of the multistep and second-order solvers (dpmpp-2m, dpmpp-2m-sde, heun; any
// solver on the karras spacing or on a model family's table): the step table of diffusion/step_table.h with float
// network time values, the previous data prediction per row, Heun's second evaluation and a family's network input
// scale and heun map (SEMANTICS §3). Plain C++ header; device pointers.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/kernels.h"

namespace diffscope::kernels {

// Per-step arrays (length n) of a StepTable as float: tt, tt2 the network's time values (t_net / T, t_net2 / T;
// a family table's time, time2), A, C, S, P, Dx, De, H as in StepTable, key = noise_key. P/Dx/De (dpmpp) and
// H/tt2 (heun) may be null.
// The family arrays (StepTable's c_in ... Go2, SEMANTICS §3 "Every solver on every family"): the network reads
// c_in[k] x (c_in2[k] y for heun's second evaluation; null: x itself), and heun's correction is
// x <- y + H[k] (g2 - g1) with g1 = Gx[k] x + Go[k] o at the step's start state x and g2 = Gx2[k] y + Go2[k] o2
// at the Euler point y (null Gx/Go: g1 = o; null Gx2/Go2: g2 = o2). With every family array null the kernels run
// the epsilon table as written (the same arithmetic, bit for bit, as without them). The kernels run one instance
// per kind: scaled() (the network reads a scaled state), heun_map() (only the heun map set), or neither.
struct SolverSteps {
  const float *tt = nullptr, *tt2 = nullptr;
  const float *A = nullptr, *C = nullptr, *S = nullptr, *P = nullptr, *Dx = nullptr, *De = nullptr, *H = nullptr;
  const float *c_in = nullptr, *c_in2 = nullptr, *Gx = nullptr, *Go = nullptr, *Gx2 = nullptr, *Go2 = nullptr;
  const uint32_t* key = nullptr;
  int n = 0;
  bool scaled() const { return c_in || c_in2; }
  bool heun_map() const { return Gx || Gx2; }
};

// Steps [k_begin, k_end) on x (B, dim) in place, fp32 FMA arithmetic (any dim; hidden up to what fits 96 KB of
// shared memory for 8 rows). prev (B, dim): read and rewritten when tab.P is set. e1 (B, dim): workspace when
// tab.H is set. frames optional (k_end - k_begin, B, dim). Noise: Philox row row_offset + r, step_key key[k].
// With tab.scaled() the state lives in x (global memory) during the launch and shared memory holds the network's
// input c_in x; otherwise the state is the network's input itself, in shared memory.
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

// The same contract on Hopper warpgroup tensor cores (solver_wgmma.cu): bf16 or fp16 operands (p), fp32
// accumulation and fp32 step arithmetic, the warpgroups taking turns on layer 2 (ping-pong); hidden 256, dim <= 64,
// an sm_90a build on a 9.0 device (DeviceCaps::wgmma). Throws std::invalid_argument otherwise.
void launch_solver_wgmma(const SolverArgs& a, Precision p, const LaunchContext& ctx, cudaStream_t s);

// The same contract on mma.sync tensor cores (solver_tc.cu): tf32, bf16 or fp16 operands (p), fp32 accumulation and
// fp32 step arithmetic; hidden 256, dim <= 64 and the net's fragments; num_sms: the grid's bound
// (DeviceCaps::sm_count). Throws std::invalid_argument otherwise.
void launch_solver_tc(const SolverArgs& a, Precision p, int num_sms, cudaStream_t s);

// The same contract on the ddim fast path's tiled fp32 evaluation (denoise_solver_f32.cu): hidden 256 and dim <= 4
// or dim % 4 == 0 (<= 64) (f32_tile_shape). Throws std::invalid_argument otherwise.
void launch_denoise_solver_tiled(const SolverArgs& a, cudaStream_t s);

}  // namespace diffscope::kernels
