// test_exact_lab.cpp — errors of an analytic model's run against the exact ODE (diffusion/exact_lab.h): frame 0 is
// exact, the per-frame chain of ODE legs ends where one leg from the start ends, the final error of the
// second-order solvers falls at least 3x per doubling of N on karras (first order: at least 1.5x), and the
// background worker finishes, keeps a running job for the same key and replaces it for a new one.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <iostream>
#include <thread>

#include "diffusion/exact_lab.h"
#include "diffusion/sampling.h"
#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

std::shared_ptr<const DiffusionModel> exact_model() {
  static const auto m = std::make_shared<const DiffusionModel>(
      load_diffusion_model(test::repo_root() + "/assets/models/gaussians8-exact.safetensors"));
  return m;
}

ExactLabRequest request(Sampler s, int N, Spacing spacing = Spacing::Karras, int rows = 64) {
  ExactLabRequest r;
  r.model = exact_model();
  r.table = build_step_table(r.model->schedule, s, 999, N, 0.0, spacing);
  r.rows = rows;
  r.seed = 5;
  r.t_start = 999;
  std::vector<float> x(static_cast<size_t>(rows) * 2);
  fill_start_noise(*r.model, r.seed, rows, x.data());
  r.x_start.assign(x.begin(), x.end());
  return r;
}

TEST(ExactLab, FollowsTheOde) {
  const Schedule& sch = exact_model()->schedule;
  EXPECT_TRUE(follows_the_ode(build_step_table(sch, Sampler::Ddim, 999, 10)));
  EXPECT_FALSE(follows_the_ode(build_step_table(sch, Sampler::Ddim, 999, 10, 0.5)));
  EXPECT_TRUE(follows_the_ode(build_step_table(sch, Sampler::Heun, 999, 10)));
  EXPECT_TRUE(follows_the_ode(build_step_table(sch, Sampler::Dpmpp2m, 999, 10)));
  EXPECT_FALSE(follows_the_ode(build_step_table(sch, Sampler::Dpmpp2mSde, 999, 10)));
  EXPECT_FALSE(follows_the_ode(build_step_table(sch, Sampler::EulerAncestral, 999, 10)));
  EXPECT_FALSE(follows_the_ode(build_step_table(sch, Sampler::Ddpm, 999, 10)));
}

TEST(ExactLab, FrameErrorsStartAtZeroAndEndAtTheFinalError) {
  const ExactLabRequest r = request(Sampler::Dpmpp2m, 16);
  const std::vector<double> e = frame_errors_vs_exact(r);
  ASSERT_EQ(e.size(), 17u);
  std::cout << "[ exact    ] dpmpp-2m karras N=16 per-frame RMS error:";
  for (double v : e) std::cout << " " << v;
  std::cout << "\n";
  EXPECT_EQ(e[0], 0.0);
  for (size_t j = 1; j < e.size(); ++j) EXPECT_GT(e[j], 0.0) << j;
  // The chain of 16 ODE legs (1e-10 each) and one leg from sigma_0 to 0 agree far below the solver's error.
  const EvalPoint p = final_error_vs_exact(r, 16);
  EXPECT_EQ(p.evaluations, 16);
  EXPECT_NEAR(e.back(), p.error, 1e-6 * p.error + 1e-9);
}

TEST(ExactLab, FinalErrorFallsWithEvaluations) {
  struct Case {
    Sampler s;
    double factor;  // error(N) / error(2N) at least this (order 1: ~2, order 2: ~4)
  };
  for (const Case c : {Case{Sampler::Ddim, 1.5}, Case{Sampler::Heun, 3.0}, Case{Sampler::Dpmpp2m, 3.0}}) {
    const ExactLabRequest r = request(c.s, 8);
    const EvalPoint a = final_error_vs_exact(r, 32), b = final_error_vs_exact(r, 64);
    std::cout << "[ exact    ] " << sampler_name(c.s) << " karras final RMS error N=32: " << a.error
              << ", N=64: " << b.error << "\n";
    EXPECT_EQ(b.evaluations, c.s == Sampler::Heun ? 127 : 64);
    EXPECT_GT(a.error / b.error, c.factor) << sampler_name(c.s) << " " << a.error << " -> " << b.error;
  }
}

TEST(ExactLab, WorkerFinishesAndRestartsOnlyForANewKey) {
  ExactLab lab;
  ExactLabRequest r = request(Sampler::Heun, 12, Spacing::Default, 16);
  r.step_counts = {4, 8, 16};
  lab.start("a", r);
  lab.start("a", r);  // the same key: the running job goes on
  for (int i = 0; i < 3000 && lab.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_FALSE(lab.busy());
  ExactLabResult res = lab.result();
  EXPECT_TRUE(res.error.empty()) << res.error;
  EXPECT_TRUE(res.frames_done);
  EXPECT_EQ(res.frame_error.size(), 13u);
  EXPECT_TRUE(res.curve_done);
  ASSERT_EQ(res.curve.size(), 3u);
  EXPECT_EQ(res.curve[2].steps, 16);
  EXPECT_EQ(res.curve[2].evaluations, 31);
  EXPECT_EQ(lab.progress(), 1.0);

  ExactLabRequest r2 = request(Sampler::Ddim, 5, Spacing::Default, 16);
  lab.start("b", r2);
  EXPECT_EQ(lab.key(), "b");
  for (int i = 0; i < 3000 && lab.busy(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  res = lab.result();
  EXPECT_EQ(res.frame_error.size(), 6u);
  EXPECT_TRUE(res.curve.empty());
}

}  // namespace
}  // namespace diffscope
