// test_cuda_family_tables.cpp — step tables with a model family's rows (StepTable::c_in ... Go2, SEMANTICS §3
// "Every solver on every family") on the CUDA backend: the solver kernels (tiled and general) and the mixture
// kernel against the float64 CPU reference (cpu_ref::run_steps, same Philox noise), on build_family_table's tables
// of every family and on family arrays filled by hand with arbitrary finite values (the kernels' contract alone); a
// family table never runs the integer-t fast kernels, whatever the precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "diffusion/cpu_reference.h"
#include "diffusion/family_table.h"
#include "diffusion/step_table.h"
#include "gpu/gpu_timer.h"
#include "gpu_test_util.h"
#include "kernels/kernels.h"
#include "model/family.h"
#include "model/model.h"
#include "run/backend.h"
#include "family_fixtures.h"
#include "test_paths.h"

namespace diffscope {
namespace {

using test::gpu_vs_float64;

// Every solver kernel path (tiled where the shape has it, general when forced or for a shape without the tiled
// kernel) on hand-filled family arrays: the network read at c_in x with the time values, heun's g map.
TEST(CudaFamilyTables, HandFilledArraysMatchFloat64OnEveryPath) {
  SKIP_WITHOUT_CUDA();
  for (Sampler s : {Sampler::Ddim, Sampler::Dpmpp2m, Sampler::Dpmpp2mSde, Sampler::EulerAncestral, Sampler::Heun})
    for (int dim : {2, 6, 8})
      for (kernels::DenoisePath path : {kernels::DenoisePath::Auto, kernels::DenoisePath::General}) {
        if (dim == 6 && path == kernels::DenoisePath::General) continue;  // dim 6 has no tiled kernel: General anyway
        const DiffusionModel m = test::random_model(dim, 256, 91 + dim, 0.5f);
        StepTable tab = build_step_table(m.schedule, s, 999, 24, 0.5, Spacing::Default, 0);
        test::fill_family_arrays(tab);
        ASSERT_TRUE(tab.has_family_rows());
        const int B = 301;
        CudaBackend be;
        be.force_denoise_path(path);
        const auto [err, ferr] = gpu_vs_float64(be, m, tab, test::random_x(size_t(B) * dim, 13), B, Precision::Fp32);
        const bool tiled = path == kernels::DenoisePath::Auto && dim != 6;
        EXPECT_EQ(be.last_kernel(), tiled ? "solver-tiled-fp32" : "solver-general") << sampler_name(s);
        std::printf("[measured] family arrays %s dim=%d %s rel_err=%.3e frames=%.3e\n", sampler_name(s), dim,
                    be.last_kernel().c_str(), err, ferr);
        EXPECT_LT(err, 1e-5) << sampler_name(s) << " dim " << dim;  // as CudaSolvers (fp32)
        EXPECT_LT(ferr, 1e-5) << sampler_name(s) << " dim " << dim;
      }
}

// A family table runs the solver kernels at every precision (SEMANTICS §3), never the integer-t fast kernels: fp32
// arithmetic at fp32, the mma.sync tensor-core solver at tf32 / bf16 / fp16 (64 rows: below the wgmma batch).
TEST(CudaFamilyTables, RunTheSolverKernelsAtEveryPrecision) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m = test::random_model(8, 256, 7, 0.5f);
  StepTable tab = build_step_table(m.schedule, Sampler::Ddim, 999, 20);
  test::fill_family_arrays(tab);
  const int B = 64;
  for (Precision p : {Precision::Fp32, Precision::Tf32, Precision::Bf16, Precision::F16}) {
    CudaBackend be;
    const auto [err, ferr] = gpu_vs_float64(be, m, tab, test::random_x(size_t(B) * 8, 3), B, p);
    std::printf("[measured] family arrays ddim dim=8 B=%d %s %s rel_err=%.3e frames=%.3e\n", B, precision_name(p),
                be.last_kernel().c_str(), err, ferr);
    EXPECT_EQ(be.last_kernel(), p == Precision::Fp32 ? "solver-tiled-fp32" : "solver-tensor-core") << precision_name(p);
    EXPECT_LT(err, test::solver_tolerance(p)) << precision_name(p);
    EXPECT_LT(ferr, test::solver_tolerance(p)) << precision_name(p);
  }
}

// The analytic gaussians8-exact on hand-filled family arrays (kernels/mixture/mixture_steps.cu): the mixture's eps
// at c_in x and abar[k] as the output, heun's g map.
TEST(CudaFamilyTables, HandFilledArraysOnTheMixtureMatchFloat64) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m = load_diffusion_model(test::repo_root() + "/assets/models/gaussians8-exact.safetensors");
  CudaBackend be;
  const int B = 1000;
  std::vector<double> start(size_t(B) * 2);
  cpu_ref::start_noise<double>(m.schedule.T, 2, 21, B, start.data());
  const std::vector<float> x0(start.begin(), start.end());
  for (Sampler s : {Sampler::Ddim, Sampler::Dpmpp2m, Sampler::Dpmpp2mSde, Sampler::Heun}) {
    StepTable tab = build_step_table(m.schedule, s, 999, 30, 1.0, Spacing::Karras);
    test::fill_family_arrays(tab);
    const auto [err, ferr] = gpu_vs_float64(be, m, tab, x0, B, Precision::Fp32);
    EXPECT_EQ(be.last_kernel(), "mixture");
    std::printf("[measured] family arrays gaussians8-exact %s rel_err=%.3e frames=%.3e\n", sampler_name(s), err, ferr);
    EXPECT_LT(err, 1e-4) << sampler_name(s);  // as CudaSolversMixture: fp32 exp/log of the mixture near abar = 1
    EXPECT_LT(ferr, 1e-4) << sampler_name(s);
  }
}

