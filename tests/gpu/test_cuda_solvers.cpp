// test_cuda_solvers.cpp — issue 15 on the CUDA backend: euler-ancestral and the integer spacings run in the
// fused kernels and match the float64 CPU reference (same Philox noise, SEMANTICS §7); the solvers the kernels
// do not run yet are refused with InvalidInput naming them and `--backend cpu` (never computed wrongly).
#include <gtest/gtest.h>

#include <string>

#include "core/cpu_reference.h"
#include "core/errors.h"
#include "core/step_table.h"
#include "gpu_test_util.h"

namespace diffscope {
namespace {

struct SolverCase {
  Sampler sampler;
  Spacing spacing;
  int t_start, n_steps, B, dim;
  Precision p;
};

class CudaSolvers : public ::testing::TestWithParam<SolverCase> {};

TEST_P(CudaSolvers, MatchesFloat64AcrossLaunches) {
  SKIP_WITHOUT_CUDA();
  const SolverCase c = GetParam();
  const DiffusionModel m = test::random_model(c.dim, 256, 515 + c.dim, 0.5f);
  const StepTable tab = build_step_table(m.schedule, c.sampler, c.t_start, c.n_steps, 0.5, c.spacing, 0);
  const uint64_t seed = 0x5eed15ull;
  std::vector<float> x = test::random_x(size_t(c.B) * c.dim, 7);
  std::vector<double> xd = test::widen(x);
  const int N = tab.steps(), third = N / 3;
  std::vector<double> framesd(size_t(N) * c.B * c.dim);
  cpu_ref::run_steps<double>(m, tab, 0, N, xd.data(), c.B, seed, framesd.data(), 3);
  CudaBackend be;
  std::vector<float> frames(size_t(N) * c.B * c.dim, test::nan_f());
  be.run_steps(m, tab, 0, third, x.data(), c.B, seed, frames.data(), c.p, 3);
  be.run_steps(m, tab, third, N, x.data(), c.B, seed, frames.data() + size_t(third) * c.B * c.dim, c.p, 3);
  const double err = test::rel_err(x, xd), ferr = test::rel_err(frames, framesd);
  std::printf("[measured] %s %s t=%d N=%d B=%d dim=%d %s rel_err=%.3e frames=%.3e\n", sampler_name(c.sampler),
              spacing_name(c.spacing), c.t_start, N, c.B, c.dim, precision_name(c.p), err, ferr);
  const double tol = c.p == Precision::Fp32 ? 1e-5 : 1e-3;  // as StepsVsFloat64
  EXPECT_LT(err, tol);
  EXPECT_LT(ferr, tol);
}

INSTANTIATE_TEST_SUITE_P(
    Issue15, CudaSolvers,
    ::testing::Values(SolverCase{Sampler::EulerAncestral, Spacing::Default, 999, 50, 37, 2, Precision::Fp32},
                      SolverCase{Sampler::EulerAncestral, Spacing::Trailing, 999, 61, 4097, 2, Precision::Fp32},
                      SolverCase{Sampler::EulerAncestral, Spacing::Leading, 500, 20, 333, 64, Precision::Fp32},
                      SolverCase{Sampler::EulerAncestral, Spacing::Linspace, 999, 30, 333, 64, Precision::Bf16},
                      SolverCase{Sampler::Ddim, Spacing::Trailing, 999, 25, 1000, 2, Precision::Fp32},
                      SolverCase{Sampler::Ddim, Spacing::Linspace, 700, 40, 100, 64, Precision::Fp32}),
    [](const ::testing::TestParamInfo<SolverCase>& i) {
      std::string n = std::string(sampler_name(i.param.sampler)) + "_" + spacing_name(i.param.spacing) + "_" +
                      precision_name(i.param.p) + "_" + std::to_string(i.index);
      for (char& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

TEST(CudaSolversRefuse, UnsupportedTablesAndAnalyticModelsNameBackendCpu) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m = test::random_model(2, 256, 5, 0.5f);
  CudaBackend be;
  std::vector<float> x(2 * 8, 0.5f), prev(x.size(), 0.f);
  auto expect_refusal = [&](const DiffusionModel& model, const StepTable& tab, const std::string& what) {
    try {
      be.run_steps(model, tab, 0, tab.steps(), x.data(), 8, 1, nullptr, Precision::Fp32, 0, prev.data());
      ADD_FAILURE() << what << " was not refused";
    } catch (const InvalidInput& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("--backend cpu"), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  };
  for (Sampler s : {Sampler::Dpmpp2m, Sampler::Dpmpp2mSde, Sampler::Heun})
    expect_refusal(m, build_step_table(m.schedule, s, 999, 10), sampler_name(s));
  expect_refusal(m, build_step_table(m.schedule, Sampler::Ddim, 999, 10, 0.0, Spacing::Karras), "karras");
  DiffusionModel mix = m;
  mix.mixture = GaussianMixture{1, 2, {0.0, 0.0}, {1.0}, {1.0}};
  expect_refusal(mix, build_step_table(m.schedule, Sampler::Ddim, 999, 10), "gaussian_mixture");
}

}  // namespace
}  // namespace diffscope
