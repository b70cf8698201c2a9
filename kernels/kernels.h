// kernels.h — the host-callable entry points of the CUDA kernels (fused denoiser, fused 3-layer MLP,
// unfused cuBLAS baselines). Plain C++: included by app/gpu (compiled by the host compiler) and by the .cu files.
// All pointers are device pointers; every launch is asynchronous on the given stream.
#pragma once
#include <cuda_runtime.h>
#include <cublas_v2.h>

#include <cstddef>
#include <cstdint>

#include "base/precision.h"
#include "kernels/launch_context.h"
#include "kernels/plan/kernel_plan.h"

namespace diffscope::kernels {

// The eps-network on the device (SEMANTICS §2), in the layouts the kernels read. Built by gpu::DeviceEpsNet
// (app/gpu/device_eps_net.h).
struct DeviceNet {
  int dim = 0, hidden = 0;
  // fp32, PyTorch layout (out, in): W1 (hidden, dim+1), W2 (hidden, hidden), W3 (dim, hidden).
  const float *W1 = nullptr, *b1 = nullptr, *W2 = nullptr, *b2 = nullptr, *W3 = nullptr, *b3 = nullptr;
  // fp32, transposed (in, out): W1T (dim+1, hidden) (row `dim` is the time column), W2T (hidden, hidden), W3T (hidden, dim).
  const float *W1T = nullptr, *W2T = nullptr, *W3T = nullptr;
  // Tensor-core fragments (frag_pack.h) of W1[:, :dim], W2, W3; null when the shape has no fast path.
  const void *f1_bf16 = nullptr, *f2_bf16 = nullptr, *f3_bf16 = nullptr;
  const void *f1_tf32 = nullptr, *f2_tf32 = nullptr, *f3_tf32 = nullptr;
  const void *f1_f16 = nullptr, *f2_f16 = nullptr, *f3_f16 = nullptr;
  // 16-bit copies (PyTorch layout) for the unfused cuBLAS baselines (__nv_bfloat16 / __half bits).
  const uint16_t *W1_bf16 = nullptr, *W2_bf16 = nullptr, *W3_bf16 = nullptr;
  const uint16_t *W1_f16 = nullptr, *W2_f16 = nullptr, *W3_f16 = nullptr;
};

// A step table on the device (diffusion/step_table.h): step k at timestep t[k], x <- A[k] x + C[k] eps + S[k] z.
struct DeviceSteps {
  const int32_t* t = nullptr;
  const float *A = nullptr, *C = nullptr, *S = nullptr;
  int n = 0;  // number of entries
  int T = 0;  // schedule length (network time input is t / T)
};

// One fused multi-step call. Row r at step k (k_begin <= k < k_end) uses table entry
//   idx = row_t ? row_t[r] - (k - k_begin) : k;
// idx < 0 means the row is frozen (SEMANTICS §4: no network evaluation, no table read). Noise (only where
// S[idx] != 0) uses Philox row `row_offset + r`, step_key t[idx] (SEMANTICS §7).
struct DenoiseArgs {
  DeviceNet net;
  DeviceSteps tab;
  float* x = nullptr;              // (B, dim) in/out
  int B = 0;
  const int32_t* row_t = nullptr;  // (B) per-row t_start (denoise with a t-indexed table) or null
  int k_begin = 0, k_end = 0;
  float* frames = nullptr;         // optional (k_end - k_begin, B, dim): state after each step
  uint64_t seed = 0;
  uint32_t row_offset = 0;
  // Owned by the caller (gpu/CudaBackend), no process-wide state in the kernels:
  float* workspace = nullptr;  // the general kernel's activations when they exceed shared memory (huge hidden):
                               // denoise_general_workspace_floats(dim, hidden, B) floats; null when that is 0
  int num_sms = 0;             // the device's SM count (DeviceCaps::sm_count): the tensor-core kernels' grid
};

// Floats of DenoiseArgs::workspace (and launch_eps_field's) the general kernel needs for `rows` rows: 0 when its
// activations fit in shared memory (every shape with a fast path, and hidden up to ~1500 at dim 2).
size_t denoise_general_workspace_floats(int dim, int hidden, int rows);

// Whether this build holds sm_90a code (the wgmma kernels; DeviceCaps::sm90a_code).
bool build_has_sm90a();

// The fused denoiser: one launch for all steps, the kernel `plan` names (plan_denoise, plan/kernel_plan.h). Shapes
// without a fast path run the general kernel (fp32 arithmetic, whatever the precision).
void launch_denoise(const DenoiseArgs& a, Precision p, const DenoisePlan& plan, const LaunchContext& ctx, cudaStream_t s);

// eps (or x0 = (x - sqrt(1-abar) eps)/sqrt(abar) when predict_x0) at one timestep t for n points.
// x0 needs sqrt_abar_t and sqrt_1m_abar_t. pts (n, dim) -> out (n, dim). General kernel, fp32; workspace:
// denoise_general_workspace_floats(dim, hidden, n) floats (null when 0).
void launch_eps_field(const DeviceNet& net, const float* pts, int n, int t, int T, bool predict_x0,
                      float sqrt_abar_t, float sqrt_1m_abar_t, float* out, float* workspace, cudaStream_t s);

// Start noise: x[i] = z(row_offset + i, step_key) (SEMANTICS §7).
void launch_philox_fill(float* x, int B, int dim, uint64_t seed, uint32_t step_key, uint32_t row_offset, cudaStream_t s);

// Keeps `blocks` CTAs busy for `ms` milliseconds (benchmark warm-up: lets the clocks leave their idle state).
void launch_busy(cudaStream_t s, int blocks, double ms);

// ---- Unfused baseline (cuBLAS GEMMs + elementwise kernels), same contract as launch_denoise --------------
// Workspace: u (B, dim+1), h1 (B, hidden), h2 (B, hidden), e (B, dim) floats, plus 16-bit copies of u/h1/h2 for
// bf16 / fp16.
struct UnfusedWorkspace {
  float *u = nullptr, *h1 = nullptr, *h2 = nullptr, *e = nullptr;
  uint16_t *u16 = nullptr, *h1_16 = nullptr, *h2_16 = nullptr;
};
void run_denoise_unfused(cublasHandle_t h, const DenoiseArgs& a, Precision p, const UnfusedWorkspace& ws, cudaStream_t s);

// ---- The fused 3-layer MLP (SEMANTICS §5) ------------------------------------------------------------------
struct DeviceMlp3 {
  int d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  const float *W1 = nullptr, *W2 = nullptr, *W3 = nullptr;     // (out, in) fp32
  const float *W1T = nullptr, *W2T = nullptr, *W3T = nullptr;  // (in, out) fp32
  const void *f_bf16[3] = {nullptr, nullptr, nullptr};         // tensor-core fragments, null if no fast path
  const void *f_tf32[3] = {nullptr, nullptr, nullptr};
  const void *f_f16[3] = {nullptr, nullptr, nullptr};
  const uint16_t *W_bf16[3] = {nullptr, nullptr, nullptr};     // (out, in) bf16 for the unfused baseline
  const uint16_t *W_f16[3] = {nullptr, nullptr, nullptr};      // (out, in) fp16 for the unfused baseline
};
// The fused MLP: the kernel `plan` names (plan_mlp3, plan/kernel_plan.h). x (B, d0) -> y (B, d3).
void launch_mlp3(const DeviceMlp3& w, const float* x, int B, float* y, Precision p, const Mlp3Plan& plan,
                 const LaunchContext& ctx, cudaStream_t s);
// Unfused: three cuBLAS GEMMs + ReLU kernels. ws: (B, d1) + (B, d2) floats (+ 16-bit copies (B, max(d0,d1,d2)) x3
// for bf16 / fp16).
struct Mlp3Workspace {
  float *h1 = nullptr, *h2 = nullptr;
  uint16_t *x16 = nullptr, *h1_16 = nullptr, *h2_16 = nullptr;
};
void run_mlp3_unfused(cublasHandle_t h, const DeviceMlp3& w, const float* x, int B, float* y, Precision p,
                      const Mlp3Workspace& ws, cudaStream_t s);

}  // namespace diffscope::kernels