// The levels of an n-step run of family f on sched: the schedule's timesteps from T - 1 (the VP families, the
// default spacing), FlowMatchEuler's list with shift 3 (flow) or EDM's karras list (edm) from index `first`, as
// plan_run takes them.
LevelRun family_run(const Schedule& sched, Family f, int n, int first = 0) {
  if (is_vp_family(f)) return vp_level_run(sched, build_step_table(sched, Sampler::Ddim, sched.T - 1, n));
  FlowMatchEulerConfig flow;
  flow.T = sched.T, flow.shift = 3.0;
  const LevelList list = f == Family::Flow ? flow_match_euler_levels(flow, n) : edm_levels(EdmConfig{}, n);
  return list_level_run(f, sched, list.levels, first);
}

FamilyParams family_params(Family f, int T) {
  FamilyParams p;
  p.family = f, p.time_input = default_time_input(f), p.T = T;
  return p;
}

// ddim (eta 0.5: noise keyed by the list), dpmpp-2m and heun on every family, flow-heun on flow.
std::vector<std::pair<Family, Sampler>> family_cases() {
  std::vector<std::pair<Family, Sampler>> v;
  for (Family f : {Family::Sample, Family::VPrediction, Family::Flow, Family::Edm}) {
    for (Sampler s : {Sampler::Ddim, Sampler::Dpmpp2m, Sampler::Heun}) v.emplace_back(f, s);
    if (f == Family::Flow) v.emplace_back(f, Sampler::FlowHeun);
  }
  return v;
}

// A start state of the run's first level: x = sqrt(alpha^2 + sigma^2) u for unit-scale u.
std::vector<float> start_state(const LevelRun& run, std::vector<float> u) {
  const float scale = static_cast<float>(1.0 / run.levels[0].vp_scale());
  for (float& v : u) v *= scale;
  return u;
}

