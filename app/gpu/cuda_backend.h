// cuda_backend.h — the CUDA backend: the host-pointer DenoiserBackend interface (uploads, runs, downloads)
// plus the device-pointer API the GUI drives through CUDA-GL interop. Kernels: kernels/kernels.h.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>

#include "diffusion/step_table.h"
#include "kernels/plan/kernel_plan.h"
#include "model/model.h"
#include "run/backend.h"

namespace diffscope::gpu {

// True when at least one CUDA device is usable (cudaGetDeviceCount succeeds and returns > 0).
bool cuda_device_available();

// Throws ResourceUnavailable("no CUDA device: <cudaGetErrorString>") when there is none.
std::unique_ptr<DenoiserBackend> make_cuda_backend();

class CudaBackend : public DenoiserBackend {
 public:
  CudaBackend();  // throws ResourceUnavailable when there is no device
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::string name() const override;  // "cuda (NVIDIA H200)"
  std::string device() const override;  // "NVIDIA H200"

  // ---- host-pointer interface (run/backend.h); synchronous -------------------------------------------
  void denoise(const DiffusionModel& model, float* x, const int64_t* t_start, int B, int S, float* trajectory,
               Precision precision) override;
  void run_steps(const DiffusionModel& model, const StepTable& table, int k_begin, int k_end, float* x, int B,
                 uint64_t seed, float* frames, Precision precision, uint32_t row_offset = 0,
                 float* prev_x0 = nullptr) override;
  void mlp3(const Mlp3Weights& w, const float* x, int B, float* y, Precision precision) override;
  // The device Philox (start_noise_device), copied back: the GUI's CUDA path draws it the same way.
  void start_noise(const DiffusionModel& model, uint64_t seed, int n, float* x) override;
  // The eps-field kernel (eps_field_device), as the GUI's CUDA path draws the field; a mixture's on the CPU.
  void eps_field(const DiffusionModel& model, const float* pts, int n, int t, bool x0, float* out) override;

  // ---- device-pointer API (GUI, interop); all asynchronous on `stream`, no sync ---------------------
  // Uploads the weights (fp32 + bf16/tf32 fragment copies) and keeps them resident; cheap if the same model
  // (same path and weights) is set again. An analytic (gaussian_mixture) model runs its step tables in
  // kernels/mixture/mixture_steps.cu (denoise and the eps field refuse it); InvalidInput when it is too large for that kernel.
  void set_model(const DiffusionModel& m);
  // Uploads the step table (t, A32, C32, S32). Tables that need a previous data prediction, a second evaluation,
  // float timesteps or a model family's rows (dpmpp-2m, dpmpp-2m-sde, heun; the karras spacing; has_family_rows())
  // run the solver kernels of kernels/solver/ (fp32, the previous data prediction kept on the device between
  // run_steps_device calls); throws InvalidInput naming `--backend cpu` when that kernel cannot hold the network.
  void set_step_table(const StepTable& t);
  // Runs steps [k_begin, k_end) of the current table on d_x (B, dim) in place; writes the state after each step
  // into d_frames (k_end - k_begin, B, dim) if non-null (frame stride = B*dim floats); noise rows row_offset+i.
  void run_steps_device(int k_begin, int k_end, float* d_x, int B, uint64_t seed, float* d_frames, Precision p,
                        cudaStream_t stream, uint32_t row_offset = 0);
  // eps (or the predicted x0 when predict_x0) of the network at timestep t for n points d_pts (n, dim) -> d_out (n, dim).
  void eps_field_device(const float* d_pts, int n, int t, bool predict_x0, float* d_out, cudaStream_t stream);
  // Pure start noise (SEMANTICS §7, step_key T): d_x (B, dim).
  void start_noise_device(float* d_x, int B, uint64_t seed, cudaStream_t stream);
  cudaStream_t stream() const;

  // ---- for tests, benchmarks and the GUI's kernel panel -------------------------------------------------
  // The unfused baseline (cuBLAS + elementwise) of run_steps_device, same contract.
  void run_steps_device_unfused(int k_begin, int k_end, float* d_x, int B, uint64_t seed, float* d_frames,
                                Precision p, cudaStream_t stream, uint32_t row_offset = 0);
  // denoise (SEMANTICS §4) on device pointers with the t-indexed ddpm-mean table of the current model:
  // d_x (B, dim) in place, d_t_start (B) int32, d_frames optional (S, B, dim) (frames after steps 1..S).
  // uniform_t_start >= 0 tells that every row of d_t_start holds that value: the fused call may then run the
  // same steps as a table (t_indexed_run) on the solver kernels where the kernel plan says so
  // (kernels::plain_table_on_solver); the first such call of a table uploads it and waits (outside a graph capture).
  void denoise_device(float* d_x, const int32_t* d_t_start, int B, int S, float* d_frames, Precision p,
                      cudaStream_t stream, bool unfused = false, int uniform_t_start = -1);
  // Forces a kernel path (kernels::DenoisePath::Auto by default); a call it cannot run throws
  // std::invalid_argument (kernels::plan_denoise).
  void force_denoise_path(kernels::DenoisePath path);
  kernels::DenoisePath last_denoise_path() const;
  // The exact kernel of the last fused call (denoiser, solver or MLP): kernels::denoise_kernel_name /
  // mlp3_kernel_name, "solver-tiled-fp32", "solver-general", "mixture".
  std::string last_kernel() const;
  // The kernel options every later plan uses (kernels/plan/kernel_plan.h; default: the fastest measured).
  void set_kernel_options(const kernels::KernelOptions& o);
  const kernels::KernelOptions& kernel_options() const;
  // The device's capabilities, captured when the backend was made.
  const kernels::DeviceCaps& device_caps() const;
  // The buffer the latency kernels' stamp builds write (kernels/shared/latency_stamps.h), capacity in elements;
  // nullptr turns them off.
  void set_latency_stamps(long long* buf, size_t capacity);
  // The 3-layer MLP on device pointers (weights uploaded and kept when the same object is passed again).
  void set_mlp3(const Mlp3Weights& w);
  void mlp3_device(const float* d_x, int B, float* d_y, Precision p, cudaStream_t stream, bool unfused = false);
  void force_mlp3_path(kernels::Mlp3Path path);

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

}  // namespace diffscope::gpu

namespace diffscope {
// The backend's callers (cli, shell, python, tests) name it from diffscope.
using gpu::CudaBackend;
using gpu::cuda_device_available;
using gpu::make_cuda_backend;
}  // namespace diffscope
