// test_cuda_fp16_range.cpp — fp16's range (SEMANTICS §8 "fp16's range"): a network whose weights or activations
// leave +-65504 overflows to Inf in the fp16 kernels, and the output check every front end runs
// (check_output_finite, SEMANTICS §9) refuses the result; the same network in bf16 (bf16 keeps fp32's exponent) stays
// finite. The expected behaviour follows from IEEE binary16's largest finite value, 65504.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "base/errors.h"
#include "diffusion/step_table.h"
#include "gpu_test_util.h"
#include "run/finite_checks.h"

namespace diffscope {
namespace {

bool all_finite(const std::vector<float>& v) {
  for (float f : v)
    if (!std::isfinite(f)) return false;
  return true;
}

// Runs `steps` ddim steps (mma.sync path: 64 rows; wgmma path: 4096 rows where the device has it) at precision p.
std::vector<float> run(const DiffusionModel& m, int B, Precision p) {
  const StepTable tab = build_step_table(m.schedule, Sampler::Ddim, 999, 5);
  std::vector<float> x = test::random_x(size_t(B) * m.net.dim, 4);
  CudaBackend be;
  be.run_steps(m, tab, 0, tab.steps(), x.data(), B, 3, nullptr, p);
  return x;
}

TEST(CudaFp16Range, AWeightBeyond65504OverflowsAndTheOutputCheckRefusesIt) {
  SKIP_WITHOUT_CUDA();
  DiffusionModel m = test::random_model(2, 256, 12, 0.5f);
  m.net.W2[5] = 1.0e5f;  // finite in fp32 and bf16, Inf in fp16
  for (int B : {64, 4096}) {
    const std::vector<float> h = run(m, B, Precision::F16);
    EXPECT_FALSE(all_finite(h)) << "B " << B;
    try {
      check_output_finite("--out", h.data(), 1, B, 2);
      ADD_FAILURE() << "check_output_finite accepted a non-finite fp16 output";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(all_finite(run(m, B, Precision::Bf16))) << "B " << B;
  }
}

TEST(CudaFp16Range, AnActivationBeyond65504Overflows) {
  SKIP_WITHOUT_CUDA();
  DiffusionModel m = test::random_model(2, 256, 13, 0.5f);
  for (float& b : m.net.b1) b = 7.0e4f;  // SiLU(h1) ~ 7e4 > 65504: layer 2's A operand is Inf in fp16
  for (int B : {64, 4096}) {
    EXPECT_FALSE(all_finite(run(m, B, Precision::F16))) << "B " << B;
    EXPECT_TRUE(all_finite(run(m, B, Precision::Bf16))) << "B " << B;
  }
}

}  // namespace
}  // namespace diffscope