// build_family_table's tables of every family on a random network: the tiled and the general solver kernel.
TEST(CudaFamilyTables, EveryFamilyMatchesFloat64OnANetwork) {
  SKIP_WITHOUT_CUDA();
  for (const auto& [f, s] : family_cases())
    for (int dim : {2, 8})
      for (kernels::DenoisePath path : {kernels::DenoisePath::Auto, kernels::DenoisePath::General}) {
        if (dim == 8 && path == kernels::DenoisePath::General) continue;
        const DiffusionModel m = test::random_model(dim, 256, 40 + dim, 0.5f);
        const LevelRun run = family_run(m.schedule, f, 20);
        const StepTable tab = build_family_table(family_params(f, m.schedule.T), false, run, s, 0.5, m.schedule.T);
        ASSERT_TRUE(tab.has_family_rows());
        const int B = 257;
        CudaBackend be;
        be.force_denoise_path(path);
        const std::vector<float> x0 = start_state(run, test::random_x(size_t(B) * dim, 17, 1.f));
        const auto [err, ferr] = gpu_vs_float64(be, m, tab, x0, B, Precision::Fp32);
        const std::string what = std::string(family_name(f)) + " " + sampler_name(s) + " dim " + std::to_string(dim);
        EXPECT_EQ(be.last_kernel(), path == kernels::DenoisePath::General ? "solver-general" : "solver-tiled-fp32")
            << what;
        std::printf("[measured] %s %s rel_err=%.3e frames=%.3e\n", what.c_str(), be.last_kernel().c_str(), err, ferr);
        EXPECT_LT(err, 1e-5) << what;  // as CudaSolvers (fp32)
        EXPECT_LT(ferr, 1e-5) << what;
      }
}

// build_family_table's analytic tables of every family on gaussians8-exact (the mixture kernel).
TEST(CudaFamilyTables, EveryFamilyMatchesFloat64OnTheMixture) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m = load_diffusion_model(test::repo_root() + "/assets/models/gaussians8-exact.safetensors");
  CudaBackend be;
  const int B = 1000;
  std::vector<double> noise(size_t(B) * 2);
  cpu_ref::start_noise<double>(m.schedule.T, 2, 23, B, noise.data());
  for (const auto& [f, s] : family_cases()) {
    // The flow list's first level is s = 1 (alpha = 0), where the exact eps gives no data prediction: from the second.
    const LevelRun run = family_run(m.schedule, f, 30, f == Family::Flow ? 1 : 0);
    const StepTable tab = build_family_table(family_params(f, m.schedule.T), true, run, s, 0.5, m.schedule.T);
    const auto [err, ferr] =
        gpu_vs_float64(be, m, tab, start_state(run, std::vector<float>(noise.begin(), noise.end())), B, Precision::Fp32);
    const std::string what = std::string(family_name(f)) + " " + sampler_name(s);
    EXPECT_EQ(be.last_kernel(), "mixture") << what;
    std::printf("[measured] gaussians8-exact %s rel_err=%.3e frames=%.3e\n", what.c_str(), err, ferr);
    EXPECT_LT(err, 1e-4) << what;  // as CudaSolversMixture
    EXPECT_LT(ferr, 1e-4) << what;
  }
}

