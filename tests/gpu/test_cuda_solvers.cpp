// test_cuda_solvers.cpp — the solvers on the CUDA backend: every solver and spacing matches the float64 CPU
// reference (same Philox noise, SEMANTICS §7) when run in three launches (the previous data prediction kept
// by the caller), on networks and on the analytic gaussians8-exact; what the GPU does not run is refused with
// ArgumentError naming the backend (the CLI: --backend cpu).
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>

#include "base/arg_error.h"
#include "base/errors.h"
#include "cli/cli_util.h"
#include "diffusion/cpu_reference.h"
#include "diffusion/step_table.h"
#include "gpu_test_util.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "model/model.h"
#include "test_paths.h"

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
  std::vector<double> framesd(size_t(N) * c.B * c.dim), prevd(xd.size());
  cpu_ref::run_steps<double>(m, tab, 0, N, xd.data(), c.B, seed, framesd.data(), 3, prevd.data());
  CudaBackend be;
  std::vector<float> frames(size_t(N) * c.B * c.dim, test::nan_f()), prev(x.size(), test::nan_f());
  const size_t fs = size_t(c.B) * c.dim;
  be.run_steps(m, tab, 0, third, x.data(), c.B, seed, frames.data(), c.p, 3, prev.data());
  be.run_steps(m, tab, third, 2 * third, x.data(), c.B, seed, frames.data() + third * fs, c.p, 3, prev.data());
  be.run_steps(m, tab, 2 * third, N, x.data(), c.B, seed, frames.data() + 2 * third * fs, c.p, 3, prev.data());
  const double err = test::rel_err(x, xd), ferr = test::rel_err(frames, framesd);
  std::printf("[measured] %s %s t=%d N=%d B=%d dim=%d %s rel_err=%.3e frames=%.3e\n", sampler_name(c.sampler),
              spacing_name(c.spacing), c.t_start, N, c.B, c.dim, precision_name(c.p), err, ferr);
  EXPECT_LT(err, test::solver_tolerance(c.p));
  EXPECT_LT(ferr, test::solver_tolerance(c.p));
}

INSTANTIATE_TEST_SUITE_P(
    AllSolvers, CudaSolvers,
    ::testing::Values(SolverCase{Sampler::EulerAncestral, Spacing::Default, 999, 50, 37, 2, Precision::Fp32},
                      SolverCase{Sampler::EulerAncestral, Spacing::Trailing, 999, 61, 4097, 2, Precision::Fp32},
                      SolverCase{Sampler::EulerAncestral, Spacing::Leading, 500, 20, 333, 64, Precision::Fp32},
                      SolverCase{Sampler::EulerAncestral, Spacing::Linspace, 999, 30, 333, 64, Precision::Bf16},
                      SolverCase{Sampler::Ddim, Spacing::Trailing, 999, 25, 1000, 2, Precision::Fp32},
                      SolverCase{Sampler::Ddim, Spacing::Linspace, 700, 40, 100, 64, Precision::Fp32},
                      SolverCase{Sampler::Dpmpp2m, Spacing::Karras, 999, 30, 4097, 2, Precision::Fp32},
                      SolverCase{Sampler::Dpmpp2m, Spacing::Default, 999, 50, 333, 64, Precision::Fp32},
                      SolverCase{Sampler::Dpmpp2mSde, Spacing::Karras, 999, 30, 1000, 2, Precision::Fp32},
                      SolverCase{Sampler::Dpmpp2mSde, Spacing::Trailing, 500, 20, 77, 64, Precision::Bf16},
                      SolverCase{Sampler::Heun, Spacing::Karras, 999, 20, 4097, 2, Precision::Fp32},
                      SolverCase{Sampler::Heun, Spacing::Leading, 999, 25, 100, 64, Precision::Fp32},
                      SolverCase{Sampler::EulerAncestral, Spacing::Karras, 999, 30, 1000, 2, Precision::Fp32},
                      SolverCase{Sampler::Ddim, Spacing::Karras, 999, 30, 5, 64, Precision::Fp32},
                      SolverCase{Sampler::Heun, Spacing::Karras, 600, 7, 1, 3, Precision::Fp32}),
    [](const ::testing::TestParamInfo<SolverCase>& i) {
      std::string n = std::string(sampler_name(i.param.sampler)) + "_" + spacing_name(i.param.spacing) + "_" +
                      precision_name(i.param.p) + "_" + std::to_string(i.index);
      for (char& ch : n)
        if (ch == '-') ch = '_';
      return n;
    });

