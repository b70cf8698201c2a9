// cuda_trainer.h — the CUDA trainer: train/trainer.h's Trainer on the GPU, with the CPU trainer's maths and random
// numbers (SEMANTICS §11 "Backends"): the batch built on the device from train/train_rng.h's Philox counters,
// forward and backward as cuBLAS GEMMs (cublasGemmEx, loaded at run time: gpu/cublas_loader.h) between fused
// elementwise kernels (bias + SiLU, SiLU's derivative, the loss and its gradient), and Adam + the EMA in one kernel
// over every parameter (kernels/train/train_kernels.h). The step counter lives on the device, so a step has no
// host synchronisation and, after the first (eager) step, runs as one captured CUDA graph.
#pragma once
#include <memory>
#include <string>

#include "train/trainer.h"

namespace diffscope::gpu {

// fp32: every GEMM in float32 (CUBLAS_COMPUTE_32F). bf16: PyTorch's autocast — the GEMMs' operands (activations,
// weights, the backward's output gradients) rounded to bfloat16, float32 accumulation and outputs; the master
// weights, Adam's moments, the EMA, the elementwise kernels and the bias gradients stay float32.
enum class TrainPrecision { F32, Bf16 };

struct CudaTrainerOptions {
  TrainPrecision precision = TrainPrecision::F32;
  bool graph = true;  // capture the step in a CUDA graph (false: the same launches, enqueued one by one)
};

// The CUDA trainer on the current device. Throws ResourceUnavailable (exit 3) when there is no CUDA device, cuBLAS
// cannot be loaded, or the device memory does not fit. `d` must outlive the trainer.
std::unique_ptr<train::Trainer> make_cuda_trainer(const train::TrainConfig& c, const train::TrainData& d,
                                                  const CudaTrainerOptions& o = {});

// "fp32" / "bf16" -> TrainPrecision; InvalidInput naming `arg`, the value and the valid names otherwise.
TrainPrecision parse_train_precision(const std::string& s, const std::string& arg);

}  // namespace diffscope::gpu