// Not a check: the time per network evaluation of the solver kernels' instances against the epsilon table of the
// same solver and shape, for docs/PERFORMANCE.md: a table with heun's map only (c_in 1: the VP families' and flow's
// heun) and a scaled one (c_in != 1, as edm's: the state in global memory). Run with
// --gtest_also_run_disabled_tests on a device.
TEST(CudaFamilyTablesTiming, DISABLED_PerEvaluationAgainstEpsilon) {
  SKIP_WITHOUT_CUDA();
  struct Shape { int B, dim; };
  for (Shape sh : {Shape{65536, 2}, Shape{16384, 64}})
    for (Sampler s : {Sampler::Dpmpp2m, Sampler::Heun}) {
      const DiffusionModel m = test::random_model(sh.dim, 256, 5, 0.5f);
      const StepTable eps = build_step_table(m.schedule, s, 999, 50);
      StepTable scaled = eps;
      test::fill_family_arrays(scaled);
      StepTable map_only = scaled;  // c_in = 1: not sent, the heun map alone
      for (std::vector<double>* c : {&map_only.c_in, &map_only.c_in2}) std::fill(c->begin(), c->end(), 1.0);
      map_only.for_each_coefficient([](const char*, const std::vector<double>& f64, std::vector<float>& f32) {
        f32.assign(f64.begin(), f64.end());
      });
      const StepTable* tables[] = {&eps, &map_only, &scaled};
      CudaBackend be;
      const cudaStream_t st = be.stream();
      gpu::GpuBuffer<float> x(size_t(sh.B) * sh.dim);
      double us[3];
      for (int f = 0; f < 3; ++f) {
        be.set_model(m);
        be.set_step_table(*tables[f]);
        be.start_noise_device(x.data(), sh.B, 1, st);
        be.run_steps_device(0, 50, x.data(), sh.B, 1, nullptr, Precision::Fp32, st);  // warm-up
        std::vector<float> ms;
        for (int rep = 0; rep < 5; ++rep) {
          gpu::GpuTimer t;
          be.start_noise_device(x.data(), sh.B, 1, st);
          t.start(st);
          be.run_steps_device(0, 50, x.data(), sh.B, 1, nullptr, Precision::Fp32, st);
          t.stop(st);
          ms.push_back(t.elapsed_ms());
        }
        std::sort(ms.begin(), ms.end());
        us[f] = 1e3 * ms[2] / double(eps.evaluations(0, 50));
      }
      std::printf("[measured] %s B=%d dim=%d %s per evaluation: epsilon %.2f us, heun map only %.2f us (%+.1f%%), "
                  "scaled %.2f us (%+.1f%%)\n", sampler_name(s), sh.B, sh.dim, be.last_kernel().c_str(), us[0], us[1],
                  100.0 * (us[1] / us[0] - 1), us[2], 100.0 * (us[2] / us[0] - 1));
    }
}

}  // namespace
}  // namespace diffscope

namespace diffscope {
namespace {

// A model whose family denoise does not take (flow, read from its file) samples on the CUDA backend (set_model
// builds denoise's per-t table only for the families it takes) and equals the float64 CPU run; denoise refuses it,
// naming why, on the CUDA backend as on the CPU one. A v_prediction model denoises on both alike.
TEST(CudaFamilyTables, AFlowModelSamplesAndItsDenoiseIsRefused) {
  SKIP_WITHOUT_CUDA();
  DiffusionModel m = test::random_model(2, 256, 11, 0.5f);
  m.family.family = Family::Flow;
  m.family.time_input = TimeInput::S;
  m.family_in_file = true;
  const LevelRun run = list_level_run(Family::Flow, m.schedule, flow_match_euler_levels({}, 12).levels, 0);
  const StepTable tab = build_family_table(m.family, false, run, Sampler::Dpmpp2m, 0.0, m.schedule.T);
  const int B = 256;
  CudaBackend be;
  const auto [err, ferr] = gpu_vs_float64(be, m, tab, test::random_x(size_t(B) * 2, 5), B, Precision::Bf16);
  EXPECT_EQ(be.last_kernel(), "solver-tensor-core");  // bf16 operands on the tensor cores (SEMANTICS §3)
  EXPECT_LT(err, test::solver_tolerance(Precision::Bf16));
  EXPECT_LT(ferr, test::solver_tolerance(Precision::Bf16));
  std::vector<float> x = test::random_x(size_t(B) * 2, 6);
  std::vector<int64_t> t(B, 20);
  try {
    be.denoise(m, x.data(), t.data(), B, 4, nullptr, Precision::Fp32);
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("denoise steps t -> t - 1 on the schedule"), std::string::npos) << e.what();
  }
  m.family.family = Family::VPrediction;
  m.family.time_input = TimeInput::TOverT;
  std::vector<float> xg = x, xc = x;
  be.denoise(m, xg.data(), t.data(), B, 4, nullptr, Precision::Fp32);
  make_cpu_backend()->denoise(m, xc.data(), t.data(), B, 4, nullptr, Precision::Fp32);
  double worst = 0;
  for (size_t i = 0; i < xg.size(); ++i) worst = std::max(worst, double(std::abs(xg[i] - xc[i])));
  EXPECT_LT(worst, 1e-4);
}

}  // namespace
}  // namespace diffscope