// The solvers run on the tiled fp32 kernel where the shape has it (hidden 256, dim <= 4 or % 4 == 0) and on the
// general solver kernel when the General path is forced; both match float64 (dpmpp-2m-sde: P, Dx, De and noise;
// heun: the second evaluation).
TEST(CudaSolversPaths, TiledAndGeneralMatchFloat64) {
  SKIP_WITHOUT_CUDA();
  for (Sampler s : {Sampler::Dpmpp2mSde, Sampler::Heun})
    for (int dim : {2, 8})
      for (kernels::DenoisePath path : {kernels::DenoisePath::Auto, kernels::DenoisePath::General}) {
        const DiffusionModel m = test::random_model(dim, 256, 77 + dim, 0.5f);
        const StepTable tab = build_step_table(m.schedule, s, 999, 12, 1.0, Spacing::Karras, 0);
        const int B = 200, N = tab.steps();
        std::vector<float> x = test::random_x(size_t(B) * dim, 9);
        std::vector<double> xd = test::widen(x), prevd(xd.size());
        cpu_ref::run_steps<double>(m, tab, 0, N, xd.data(), B, 5, nullptr, 0, prevd.data());
        CudaBackend be;
        be.force_denoise_path(path);
        std::vector<float> prev(x.size(), test::nan_f());
        be.run_steps(m, tab, 0, N, x.data(), B, 5, nullptr, Precision::Fp32, 0, prev.data());
        const auto want = path == kernels::DenoisePath::General ? kernels::DenoisePath::General : kernels::DenoisePath::Tiled;
        EXPECT_EQ(be.last_denoise_path(), want);
        const double err = test::rel_err(x, xd);
        std::printf("[measured] solver %s dim=%d path %s rel_err=%.3e\n", sampler_name(s), dim,
                    kernels::denoise_path_name(be.last_denoise_path()), err);
        EXPECT_LT(err, 1e-5) << sampler_name(s) << " dim " << dim;
      }
}

// The analytic gaussians8-exact model on the GPU (kernels/mixture/mixture_steps.cu) against the float64 CPU reference.
TEST(CudaSolversMixture, EverySolverMatchesFloat64) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m =
      load_diffusion_model(test::repo_root() + "/assets/models/gaussians8-exact.safetensors");
  CudaBackend be;
  const int B = 2000;
  const uint64_t seed = 21;
  std::vector<double> x0(size_t(B) * 2);
  cpu_ref::start_noise<double>(m.schedule.T, 2, seed, B, x0.data());
  for (Sampler s : {Sampler::Ddim, Sampler::Ddpm, Sampler::Dpmpp2m, Sampler::Dpmpp2mSde, Sampler::EulerAncestral,
                    Sampler::Heun}) {
    const bool ddpm = s == Sampler::Ddpm;
    const StepTable tab = build_step_table(m.schedule, s, 999, ddpm ? 1000 : 40, ddpm ? 0.0 : 1.0,
                                           ddpm ? Spacing::Default : Spacing::Karras);
    const int N = tab.steps();
    std::vector<double> xd = x0, prevd(x0.size());
    cpu_ref::run_steps<double>(m, tab, 0, N, xd.data(), B, seed, nullptr, 0, prevd.data());
    std::vector<float> x(x0.begin(), x0.end()), prev(x.size(), test::nan_f());
    be.run_steps(m, tab, 0, N / 2, x.data(), B, seed, nullptr, Precision::Fp32, 0, prev.data());
    be.run_steps(m, tab, N / 2, N, x.data(), B, seed, nullptr, Precision::Fp32, 0, prev.data());
    const double err = test::rel_err(x, xd);
    std::printf("[measured] gaussians8-exact %s N=%d B=%d rel_err=%.3e\n", sampler_name(s), N, B, err);
    EXPECT_LT(err, 1e-4) << sampler_name(s);  // fp32 exp/log of the mixture near abar = 1
  }
}

