// test_cuda_solver_tensor_cores.cpp — the tensor-core solver kernels: on Hopper warpgroup tensor cores
// (kernels/solver/solver_wgmma.cu) and on mma.sync (solver_tc.cu, below the wgmma batch and at tf32):
// every solver, spacing and family table at bf16 and fp16 against the float64 CPU reference (same Philox noise,
// SEMANTICS §7), in three launches (the previous data prediction kept across them), at dim 2 (the previous data
// prediction and heun's g1 in registers) and dims 10 / 33 / 64 (in global memory). The wgmma cases are skipped where the device or the build has no sm_90a.
#include <gtest/gtest.h>

#include <string>

#include "diffusion/cpu_reference.h"
#include "diffusion/step_table.h"
#include "family_fixtures.h"
#include "gpu_test_util.h"
#include "kernels/kernels.h"
#include "model/model.h"

namespace diffscope {
namespace {

using test::solver_tolerance;

struct WgCase {
  Sampler sampler;
  Spacing spacing;
  int n_steps, B, dim;
  Precision p;
};

bool wgmma_here(int dim, int B, Precision p) { return test::path_supported(kernels::DenoisePath::Wgmma, dim, 256, B, p); }

// Runs `tab` on the GPU in three launches and in float64 on the CPU from a fixed start; `kernel` gets the GPU
// kernel's name.
std::pair<double, double> gpu_vs_float64(CudaBackend& be, const DiffusionModel& m, const StepTable& tab, int B,
                                         Precision p, std::string& kernel) {
  const auto errs = test::gpu_vs_float64(be, m, tab, test::random_x(size_t(B) * m.net.dim, 17), B, p, 0x3a3a77ull, 9);
  kernel = be.last_kernel();
  return errs;
}

class SolverWgmma : public ::testing::TestWithParam<WgCase> {};

TEST_P(SolverWgmma, MatchesFloat64AcrossLaunches) {
  SKIP_WITHOUT_CUDA();
  const WgCase c = GetParam();
  if (!wgmma_here(c.dim, c.B, c.p)) GTEST_SKIP() << "no sm_90a code or device here";
  const DiffusionModel m = test::random_model(c.dim, 256, 77 + c.dim, 0.5f);
  const StepTable tab = build_step_table(m.schedule, c.sampler, 999, c.n_steps, 0.5, c.spacing, 0);
  CudaBackend be;
  std::string kernel;
  const auto [err, ferr] = gpu_vs_float64(be, m, tab, c.B, c.p, kernel);
  std::printf("[measured] solver wgmma %s %s N=%d B=%d dim=%d %s rel_err=%.3e frames=%.3e\n", sampler_name(c.sampler),
              spacing_name(c.spacing), tab.steps(), c.B, c.dim, precision_name(c.p), err, ferr);
  EXPECT_EQ(kernel, "solver-wgmma-pingpong");
  EXPECT_LT(err, solver_tolerance(c.p));
  EXPECT_LT(ferr, solver_tolerance(c.p));
}

const Precision B16 = Precision::Bf16, H16 = Precision::F16;
INSTANTIATE_TEST_SUITE_P(
    Cuda, SolverWgmma,
    ::testing::Values(WgCase{Sampler::Dpmpp2m, Spacing::Karras, 30, 4097, 2, B16},
                      WgCase{Sampler::Dpmpp2m, Spacing::Karras, 30, 4097, 2, H16},
                      WgCase{Sampler::Dpmpp2m, Spacing::Default, 50, 5000, 64, B16},
                      WgCase{Sampler::Dpmpp2m, Spacing::Trailing, 25, 4160, 10, H16},
                      WgCase{Sampler::Dpmpp2mSde, Spacing::Karras, 30, 4097, 2, B16},
                      WgCase{Sampler::Dpmpp2mSde, Spacing::Karras, 30, 4200, 64, H16},
                      WgCase{Sampler::Heun, Spacing::Karras, 20, 4097, 2, B16},
                      WgCase{Sampler::Heun, Spacing::Karras, 20, 4097, 2, H16},
                      WgCase{Sampler::Heun, Spacing::Leading, 25, 4500, 64, B16},
                      WgCase{Sampler::EulerAncestral, Spacing::Karras, 30, 4097, 2, H16},
                      WgCase{Sampler::EulerAncestral, Spacing::Karras, 30, 4100, 33, B16},
                      WgCase{Sampler::Ddim, Spacing::Karras, 30, 65536, 2, B16}),
    [](const ::testing::TestParamInfo<WgCase>& i) {
      std::string n = std::string(sampler_name(i.param.sampler)) + "_" + spacing_name(i.param.spacing) + "_dim" +
                      std::to_string(i.param.dim) + "_" + precision_name(i.param.p) + "_" + std::to_string(i.index);
      for (char& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

// A family table's arrays (network input scale, time values, heun's g map: SEMANTICS §3 "Every solver on every
// family"), hand-filled so every array differs from the epsilon table's, on the wgmma solver at both precisions.
TEST(SolverWgmmaFamilies, HandFilledArraysMatchFloat64) {
  SKIP_WITHOUT_CUDA();
  for (int dim : {2, 64})
    for (Precision p : {B16, H16}) {
      const int B = 4096 + 65;
      if (!wgmma_here(dim, B, p)) GTEST_SKIP() << "no sm_90a code or device here";
      const DiffusionModel m = test::random_model(dim, 256, 5 + dim, 0.5f);
      for (Sampler s : {Sampler::Ddim, Sampler::Dpmpp2m, Sampler::Dpmpp2mSde, Sampler::Heun}) {
        StepTable tab = build_step_table(m.schedule, s, 999, 24, 0.5, Spacing::Default, 0);
        test::fill_family_arrays(tab);
        ASSERT_TRUE(tab.has_family_rows());
        CudaBackend be;
        std::string kernel;
        const auto [err, ferr] = gpu_vs_float64(be, m, tab, B, p, kernel);
        std::printf("[measured] solver wgmma family arrays %s dim=%d %s rel_err=%.3e frames=%.3e\n", sampler_name(s),
                    dim, precision_name(p), err, ferr);
        EXPECT_EQ(kernel, "solver-wgmma-pingpong") << sampler_name(s);
        EXPECT_LT(err, solver_tolerance(p)) << sampler_name(s) << " dim " << dim << " " << precision_name(p);
        EXPECT_LT(ferr, solver_tolerance(p)) << sampler_name(s) << " dim " << dim << " " << precision_name(p);
      }
    }
}

// Below kWgmmaMinBatch, and at tf32, the plan runs the mma.sync solver (solver_tc.cu); fp32 the fp32 kernels. Every
// solver on it against float64 at the three tensor-core precisions, dims 2 and 64.
TEST(SolverMmaSync, EverySolverMatchesFloat64BelowTheWgmmaBatch) {
  SKIP_WITHOUT_CUDA();
  for (int dim : {2, 64})
    for (Precision p : {Precision::Tf32, B16, H16})
      for (Sampler s : {Sampler::Dpmpp2m, Sampler::Dpmpp2mSde, Sampler::Heun, Sampler::EulerAncestral}) {
        const DiffusionModel m = test::random_model(dim, 256, 11 + dim, 0.5f);
        const StepTable tab = build_step_table(m.schedule, s, 999, 24, 0.5, Spacing::Karras, 0);
        CudaBackend be;
        std::string kernel;
        const auto [err, ferr] = gpu_vs_float64(be, m, tab, 1000 + dim, p, kernel);
        std::printf("[measured] solver mma.sync %s karras dim=%d %s rel_err=%.3e frames=%.3e\n", sampler_name(s), dim,
                    precision_name(p), err, ferr);
        EXPECT_EQ(kernel, "solver-tensor-core");
        EXPECT_LT(err, solver_tolerance(p)) << sampler_name(s) << " dim " << dim << " " << precision_name(p);
        EXPECT_LT(ferr, solver_tolerance(p)) << sampler_name(s) << " dim " << dim << " " << precision_name(p);
      }
  const DiffusionModel m = test::random_model(2, 256, 3, 0.5f);
  const StepTable tab = build_step_table(m.schedule, Sampler::Dpmpp2m, 999, 10, 0.0, Spacing::Karras, 0);
  auto kernel_for = [&](int B, Precision p) {
    CudaBackend be;
    std::string kernel;
    gpu_vs_float64(be, m, tab, B, p, kernel);
    return kernel;
  };
  EXPECT_EQ(kernel_for(kernels::kWgmmaMinBatch - 1, B16), "solver-tensor-core");
  EXPECT_EQ(kernel_for(kernels::kWgmmaMinBatch, Precision::Fp32), "solver-tiled-fp32");
  EXPECT_EQ(kernel_for(kernels::kWgmmaMinBatch, Precision::Tf32), "solver-tensor-core");
  if (wgmma_here(2, kernels::kWgmmaMinBatch, B16))
    EXPECT_EQ(kernel_for(kernels::kWgmmaMinBatch, B16), "solver-wgmma-pingpong");
}

}  // namespace
}  // namespace diffscope
