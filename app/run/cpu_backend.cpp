// cpu_backend.cpp — the CPU reference backend: cpu_reference.h in float32, blocks of rows over the CPU threads
// (platform/cpu_threads.h). It computes fp32 only and refuses tf32/bf16/fp16 (SEMANTICS §8).
#include <algorithm>
#include <string>

#include "base/arg_error.h"
#include "base/errors.h"
#include "diffusion/cpu_reference.h"
#include "platform/cpu_threads.h"
#include "run/backend.h"

namespace diffscope {
namespace {

void require_fp32(Precision p) {
  if (p != Precision::Fp32)
    throw ArgumentError(Arg::Precision, precision_name(p), "fp32",
                        arg_ref(Arg::Precision) + " " + precision_name(p) + " needs " + arg_ref(Arg::Backend) +
                            " cuda; the CPU backend computes fp32 only");
}

class CpuBackend final : public DenoiserBackend {
 public:
  std::string name() const override { return "cpu"; }
  std::string device() const override { return cpu_device_name(); }

  void denoise(const DiffusionModel& model, float* x, const int64_t* t_start, int B, int S, float* trajectory,
               Precision precision) override {
    require_fp32(precision);
    cpu_ref::denoise<float>(model, x, t_start, B, S, trajectory);
  }

  void run_steps(const DiffusionModel& model, const StepTable& table, int k_begin, int k_end, float* x, int B,
                 uint64_t seed, float* frames, Precision precision, uint32_t row_offset, float* prev_x0) override {
    require_fp32(precision);
    cpu_ref::run_steps<float>(model, table, k_begin, k_end, x, B, seed, frames, row_offset, prev_x0);
  }

  void mlp3(const Mlp3Weights& w, const float* x, int B, float* y, Precision precision) override {
    require_fp32(precision);
    cpu_ref::mlp3<float>(w, x, B, y);
  }
};

}  // namespace

std::string cpu_device_name() {
  const int n = cpu_threads();
  return "CPU (" + std::to_string(n) + (n == 1 ? " thread)" : " threads)");
}

std::unique_ptr<DenoiserBackend> make_cpu_backend() { return std::make_unique<CpuBackend>(); }

}  // namespace diffscope
