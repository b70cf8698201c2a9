// test_grid_run.cpp — the comparison grid's cells (grid/grid_run.h) against single runs, bit for bit on the CPU for
// every axis the CPU runs; the exact-ODE metric against the exact-ODE lab's figures; the path figures, displacement
// and alignment against closed forms; refusals that are the single run's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "base/errors.h"
#include "diffusion/exact_lab.h"
#include "grid/grid_metrics.h"
#include "grid/grid_run.h"
#include "test_paths.h"

namespace diffscope {
namespace {

std::shared_ptr<const DiffusionModel> bundled(const std::string& name) {
  return std::make_shared<const DiffusionModel>(
      load_diffusion_model(test::repo_root() + "/assets/models/" + name + ".safetensors"));
}

GridRequest grid_request(const std::string& spec, const std::string& model) {
  GridRequest g;
  g.spec = parse_grid_spec(spec, "grid");
  g.base.n = 48;
  g.base.seed = 7;
  g.base.steps = 10;
  g.base_model = model;
  g.load = bundled;
  return g;
}

// The single run of a request (no frames kept), as a front end runs it: plan_run then run_plan.
std::vector<float> single_run(SampleRequest q, const DiffusionModel& m) {
  const RunPlan p = plan_run(q, m);
  std::vector<float> x(static_cast<size_t>(p.n) * m.net.dim);
  auto cpu = make_cpu_backend();
  run_plan(p, m, *cpu, RunBuffers{x.data()});
  return x;
}

// Every cell of `spec` equals the single run with `set(request, row, col)` applied, byte for byte.
void expect_cells_equal_single_runs(const std::string& spec, const std::string& model,
                                    const std::function<void(SampleRequest&, std::string&, int, int)>& set) {
  SCOPED_TRACE(spec);
  const GridRequest g = grid_request(spec, model);
  const GridPlan plan = plan_grid(g);
  auto cpu = make_cpu_backend();
  SequentialGridExecutor exec(*cpu);
  const GridResult res = run_grid(plan, exec);
  const size_t fs = static_cast<size_t>(plan.n) * plan.dim;
  ASSERT_EQ(res.x.size(), fs * plan.spec.n_rows() * plan.spec.n_cols());
  for (int r = 0; r < plan.spec.n_rows(); ++r)
    for (int c = 0; c < plan.spec.n_cols(); ++c) {
      SampleRequest q;
      q.n = 48, q.seed = 7, q.steps = 10;
      std::string name = model;
      set(q, name, r, c);
      const std::vector<float> x = single_run(q, *bundled(name));
      ASSERT_EQ(x.size(), fs);
      EXPECT_EQ(std::memcmp(x.data(), res.x.data() + fs * (static_cast<size_t>(r) * plan.spec.n_cols() + c), fs * 4), 0)
          << "cell " << r << ", " << c;
    }
}

TEST(GridRun, CellEqualsSingleRunSamplerBySteps) {
  const Sampler s[] = {Sampler::Ddim, Sampler::Heun, Sampler::Dpmpp2m, Sampler::Ddpm, Sampler::EulerAncestral};
  const int steps[] = {3, 10, 25};
  expect_cells_equal_single_runs("rows=sampler:ddim,heun,dpmpp-2m,ddpm,euler-ancestral cols=steps:3,10,25", "moons",
                                 [&](SampleRequest& q, std::string&, int r, int c) {
                                   q.sampler = s[r];
                                   q.steps = steps[c];  // ddpm: a noisy end before t = 0, as a single run
                                 });
}

TEST(GridRun, CellEqualsSingleRunSpacingByEta) {
  const Spacing sp[] = {Spacing::Default, Spacing::Leading, Spacing::Trailing, Spacing::Karras};
  const double eta[] = {0.0, 0.5, 1.0};
  expect_cells_equal_single_runs("rows=spacing:default,leading,trailing,karras cols=eta:0,0.5,1", "moons",
                                 [&](SampleRequest& q, std::string&, int r, int c) {
                                   q.spacing = sp[r];
                                   q.eta = eta[c];
                                 });
}

TEST(GridRun, CellEqualsSingleRunModelByTStart) {
  const char* models[] = {"moons", "moons_v", "moons_sample", "gaussians8-exact"};
  const int64_t t[] = {999, 400};
  expect_cells_equal_single_runs("rows=model:moons,moons_v,moons_sample,gaussians8-exact cols=t_start:999,400", "",
                                 [&](SampleRequest& q, std::string& m, int r, int c) {
                                   m = models[r];
                                   q.t_start = t[c];
                                 });
}

TEST(GridRun, CellEqualsSingleRunFamilyBySteps) {
  const char* models[] = {"moons", "moons_v", "moons_sample", "moons_flow"};
  expect_cells_equal_single_runs("rows=model:moons,moons_v,moons_sample,moons_flow cols=steps:4,12", "",
                                 [&](SampleRequest& q, std::string& m, int r, int c) {
                                   m = models[r];
                                   q.steps = c == 0 ? 4 : 12;
                                 });
  expect_cells_equal_single_runs("rows=sampler:flow-euler,flow-heun cols=steps:4,12", "moons_flow",
                                 [&](SampleRequest& q, std::string&, int r, int c) {
                                   q.sampler = r == 0 ? Sampler::FlowEuler : Sampler::FlowHeun;
                                   q.steps = c == 0 ? 4 : 12;
                                 });
}

// A stop callback makes each cell run in chunks that poll it: the same bytes as one call, and a throw stops the grid.
TEST(GridRun, StopIsPolledAndChunksGiveTheSameCells) {
  const GridPlan plan = plan_grid(grid_request("rows=sampler:dpmpp-2m,heun cols=steps:30", "moons"));
  auto cpu = make_cpu_backend();
  SequentialGridExecutor exec(*cpu);
  const GridResult whole = run_grid(plan, exec);
  int polls = 0;
  const GridResult chunked = run_grid(plan, exec, [&] { ++polls; });
  EXPECT_GT(polls, 2);
  EXPECT_EQ(whole.x, chunked.x);
  struct Stopped {};
  EXPECT_THROW(run_grid(plan, exec, [] { throw Stopped{}; }), Stopped);
}

// At a timeline position each cell holds its aligned frame of the single run's trajectory; the metrics stay the
// final samples'.
TEST(GridRun, PositionHoldsEachCellsAlignedFrame) {
  const GridPlan plan = plan_grid(grid_request("rows=sampler:ddim,heun cols=steps:4,20", "moons"));
  EXPECT_EQ(timeline_cell(plan), 1);  // the first 20-step cell
  auto cpu = make_cpu_backend();
  SequentialGridExecutor exec(*cpu);
  const GridResult final_x = run_grid(plan, exec);
  const size_t fs = static_cast<size_t>(plan.n) * plan.dim;
  for (const GridAlign how : {GridAlign::Step, GridAlign::NoiseLevel}) {
    const GridResult at = run_grid(plan, exec, {}, GridPosition{0.5, how});
    for (size_t i = 0; i < plan.cells.size(); ++i) {
      const RunPlan& cp = plan.cells[i].plan;
      const int j = aligned_frame(cp.table, plan.cells[1].plan.table, 0.5, how);
      EXPECT_EQ(at.metrics[i].frame, j);
      if (how == GridAlign::Step) EXPECT_EQ(j, cp.steps / 2);
      // the single run's trajectory frame j
      SampleRequest q;
      q.n = 48, q.seed = 7, q.steps = cp.steps, q.sampler = cp.request.sampler, q.keep_frames = true;
      const RunPlan sp = plan_run(q, *plan.models[0]);
      std::vector<float> x(fs), traj(fs * sp.frames.size());
      run_plan(sp, *plan.models[0], *cpu, RunBuffers{x.data(), traj.data()});
      EXPECT_EQ(std::memcmp(at.x.data() + fs * i, traj.data() + fs * j, fs * 4), 0) << i;
      EXPECT_EQ(at.metrics[i].energy.energy, final_x.metrics[i].energy.energy);
      EXPECT_EQ(at.metrics[i].displacement, final_x.metrics[i].displacement);
    }
  }
  EXPECT_EQ(run_grid(plan, exec, {}, GridPosition{1.0, GridAlign::NoiseLevel}).x, final_x.x);
}

TEST(GridRun, RefusalIsTheSingleRuns) {
  GridRequest g = grid_request("rows=sampler:ddim,heun cols=steps:10,2000", "moons");
  try {
    plan_grid(g);
    FAIL() << "accepted";
  } catch (const InvalidInput& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("grid: cell rows sampler=ddim, cols steps=2000: "), std::string::npos) << m;
    EXPECT_NE(m.find("2000"), std::string::npos) << m;
    EXPECT_NE(m.find("[1, 1000]"), std::string::npos) << m;
  }
  g = grid_request("cols=model:moons,digits8x8", "");
  EXPECT_THROW(plan_grid(g), InvalidInput);  // dim 2 and dim 64 in one grid
}

// The exact-ODE column against the exact-ODE lab's final error (diffusion/exact_lab.h, the Schedule section's
// figures): the same start rows, the lab replaying the run in float64, the grid measuring the float32 run.
TEST(GridRun, ExactOdeColumnMatchesExactLab) {
  GridRequest g = grid_request("rows=sampler:ddim,heun,dpmpp-2m,euler-ancestral cols=steps:5,10,20", "gaussians8-exact");
  g.base.n = 300;  // more than the 256 rows compared
  const GridPlan plan = plan_grid(g);
  auto cpu = make_cpu_backend();
  SequentialGridExecutor exec(*cpu);
  const GridResult res = run_grid(plan, exec);
  const auto model = plan.models[0];
  std::vector<float> noise(static_cast<size_t>(300) * 2);
  cpu->start_noise(*model, 7, 300, noise.data());
  for (const GridCell& c : plan.cells) {
    const GridCellMetrics& m = res.metrics[static_cast<size_t>(c.row * 3 + c.col)];
    if (c.plan.request.sampler == Sampler::EulerAncestral) {
      EXPECT_TRUE(std::isnan(m.exact_rms));  // stochastic: no exact ODE answer
      continue;
    }
    ExactLabRequest lab;
    lab.model = model;
    lab.table = c.plan.table;
    lab.x_start.assign(noise.begin(), noise.begin() + 256 * 2);
    lab.rows = 256;
    lab.seed = 7;
    lab.t_start = c.plan.t_start;
    const EvalPoint want = final_error_vs_exact(lab, c.plan.steps);
    EXPECT_NEAR(m.exact_rms, want.error, 2e-5 + 1e-3 * want.error) << c.row << ", " << c.col;
    EXPECT_EQ(m.evaluations, want.evaluations);
  }
  // Error falls with steps for every ODE solver (row-wise).
  for (int r = 0; r < 3; ++r) EXPECT_LT(res.metrics[r * 3 + 2].exact_rms, res.metrics[r * 3].exact_rms);
}

TEST(GridMetrics, PathFigureClosedForm) {
  // Two rows in 2D over three frames: row 0 goes (0,0) -> (3,0) -> (3,4): length 7, chord 5; row 1 stays still.
  const float frames[] = {0, 0, 1, 1, 3, 0, 1, 1, 3, 4, 1, 1};
  const PathFigure f = path_figure(frames, 3, 2, 2, {1.0, 1.0, 1.0});
  EXPECT_DOUBLE_EQ(f.length, 3.5);
  EXPECT_DOUBLE_EQ(f.straightness, (5.0 / 7.0 + 1.0) / 2);
  // Scales take each frame to the VP state: doubling frame 2 makes row 0's last leg (3,0) -> (6,8).
  const PathFigure g = path_figure(frames, 3, 2, 2, {1.0, 1.0, 2.0});
  EXPECT_NEAR(g.length, (3.0 + std::sqrt(9.0 + 64.0) + std::sqrt(1.0 + 1.0)) / 2, 1e-12);
  const float a[] = {0, 0, 1, 1}, b[] = {3, 4, 1, 1};
  EXPECT_DOUBLE_EQ(mean_displacement(a, b, 2, 2), 2.5);
}

TEST(GridMetrics, DisplacementAgainstTheRowsLongestCell) {
  const GridPlan plan = plan_grid(grid_request("rows=sampler:ddim,heun cols=steps:20,5,10", "moons"));
  EXPECT_EQ(reference_col(plan, 0), 0);
  auto cpu = make_cpu_backend();
  SequentialGridExecutor exec(*cpu);
  const GridResult res = run_grid(plan, exec);
  for (int r = 0; r < 2; ++r) {
    EXPECT_EQ(res.metrics[r * 3].displacement, 0.0);
    EXPECT_EQ(res.metrics[r * 3 + 1].ref_col, 0);
    EXPECT_GT(res.metrics[r * 3 + 1].displacement, res.metrics[r * 3 + 2].displacement);  // 5 steps further off than 10
  }
}

TEST(GridAlign, ByStepAndByNoiseLevel) {
  const DiffusionModel m = *bundled("moons");
  const StepTable t5 = build_step_table(m.schedule, Sampler::Ddim, 999, 5, 0.0, Spacing::Default, 0);
  const StepTable t20 = build_step_table(m.schedule, Sampler::Ddim, 999, 20, 0.0, Spacing::Default, 0);
  EXPECT_EQ(aligned_frame(t5, t20, 0.5, GridAlign::Step), 3);  // round(2.5), half away from zero
  EXPECT_EQ(aligned_frame(t5, t20, 0.0, GridAlign::NoiseLevel), 0);
  EXPECT_EQ(aligned_frame(t5, t20, 1.0, GridAlign::NoiseLevel), 5);
  for (int k = 0; k <= 20; ++k)  // a cell on its own timeline is aligned by step
    EXPECT_EQ(aligned_frame(t20, t20, k / 20.0, GridAlign::NoiseLevel), k);
  // Each frame picked is the nearest in log-SNR (closed form from abar) to the timeline's frame.
  const auto lsnr = [](const StepTable& t, int j) { return std::log(t.abar[j] / (1 - t.abar[j])); };
  for (int k = 0; k < 20; ++k) {
    const int j = aligned_frame(t5, t20, k / 20.0, GridAlign::NoiseLevel);
    for (int i = 0; i < 5; ++i)
      EXPECT_LE(std::fabs(lsnr(t5, j) - lsnr(t20, k)), std::fabs(lsnr(t5, i) - lsnr(t20, k)) + 1e-12) << k;
  }
}

}  // namespace
}  // namespace diffscope
