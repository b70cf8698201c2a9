// test_family_table.cpp — the step tables of every solver on every model family (diffusion/family_table.h) against
// values computed here independently: the closed-form data prediction of Gaussian data N(0, c^2) (D = alpha c^2 x /
// (alpha^2 c^2 + sigma^2)) turned into each family's output by its definition (SEMANTICS §2's table), the DDIM product
// for that Gaussian, diffusers' scheduler steps written out from their sources (DDIMScheduler.step with v_prediction
// and sample, FlowMatchEulerDiscreteScheduler.step, FlowMatchHeunDiscreteScheduler.step, EDMEulerScheduler.step), and
// the classic epsilon tables of §3 on the same VP-equivalent levels.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/errors.h"
#include "diffusion/cpu_reference.h"
#include "diffusion/exact_lab.h"
#include "diffusion/family_table.h"
#include "model/family.h"
#include "model/model.h"
#include "model/schedule.h"
#include "run/finite_checks.h"
#include "run/run_plan.h"
#include "family_fixtures.h"
#include "test_paths.h"

namespace diffscope {
namespace {

constexpr double kC = 0.7;  // the data's standard deviation
constexpr const auto& kAll = test::kAllFamilies;

FamilyParams params(Family f) { return test::family_params(f); }

// The exact data prediction of N(0, c^2) data at level (alpha, sigma), and each family's output by its definition.
double gaussian_D(const NoiseLevel& lv, double x) {
  return lv.alpha * kC * kC * x / (lv.alpha * lv.alpha * kC * kC + lv.sigma * lv.sigma);
}
double family_output(const FamilyParams& p, const NoiseLevel& lv, double x) {
  const double D = gaussian_D(lv, x), eps = (x - lv.alpha * D) / lv.sigma;
  switch (p.family) {
    case Family::Epsilon: return eps;
    case Family::Sample: return D;
    case Family::VPrediction: return lv.alpha * eps - lv.sigma * D;  // Salimans & Ho 2022
    case Family::Flow: return eps - D;                                // SD3's velocity
    case Family::Edm: {                                               // F = (D - c_skip x) / c_out (Karras Table 1)
      const double sd = p.sigma_data, r2 = lv.sigma * lv.sigma + sd * sd;
      return (D - sd * sd / r2 * x) / (lv.sigma * sd / std::sqrt(r2));
    }
  }
  return 0;
}

// The StepTable contract applied to one value x with the Gaussian's exact output: x <- A x + C o + P prev + S z_k,
// prev <- Dx x + De o, heun's x <- y + H (g2 - g). z_k = 0.3 (k + 1) - 1 (any fixed numbers: the same in both runs).
double run_table(const StepTable& tab, const FamilyParams& out, double x) {
  double prev = 0;
  for (int k = 0; k < tab.steps(); ++k) {
    const NoiseLevel &cur = tab.levels[k], &next = tab.levels[k + 1];
    const double o = family_output(out, cur, x), z = 0.3 * (k + 1) - 1;
    const double D = tab.Dx.empty() ? 0 : tab.Dx[k] * x + tab.De[k] * o;
    double y = tab.A[k] * x + tab.C[k] * o + tab.S[k] * z + (tab.P.empty() ? 0 : tab.P[k] * prev);
    if (!tab.H.empty() && tab.H[k] != 0) {
      const double g = tab.Gx.empty() ? o : tab.Gx[k] * x + tab.Go[k] * o;
      const double o2 = family_output(out, next, y);
      const double g2 = tab.Gx2.empty() ? o2 : tab.Gx2[k] * y + tab.Go2[k] * o2;
      y += tab.H[k] * (g2 - g);
    }
    prev = D;
    x = y;
  }
  return x;
}

Schedule linear_schedule() { return Schedule::linear(1000); }

std::string asset_path(const std::string& rel) { return test::repo_root() + "/assets/" + rel; }

// A family's levels with the VP-equivalent abar of each of `vp` (the same signal-to-noise ratios).
LevelRun same_snr(Family f, const LevelRun& vp) {
  LevelRun r = vp;
  r.vp_list = false;
  for (size_t k = 0; k < r.levels.size(); ++k) {
    const double t = r.levels[k].time;
    r.levels[k] = level_at_abar(f, r.levels[k].vp_abar());
    if (is_vp_family(f)) r.levels[k].time = t;
  }
  return r;
}

TEST(FamilyTable, GaussianDdimInEveryFamilyIsTheDdimProduct) {
  // DDIM with the exact D of a Gaussian is linear: x' = (alpha' a + sigma' (1 - alpha a) / sigma) x,
  // a = alpha c^2 / (alpha^2 c^2 + sigma^2) (Song et al. 2021 eq. 12 with eta = 0).
  const Schedule sched = linear_schedule();
  const LevelRun vp = vp_level_run(sched, build_step_table(sched, Sampler::Ddim, 999, 12));
  for (Family f : kAll) {
    const FamilyParams p = params(f);
    const LevelRun run = same_snr(f, vp);
    const StepTable tab = build_family_table(p, false, run, Sampler::Ddim, 0.0, 1000);
    double expect = 1.3;
    for (int k = 0; k < run.steps(); ++k) {
      const NoiseLevel &c = run.levels[k], &n = run.levels[k + 1];
      const double a = c.alpha * kC * kC / (c.alpha * c.alpha * kC * kC + c.sigma * c.sigma);
      expect *= n.alpha * a + n.sigma * (1 - c.alpha * a) / c.sigma;
    }
    EXPECT_NEAR(run_table(tab, p, 1.3), expect, 1e-12 * std::abs(expect)) << family_name(f);
  }
}

TEST(FamilyTable, EverySolverInEveryFamilyMatchesTheEpsilonTableOnTheSameLevels) {
  // §3's classic epsilon tables (build_step_table) on VP levels; the family's run on levels of the same SNR ends in
  // the same clean state (x = x_vp at the clean level), the noise z_k scaled alike.
  const Schedule sched = linear_schedule();
  for (Sampler s : {Sampler::Ddim, Sampler::Ddpm, Sampler::DdpmMean, Sampler::Dpmpp2m, Sampler::Dpmpp2mSde,
                    Sampler::EulerAncestral, Sampler::Heun, Sampler::FlowEuler}) {
    const bool per_t = s == Sampler::Ddpm || s == Sampler::DdpmMean;
    const StepTable classic = build_step_table(sched, s, per_t ? 40 : 999, per_t ? 41 : 15, s == Sampler::Ddim ? 0.6 : 0);
    const double expect = run_table(classic, params(Family::Epsilon), 1.1);
    for (Family f : kAll) {
      const FamilyParams p = params(f);
      const LevelRun run = same_snr(f, vp_level_run(sched, classic));
      const double x0 = 1.1 / run.levels[0].vp_scale() * (is_vp_family(f) ? run.levels[0].vp_scale() : 1.0);
      const StepTable tab = build_family_table(p, false, run, s, s == Sampler::Ddim ? 0.6 : 0, 1000);
      EXPECT_NEAR(run_table(tab, p, x0), expect, 1e-9 * std::max(1.0, std::abs(expect)))
          << sampler_name(s) << " " << family_name(f);
    }
  }
}

TEST(FamilyTable, FlowEulerAndFlowHeunAreDiffusersFlowMatchSteps) {
  // FlowMatchEulerDiscreteScheduler.step: x + (s' - s) v. FlowMatchHeunDiscreteScheduler.step: the Euler point
  // x + (s' - s) v, then x + (s' - s) (v + v') / 2 with v' at the Euler point and s'; the step to s = 0 Euler only.
  FlowMatchEulerConfig c;
  c.shift = 3.0;
  const std::vector<double> s = flow_match_euler_levels(c, 9).levels;
  const FamilyParams p = params(Family::Flow);
  const LevelRun run = list_level_run(Family::Flow, linear_schedule(), s, 0);
  double xe = 0.9, xh = 0.9;
  for (size_t k = 0; k + 1 < s.size(); ++k) {
    const NoiseLevel cur = NoiseLevel::flow(s[k]), next = NoiseLevel::flow(s[k + 1]);
    xe += (s[k + 1] - s[k]) * family_output(p, cur, xe);
    const double v = family_output(p, cur, xh), y = xh + (s[k + 1] - s[k]) * v;
    xh = s[k + 1] == 0 ? y : xh + (s[k + 1] - s[k]) * 0.5 * (v + family_output(p, next, y));
  }
  EXPECT_NEAR(run_table(build_family_table(p, false, run, Sampler::FlowEuler, 0, 1000), p, 0.9), xe, 1e-12);
  EXPECT_NEAR(run_table(build_family_table(p, false, run, Sampler::FlowHeun, 0, 1000), p, 0.9), xh, 1e-12);
}

TEST(FamilyTable, EdmIsDiffusersEdmEulerWithItsPreconditioning) {
  // EDMEulerScheduler (s_churn = 0): denoised = c_skip x + c_out F; x + (sigma' - sigma) (x - denoised) / sigma;
  // the network reads c_in x = x / sqrt(sigma^2 + sigma_data^2) and c_noise = log(sigma) / 4.
  const std::vector<double> sig = edm_levels(EdmConfig{}, 10).levels;
  const FamilyParams p = params(Family::Edm);
  const StepTable tab =
      build_family_table(p, false, list_level_run(Family::Edm, linear_schedule(), sig, 0), Sampler::FlowEuler, 0, 1000);
  double x = 30.0;
  for (size_t k = 0; k + 1 < sig.size(); ++k) {
    const double sg = sig[k], r2 = sg * sg + 0.25;
    const double F = family_output(p, NoiseLevel::ve(sg), x);
    const double denoised = 0.25 / r2 * x + sg * 0.5 / std::sqrt(r2) * F;
    x += (sig[k + 1] - sg) * (x - denoised) / sg;
    EXPECT_NEAR(tab.c_in[k], 1 / std::sqrt(r2), 1e-15);
    EXPECT_NEAR(tab.time[k], std::log(sg) / 4, 1e-15);
  }
  EXPECT_NEAR(run_table(tab, p, 30.0), x, 1e-10);
}

TEST(FamilyTable, DdimWithVAndSampleIsDiffusersDdimStep) {
  // DDIMScheduler.step: x0 and eps from the output (v: x0 = sqrt(a) x - sqrt(1-a) v, eps = sqrt(a) v + sqrt(1-a) x;
  // sample: x0 = o, eps = (x - sqrt(a) x0) / sqrt(1-a)), std = eta sqrt((1-a')/(1-a) (1 - a/a')),
  // x' = sqrt(a') x0 + sqrt(1 - a' - std^2) eps + std z.
  const Schedule sched = linear_schedule();
  const StepTable vp = build_step_table(sched, Sampler::Ddim, 700, 8, 0.4);
  for (Family f : {Family::VPrediction, Family::Sample}) {
    const FamilyParams p = params(f);
    const StepTable tab = build_family_table(p, false, vp_level_run(sched, vp), Sampler::Ddim, 0.4, 1000);
    for (int k = 0; k < tab.steps(); ++k) {
      const double a = vp.abar[k], an = k + 1 < vp.steps() ? vp.abar[k + 1] : 1.0, x = 0.8, o = -0.35, z = 0.6;
      const double x0 = f == Family::Sample ? o : std::sqrt(a) * x - std::sqrt(1 - a) * o;
      const double eps = f == Family::Sample ? (x - std::sqrt(a) * x0) / std::sqrt(1 - a)
                                             : std::sqrt(a) * o + std::sqrt(1 - a) * x;
      const double sd = 0.4 * std::sqrt((1 - an) / (1 - a) * (1 - a / an));
      const double expect = std::sqrt(an) * x0 + std::sqrt(std::max(0.0, 1 - an - sd * sd)) * eps + sd * z;
      EXPECT_NEAR(tab.A[k] * x + tab.C[k] * o + tab.S[k] * z, expect, 1e-12) << family_name(f) << " step " << k;
    }
  }
}

TEST(FamilyTable, ZeroTerminalSnrStartsInTheVAndSampleFamiliesAndIsRefusedForEpsilon) {
  const Schedule sched = Schedule::rescaled_zero_terminal_snr(linear_schedule());
  ASSERT_EQ(sched.alphas_cumprod[999], 0.0);
  for (Sampler s : {Sampler::Ddim, Sampler::Ddpm, Sampler::Dpmpp2m, Sampler::Dpmpp2mSde, Sampler::EulerAncestral,
                    Sampler::Heun}) {
    const bool per_t = s == Sampler::Ddpm;
    const StepTable vp = build_step_table(sched, per_t ? s : Sampler::Ddim, 999, per_t ? 1000 : 20);
    for (Family f : {Family::VPrediction, Family::Sample}) {
      const StepTable tab = build_family_table(params(f), false, vp_level_run(sched, vp), s, 0, 1000);
      EXPECT_NO_THROW(check_run_coefficients(sched, tab, tab.steps())) << sampler_name(s) << " " << family_name(f);
      EXPECT_TRUE(std::isfinite(run_table(tab, params(f), 0.5))) << sampler_name(s) << " " << family_name(f);
    }
    FamilyParams eps_t = params(Family::Epsilon);
    eps_t.time_input = TimeInput::T;  // a family table of the epsilon family
    const StepTable tab = build_family_table(eps_t, false, vp_level_run(sched, vp), s, 0, 1000);
    EXPECT_THROW(check_run_coefficients(sched, tab, tab.steps()), InvalidInput) << sampler_name(s);
  }
}

TEST(FamilyTable, FlowHeunIsRefusedOutsideFlowRuns) {
  const Schedule sched = linear_schedule();
  const LevelRun vp = vp_level_run(sched, build_step_table(sched, Sampler::Ddim, 999, 10));
  try {
    build_family_table(params(Family::VPrediction), false, vp, Sampler::FlowHeun, 0, 1000);
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("flow-heun"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("valid here: heun"), std::string::npos) << e.what();
  }
}

// An analytic mixture run in the flow family (plan_run with prediction_type flow) and in the epsilon family on a
// typed list of the same VP-equivalent sigmas end in the same samples (the CPU float64 reference, every solver).
TEST(FamilyTable, AnalyticMixtureInTheFlowFamilyEqualsItsEpsilonRunOnTheSameSigmas) {
  const DiffusionModel model = load_diffusion_model(asset_path("models/gaussians8-exact.safetensors"));
  for (Sampler s : {Sampler::Ddim, Sampler::Dpmpp2m, Sampler::Dpmpp2mSde, Sampler::EulerAncestral, Sampler::Heun}) {
    SampleRequest flow;
    flow.sampler = s;
    flow.prediction_type = Family::Flow;
    flow.steps = 12;
    flow.n = 16;
    const RunPlan pf = plan_run(flow, model);
    ASSERT_EQ(pf.t_start, 1);  // the analytic model's default skips s = 1
    SampleRequest eps = flow;
    eps.prediction_type.reset();
    eps.steps.reset();
    for (const NoiseLevel& lv : pf.table.levels) eps.sigmas.push_back(lv.sigma == 0 ? 0.0 : lv.ve_sigma());
    const RunPlan pe = plan_run(eps, model);
    ASSERT_EQ(pe.steps, pf.steps);
    const int dim = model.net.dim, n = 16;
    std::vector<double> xf(n * dim), xe(n * dim), prev_f(n * dim), prev_e(n * dim);
    cpu_ref::start_noise<double>(model.schedule.T, dim, 3, n, xe.data());
    const double k0 = pf.table.levels[0].vp_scale();
    for (int i = 0; i < n * dim; ++i) xf[i] = xe[i] / k0;  // the same start in the flow state
    cpu_ref::run_steps<double>(model, pf.table, 0, pf.steps, xf.data(), n, 3, nullptr, 0, prev_f.data());
    cpu_ref::run_steps<double>(model, pe.table, 0, pe.steps, xe.data(), n, 3, nullptr, 0, prev_e.data());
    for (int i = 0; i < n * dim; ++i) ASSERT_NEAR(xf[i], xe[i], 1e-9) << sampler_name(s) << " value " << i;
  }
}

// The exact-ODE errors of a flow run (frames in x_s) are measured in the VP state: flow-euler on the flow list and
// ddim (eta 0) on the same VP-equivalent sigmas are the same step, so their per-frame and final errors agree.
TEST(FamilyTable, ExactLabMeasuresAFlowRunInTheVpState) {
  const auto model =
      std::make_shared<const DiffusionModel>(load_diffusion_model(asset_path("models/gaussians8-exact.safetensors")));
  SampleRequest flow;
  flow.sampler = Sampler::FlowEuler;
  flow.prediction_type = Family::Flow;
  flow.steps = 10;
  flow.n = 8;
  const RunPlan pf = plan_run(flow, *model);
  SampleRequest eps = flow;
  eps.sampler = Sampler::Ddim;
  eps.prediction_type.reset();
  eps.steps.reset();
  for (const NoiseLevel& lv : pf.table.levels) eps.sigmas.push_back(lv.sigma == 0 ? 0.0 : lv.ve_sigma());
  const RunPlan pe = plan_run(eps, *model);
  const int rows = 8, dim = model->net.dim;
  ExactLabRequest a, b;
  a.model = b.model = model;
  a.rows = b.rows = rows;
  b.x_start.resize(rows * dim);
  cpu_ref::start_noise<double>(model->schedule.T, dim, 4, rows, b.x_start.data());
  a.x_start = b.x_start;
  for (double& x : a.x_start) x /= pf.table.levels[0].vp_scale();
  a.table = pf.table;
  b.table = pe.table;
  const std::vector<double> ea = frame_errors_vs_exact(a, nullptr, nullptr), eb = frame_errors_vs_exact(b, nullptr, nullptr);
  ASSERT_EQ(ea.size(), eb.size());
  for (size_t j = 0; j < ea.size(); ++j) EXPECT_NEAR(ea[j], eb[j], 1e-9) << "frame " << j;
  EXPECT_GT(ea.back(), 1e-4);  // 9 first-order steps: a visible error
  a.table_for_steps = [&](int n) {
    SampleRequest r = flow;
    r.steps = n + 1;  // the analytic default skips the first level
    return plan_run(r, *model).table;
  };
  EXPECT_NEAR(final_error_vs_exact(a, pf.steps).error, ea.back(), 1e-9);
}

// The exact probability-flow ODE of the mixture in each family (the run's frames in its own state, measured in the
// VP state): the final error falls with the steps as the solver's order says — first order (ddim, flow-euler) at
// least 1.5x per doubling, second order (heun, dpmpp-2m, flow-heun) at least 3x — on the flow list and on the edm
// list as on the schedule's levels. (dpmpp-2m steps in lambda = log(alpha / sigma): on a flow list linear in s its
// first steps from s near 1 have h = log((k + 1) / k) whatever N, so its final error there falls only about 2.2x
// per doubling; measured, not asserted.)
TEST(FamilyTable, EveryFamilysRunConvergesToTheExactOdeAtItsOrder) {
  const auto model =
      std::make_shared<const DiffusionModel>(load_diffusion_model(asset_path("models/gaussians8-exact.safetensors")));
  struct Case {
    Family f;
    Sampler s;
    double factor;
  };
  for (const Case c : {Case{Family::Flow, Sampler::FlowEuler, 1.5}, Case{Family::Flow, Sampler::FlowHeun, 3.0},
                       Case{Family::Edm, Sampler::Dpmpp2m, 3.0}, Case{Family::Edm, Sampler::Ddim, 1.5},
                       Case{Family::Edm, Sampler::Heun, 3.0}, Case{Family::VPrediction, Sampler::Dpmpp2m, 3.0}}) {
    SampleRequest r;
    r.sampler = c.s;
    r.prediction_type = c.f;
    r.n = 32;
    if (c.f == Family::VPrediction) r.spacing = Spacing::Karras;
    const bool list = c.f != Family::VPrediction;
    const auto table = [&](int n) {
      SampleRequest q = r;
      q.steps = list && c.f == Family::Flow ? n + 1 : n;  // the analytic flow run starts at index 1
      return plan_run(q, *model).table;
    };
    ExactLabRequest lab;
    lab.model = model;
    lab.rows = 32;
    lab.table = table(16);
    lab.table_for_steps = table;
    std::vector<double> x(32 * model->net.dim);
    cpu_ref::start_noise<double>(model->schedule.T, model->net.dim, 9, 32, x.data());
    for (double& v : x) v /= lab.table.levels[0].vp_scale();  // a start of the run's own state
    lab.x_start = x;
    const double a = final_error_vs_exact(lab, 32).error, b = final_error_vs_exact(lab, 64).error;
    EXPECT_GT(a / b, c.factor) << family_name(c.f) << " " << sampler_name(c.s) << ": " << a << " -> " << b;
  }
}

std::string plan_error(const SampleRequest& r, const DiffusionModel& m) {
  try {
    plan_run(r, m);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(FamilyTable, RunPlanRefusesContradictionsAndBadLists) {
  DiffusionModel m = load_diffusion_model(asset_path("models/gaussians8-exact.safetensors"));
  SampleRequest r;
  r.sigmas = {3.0, 1.0, 2.0};
  EXPECT_NE(plan_error(r, m).find("sigmas: value 2 = 2 is out of range; valid: strictly decreasing"),
            std::string::npos) << plan_error(r, m);
  r.sigmas = {3.0, 0.0, 0.0};
  EXPECT_NE(plan_error(r, m).find("only the last level may be 0"), std::string::npos) << plan_error(r, m);
  r.sigmas = {3.0, 1.0};
  r.steps = 5;
  EXPECT_NE(plan_error(r, m).find("steps = 5 disagrees with sigmas (2 steps)"), std::string::npos) << plan_error(r, m);
  r = SampleRequest{};
  r.flow_shift = -1.0;
  EXPECT_NE(plan_error(r, m).find("flow_shift = -1 is out of range; valid: > 0"), std::string::npos);
  m.family.family = Family::VPrediction;
  m.family_in_file = true;
  r = SampleRequest{};
  r.prediction_type = Family::Flow;
  EXPECT_NE(plan_error(r, m).find("prediction_type = flow contradicts the model file, whose prediction_type is "
                                  "v_prediction"),
            std::string::npos) << plan_error(r, m);
  r.t_start = 3;
  r.prediction_type = Family::VPrediction;  // agreeing with the file: no note, the file's family
  std::vector<RunNote> notes;
  const RunPlan p = plan_run(r, m, [&](const RunNote& n) { notes.push_back(n); });
  EXPECT_EQ(p.family.family, Family::VPrediction);
  for (const RunNote& n : notes) EXPECT_NE(n.kind, RunNote::Kind::FamilyOverride) << n.text;
}

}  // namespace
}  // namespace diffscope