// The host interface keeps dpmpp's previous data prediction on the device between the chunks of one run
// (SEMANTICS §3): a run in chunks (the CLI's ~100 progress chunks) equals one call bit for bit, in x and in the
// prev_x0 written at the end; a run restarted from step 0 on the same buffer, and a ddim run in between two
// chunks, change nothing; a chunk that resumes a run from a caller's buffer on a fresh backend reads that buffer.
TEST(CudaSolversChunks, DevicePrevEqualsOneCallBitForBit) {
  SKIP_WITHOUT_CUDA();
  for (Sampler s : {Sampler::Dpmpp2m, Sampler::Dpmpp2mSde})
    for (Spacing sp : {Spacing::Default, Spacing::Karras})
      for (int dim : {2, 64}) {
        const DiffusionModel m = test::random_model(dim, 256, 300 + dim, 0.5f);
        const StepTable tab = build_step_table(m.schedule, s, 999, 40, 0.0, sp, 0);
        const StepTable ddim = build_step_table(m.schedule, Sampler::Ddim, 999, 10);
        const int B = 333, N = tab.steps();
        const uint64_t seed = 17;
        const std::vector<float> x0 = test::random_x(size_t(B) * dim, 3);
        const std::string what = std::string(sampler_name(s)) + " " + spacing_name(sp) + " dim " + std::to_string(dim);
        auto bits_equal = [](const std::vector<float>& a, const std::vector<float>& b) {
          return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
        };
        // One call.
        std::vector<float> x1 = x0, p1(x0.size(), test::nan_f());
        CudaBackend one;
        one.run_steps(m, tab, 0, N, x1.data(), B, seed, nullptr, Precision::Fp32, 0, p1.data());
        // Chunks of 7 steps, after a first attempt abandoned at step 9 and restarted from 0, with a ddim run of
        // the same backend between two chunks.
        CudaBackend be;
        std::vector<float> x2 = x0, p2(x0.size(), test::nan_f()), xd = x0;
        be.run_steps(m, tab, 0, 9, x2.data(), B, seed, nullptr, Precision::Fp32, 0, p2.data());
        x2 = x0;
        for (int k = 0; k < N; k += 7) {
          be.run_steps(m, tab, k, std::min(N, k + 7), x2.data(), B, seed, nullptr, Precision::Fp32, 0, p2.data());
          if (k == 14) be.run_steps(m, ddim, 0, 10, xd.data(), B, seed, nullptr, Precision::Fp32);
        }
        EXPECT_TRUE(bits_equal(x1, x2)) << what << ": chunked x differs from one call";
        EXPECT_TRUE(bits_equal(p1, p2)) << what << ": chunked prev_x0 differs from one call";
        // Resume: the state after step 20 from the CPU backend (which writes prev_x0 every call); a fresh CUDA
        // backend given [20, N) must read the caller's buffer, not its own never-written device memory.
        std::vector<float> xr = x0, pr(x0.size(), test::nan_f());
        make_cpu_backend()->run_steps(m, tab, 0, 20, xr.data(), B, seed, nullptr, Precision::Fp32, 0, pr.data());
        CudaBackend fresh;
        fresh.run_steps(m, tab, 20, N, xr.data(), B, seed, nullptr, Precision::Fp32, 0, pr.data());
        const double err = test::rel_err(xr, test::widen(x1));
        std::printf("[measured] %s: resumed from the CPU's state at step 20, rel_err %.3e\n", what.c_str(), err);
        EXPECT_LT(err, 1e-4) << what;  // fp32 CPU vs GPU rounding; a prev not read would be off by O(1)
      }
}

TEST(CudaSolversRefuse, WhatTheGpuDoesNotRunNamesBackendCpu) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m = test::random_model(2, 256, 5, 0.5f);
  CudaBackend be;
  std::vector<float> x(17 * 8, 0.5f), prev(x.size(), 0.f);
  auto expect_refusal = [](const std::function<void()>& f, const std::string& what) {
    try {
      f();
      ADD_FAILURE() << what << " was not refused";
    } catch (const ArgumentError& e) {  // the backend by id: the CLI's --backend cpu, Python's backend cpu
      EXPECT_EQ(e.arg, Arg::Backend);
      const std::string msg = e.message(cli::cli_flag);
      EXPECT_NE(msg.find("--backend cpu"), std::string::npos) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
    }
  };
  DiffusionModel mix = m;
  mix.net.dim = 17;
  mix.mixture = GaussianMixture{1, 17, std::vector<double>(17, 0.0), {1.0}, {1.0}};  // dim 17 > 16
  expect_refusal([&] { be.run_steps(mix, build_step_table(m.schedule, Sampler::Ddim, 999, 10), 0, 10, x.data(), 8, 1,
                                    nullptr, Precision::Fp32, 0, prev.data()); },
                 "gaussian_mixture");
  DiffusionModel mix2 = m;
  mix2.mixture = GaussianMixture{1, 2, {0.0, 0.0}, {1.0}, {1.0}};
  std::vector<int64_t> t0(8, 5);
  expect_refusal([&] { be.denoise(mix2, x.data(), t0.data(), 8, 3, nullptr, Precision::Fp32); }, "gaussian_mixture");
  EXPECT_THROW(be.run_steps(m, build_step_table(m.schedule, Sampler::Dpmpp2m, 999, 10), 0, 10, x.data(), 8, 1,
                            nullptr, Precision::Fp32),
               std::invalid_argument);
}

}  // namespace
}  // namespace diffscope
