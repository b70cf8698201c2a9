// compute_services.h — what the app needs from the layers that ui may not link (docs/ARCHITECTURE.md "Layers"):
// making a compute path (CPU, CUDA + interop, CUDA + staging) and the kernel panel's GPU rows. The shell fills
// it (shell/compute_select.h); tests and CPU-only builds use cpu_only_services().
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "run/backend.h"
#include "run/compute_path.h"
#include "run/kernel_bench.h"
#include "train/trainer.h"

namespace diffscope {

struct ComputeServices {
  // backend: "auto" | "cpu" | "cuda"; `note` receives one line for the UI saying which path and why. Never null.
  std::function<std::unique_ptr<ComputePath>(const std::string& backend, TrajectoryBufferTarget* target,
                                             std::string* note)>
      make_path;
  // True when the build has the CUDA backend and a device is present.
  std::function<bool()> cuda_available;
  // The denoiser backend the comparison grid's cells run on (run/backend.h): the CUDA one when `gpu`, else the
  // CPU reference. Throws ResourceUnavailable when the CUDA backend cannot start.
  std::function<std::unique_ptr<DenoiserBackend>(bool gpu)> make_backend;
  // The kernel panel's GPU rows whose workload contains `filter` (throws on failure); empty without CUDA.
  std::function<std::vector<BenchRow>(const std::string& filter)> gpu_bench;
  // Why there are no GPU rows when gpu_bench is empty or no device is present.
  std::string gpu_missing = "GPU rows (fused / unfused CUDA) need a CUDA build and device";
  // The training panel's trainer (train/train_run.h RunOptions::make_trainer): the CPU trainer unless the shell
  // plugs in another backend's with the same state and random numbers.
  std::function<std::unique_ptr<train::Trainer>(const train::TrainConfig&, const train::TrainData&)> make_trainer =
      train::make_cpu_trainer;
};

// The CPU path only; no GPU rows.
ComputeServices cpu_only_services();

}  // namespace diffscope
