// device_workspaces.h — the device scratch CudaBackend's launches need, each grown on demand (never shrunk;
// ResourceUnavailable when the device is out of memory): the general kernel's activations, the unfused
// baselines' intermediates, and the solver kernel's per-row state.
#pragma once
#include <cstddef>
#include <cstdint>

#include "base/precision.h"
#include "gpu/gpu_buffer.h"
#include "kernels/kernels.h"

namespace diffscope::gpu {

// The general kernel's activations at huge hidden sizes (kernels::denoise_general_workspace_floats).
struct GeneralWorkspace {
  GpuBuffer<float> buf;
  // A workspace for `rows` rows of the network (dim, hidden), or null when the kernel needs none.
  float* reserve(int dim, int hidden, int rows) {
    const size_t n = kernels::denoise_general_workspace_floats(dim, hidden, rows);
    if (!n) return nullptr;
    buf.reserve(n);
    return buf.data();
  }
};

// kernels::run_denoise_unfused's intermediates: u (B, dim+1), h1/h2 (B, hidden), e (B, dim) and, for bf16, bf16
// copies of u/h1/h2.
struct UnfusedDenoiseWorkspace {
  GpuBuffer<float> u, h1, h2, e;
  GpuBuffer<uint16_t> u16, h1_16, h2_16;
  kernels::UnfusedWorkspace reserve(int B, int dim, int hidden, Precision p) {
    const size_t b = static_cast<size_t>(B);
    u.reserve(b * (dim + 1)), h1.reserve(b * hidden), h2.reserve(b * hidden), e.reserve(b * dim);
    if (precision_16bit(p)) u16.reserve(b * (dim + 1)), h1_16.reserve(b * hidden), h2_16.reserve(b * hidden);
    return {u.data(), h1.data(), h2.data(), e.data(), u16.data(), h1_16.data(), h2_16.data()};
  }
};

// kernels::run_mlp3_unfused's intermediates: h1 (B, d1), h2 (B, d2) and, for bf16, bf16 copies of x/h1/h2.
struct UnfusedMlp3Workspace {
  GpuBuffer<float> h1, h2;
  GpuBuffer<uint16_t> x16, h1_16, h2_16;
  kernels::Mlp3Workspace reserve(int B, const kernels::DeviceMlp3& w, Precision p) {
    const size_t b = static_cast<size_t>(B);
    h1.reserve(b * w.d1), h2.reserve(b * w.d2);
    if (precision_16bit(p)) x16.reserve(b * w.d0), h1_16.reserve(b * w.d1), h2_16.reserve(b * w.d2);
    return {h1.data(), h2.data(), x16.data(), h1_16.data(), h2_16.data()};
  }
};

// The solver kernel's per-row state (SEMANTICS §3): the previous data prediction (B, dim), kept across
// run_steps_device calls, and Heun's first eps (B, dim).
struct SolverState {
  GpuBuffer<float> prev, e1;
};

}  // namespace diffscope::gpu
