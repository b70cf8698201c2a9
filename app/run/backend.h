// backend.h — the one interface every denoiser backend (CPU reference, CUDA) implements.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "base/precision.h"
#include "diffusion/step_table.h"
#include "model/model.h"

namespace diffscope {

// All pointers here are host memory. Implementations validate nothing about user input: call the
// validate_* functions of base/ranges.h first (the CLI and GUI do). They throw ResourceUnavailable on
// out-of-memory / no device, InvalidInput on a precision they do not support.
class DenoiserBackend {
 public:
  virtual ~DenoiserBackend() = default;
  virtual std::string name() const = 0;  // e.g. "cpu", "cuda (NVIDIA H200)"
  // What the sidecars call "device" (SEMANTICS §6), the same in the CLI and the GUI: "NVIDIA H200",
  // "CPU (2 threads)".
  virtual std::string device() const = 0;

  // The fused multi-step denoise call (SEMANTICS §4): S ddpm-mean steps, row b at t = t_start[b] - k;
  // rows that finished at t = 0 stay frozen. x: (B, dim) in/out. trajectory: optional (S+1, B, dim),
  // frame 0 the input, frame k the state after k steps.
  virtual void denoise(const DiffusionModel& model, float* x, const int64_t* t_start, int B, int S,
                       float* trajectory, Precision precision) = 0;

  // Steps [k_begin, k_end) of `table` on x: (B, dim) in/out. Noise for row i uses Philox counter row
  // `row_offset + i` (SEMANTICS §7). frames: optional (k_end - k_begin, B, dim), the state after each step.
  // prev_x0: (B, dim) in/out, the previous data prediction of dpmpp-2m / dpmpp-2m-sde (table.uses_prev());
  // the caller keeps it across calls (SEMANTICS §3). The CPU backend reads and writes it on every call; the
  // CUDA backend keeps it on the device while the calls continue one run (the same prev_x0, table and B, each
  // call starting at the last one's k_end), reads it only when a call resumes another run (k_begin > 0) and
  // writes it when a call ends the table (k_end == steps). A backend that cannot run a table's solver,
  // spacing or model kind throws InvalidInput naming it and `--backend cpu`.
  virtual void run_steps(const DiffusionModel& model, const StepTable& table, int k_begin, int k_end,
                         float* x, int B, uint64_t seed, float* frames, Precision precision,
                         uint32_t row_offset = 0, float* prev_x0 = nullptr) = 0;

  // The start noise of SEMANTICS §7 (step key T) into x (n, dim), host memory: drawn where this backend draws
  // it for the GUI too (CPU: the host Philox; CUDA: the device kernel, copied back), so that `sample` and the
  // GUI start a run from the same bits on each backend.
  virtual void start_noise(const DiffusionModel& model, uint64_t seed, int n, float* x);
  // The eps (or, with x0, the predicted clean point) at n points pts (n, dim) and timestep t into out (n, dim),
  // host memory, computed where this backend computes the GUI's field view (CPU: diffusion/field_eval.h; CUDA: the
  // eps-field kernel), so that `sample --png` draws the GUI's arrows.
  virtual void eps_field(const DiffusionModel& model, const float* pts, int n, int t, bool x0, float* out);

  // The fused 3-layer MLP (SEMANTICS §5): x (B, d0) -> y (B, d3).
  virtual void mlp3(const Mlp3Weights& w, const float* x, int B, float* y, Precision precision) = 0;
};

// The CPU reference backend (Eigen, fp32; both cores). Defined in run/cpu_backend.cpp.
std::unique_ptr<DenoiserBackend> make_cpu_backend();
// "CPU (N threads)": the CPU backend's device() and the CPU compute path's.
std::string cpu_device_name();

}  // namespace diffscope
