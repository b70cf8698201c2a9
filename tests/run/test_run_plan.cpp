// test_run_plan.cpp — the run plan (run/run_plan.h, SEMANTICS §3 "The run plan"): the CLI's, Python's and the
// GUI session's conversions of one request give the same plan (every sampler, spacing, with and without a
// scheduler config), and plan_run's rules against values known without it: ddpm's one timestep per step,
// t_start's default T - 1, the kept frames of a stride and a frame, a scheduler config's spacing and
// steps_offset where the request leaves them unset (diffusers' leading list worked by hand).
#include <gtest/gtest.h>

#include <filesystem>

#include "test_paths.h"
#include "base/errors.h"
#include "cli/cli.h"
#include "diffusion/scheduler_config.h"
#include "python/sample_request.h"
#include "run/run_plan.h"
#include "session/sampling_session.h"

namespace diffscope {
namespace {

const DiffusionModel& moons() {
  static const DiffusionModel m = load_diffusion_model(test::repo_root() + "/assets/models/moons.safetensors");
  return m;
}

SchedulerConfig config_of(const std::string& text) { return parse_scheduler_config(text, "cfg.json"); }

void expect_same_plan(const RunPlan& a, const RunPlan& b, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(a.request.sampler, b.request.sampler);
  EXPECT_EQ(a.request.eta, b.request.eta);
  EXPECT_EQ(a.request.seed, b.request.seed);
  EXPECT_EQ(a.request.from_data, b.request.from_data);
  EXPECT_EQ(a.request.precision, b.request.precision);
  EXPECT_EQ(a.spacing, b.spacing);
  EXPECT_EQ(a.t_start, b.t_start);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.n, b.n);
  EXPECT_EQ(a.stride, b.stride);
  EXPECT_EQ(a.frames, b.frames);
  EXPECT_EQ(a.frame, b.frame);
  EXPECT_EQ(a.table.spacing, b.table.spacing);
  EXPECT_EQ(a.table.steps_offset, b.table.steps_offset);
  EXPECT_EQ(a.table.eta, b.table.eta);
  EXPECT_EQ(a.table.t, b.table.t);
  EXPECT_EQ(a.table.t_net, b.table.t_net);
  EXPECT_EQ(a.table.noise_key, b.table.noise_key);
  a.table.for_each_coefficient([&](const char* name, const std::vector<double>& v, const std::vector<float>&) {
    b.table.for_each_coefficient([&](const char* other, const std::vector<double>& w, const std::vector<float>&) {
      if (std::string(name) == other) EXPECT_EQ(v, w) << name;
    });
  });
  ASSERT_EQ(a.notes.size(), b.notes.size());
  for (size_t i = 0; i < a.notes.size(); ++i) EXPECT_EQ(a.notes[i].kind, b.notes[i].kind);
}

// One request through the three front ends: the CLI's flags, Python's keywords and the GUI's settings.
struct ThreeRequests {
  SampleRequest cli, python, gui;
};

ThreeRequests three(Sampler sampler, Spacing spacing, const SchedulerConfig* config, const std::string& config_path) {
  const bool per_t = sampler == Sampler::Ddpm || sampler == Sampler::DdpmMean;
  const double eta = sampler == Sampler::Ddim ? 0.5 : 0.0;
  std::vector<std::string> args{"--model", "moons", "--out", "x.npy", "--trajectory", "t.npy", "--n", "64",
                                "--sampler", sampler_name(sampler), "--steps", "10", "--t-start", "700", "--seed", "9"};
  if (!per_t) args.insert(args.end(), {"--spacing", spacing_name(spacing)});
  if (sampler == Sampler::Ddim) args.insert(args.end(), {"--eta", "0.5"});
  if (config) args.insert(args.end(), {"--scheduler-config", config_path});
  ThreeRequests r;
  r.cli = cli::sample_request_of(args);
  r.cli.scheduler_config = config;  // the CLI loads the file it names with the model

  python::SampleArgs a;
  a.n = 64, a.sampler = sampler, a.eta = eta, a.steps = 10, a.t_start = 700, a.seed = 9, a.trajectory = true;
  if (!per_t) a.spacing = spacing;
  a.scheduler_config = config;
  r.python = python::sample_request(a);

  SamplingSettings s;
  s.n_samples = 64, s.sampler = sampler, s.spacing = spacing, s.eta = eta, s.steps = 10, s.t_start = 700, s.seed = 9;
  s.precision = Precision::Fp32;  // the CLI's and Python's default; the app's own is fp16 (SEMANTICS §8)
  r.gui = session_request(s, config, false, 1024);  // a budget that keeps every frame
  return r;
}

TEST(RunPlan, TheThreeFrontEndsPlanTheSameRun) {
  const SchedulerConfig trailing = config_of(R"({"timestep_spacing": "trailing", "steps_offset": 1, "clip_sample": false})");
  const SchedulerConfig karras = config_of(R"({"use_karras_sigmas": true, "clip_sample": false})");
  const std::vector<std::pair<const SchedulerConfig*, std::string>> configs{
      {nullptr, ""}, {&trailing, "trailing.json"}, {&karras, "karras.json"}};
  int plans = 0;
  for (const std::string& sampler_text : sampler_names()) {
    const Sampler sampler = parse_sampler(sampler_text);
    const bool per_t = sampler == Sampler::Ddpm || sampler == Sampler::DdpmMean;
    if (sampler == Sampler::FlowHeun) continue;  // flow models only (tests/diffusion/test_family_table.cpp)
    for (const std::string& spacing_text : spacing_names()) {
      const Spacing spacing = parse_spacing(spacing_text);
      if (per_t && spacing != Spacing::Default) continue;  // refused by the CLI and Python (tested below)
      for (const auto& [config, path] : configs) {
        const ThreeRequests r = three(sampler, spacing, config, path);
        const std::string what = sampler_text + " " + spacing_text + " " + path;
        const RunPlan cli = plan_run(r.cli, moons());
        expect_same_plan(cli, plan_run(r.python, moons()), what + " (python)");
        expect_same_plan(cli, plan_run(r.gui, moons()), what + " (gui)");
        EXPECT_EQ(cli.spacing, per_t ? Spacing::Default : spacing) << what;
        ++plans;
      }
    }
  }
  EXPECT_EQ(plans, (6 * 5 + 2) * 3);  // 6 samplers x 5 spacings, ddpm and ddpm-mean on default; 3 configs
}

TEST(RunPlan, ArgumentNamesAreEachFrontEndsOwn) {
  const ThreeRequests r = three(Sampler::Ddim, Spacing::Default, nullptr, "");
  EXPECT_EQ(r.cli.name(Arg::TStart), "--t-start");
  EXPECT_EQ(r.python.name(Arg::TStart), "t_start");
  SampleRequest bad = r.cli;
  bad.t_start = 5000;
  try {
    plan_run(bad, moons());
    FAIL() << "t_start 5000 was planned";
  } catch (const InvalidInput& e) {
    EXPECT_STREQ(e.what(), "--t-start = 5000 is out of range; valid: [0, 999]");
  }
  bad = r.python;
  bad.t_start = 5000;
  EXPECT_THROW(plan_run(bad, moons()), InvalidInput);
}

TEST(RunPlan, DdpmTakesOneTimestepPerStep) {
  SampleRequest r;
  r.sampler = Sampler::Ddpm;
  r.t_start = 10;
  r.steps = 4;
  const RunPlan p = plan_run(r, moons());
  EXPECT_EQ(p.table.t, (std::vector<int32_t>{10, 9, 8, 7}));
  ASSERT_EQ(p.notes.size(), 1u);  // stops at t = 7: still noisy
  EXPECT_EQ(p.notes[0].kind, RunNote::Kind::NoisyEnd);
  // A config's spacing does not apply to it: default spacing, with a note saying so.
  const SchedulerConfig trailing = config_of(R"({"timestep_spacing": "trailing", "clip_sample": false})");
  r.scheduler_config = &trailing;
  r.steps.reset();
  const RunPlan q = plan_run(r, moons());
  EXPECT_EQ(q.spacing, Spacing::Default);
  EXPECT_EQ(q.table.t, (std::vector<int32_t>{10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
  ASSERT_EQ(q.notes.size(), 1u);
  EXPECT_EQ(q.notes[0].kind, RunNote::Kind::ConfigSpacing);
  // Given explicitly, another spacing is refused.
  r.spacing = Spacing::Trailing;
  EXPECT_THROW(plan_run(r, moons()), InvalidInput);
}

TEST(RunPlan, DefaultsAreTheModelsLastTimestepAndOneStepPerTimestep) {
  const RunPlan p = plan_run(SampleRequest{}, moons());
  EXPECT_EQ(p.t_start, 999);  // moons: T = 1000, every t usable
  EXPECT_EQ(p.steps, 1000);
  EXPECT_EQ(p.n, 4096);
  EXPECT_EQ(p.spacing, Spacing::Default);
  EXPECT_EQ(p.steps_offset, 0);
  EXPECT_TRUE(p.notes.empty());
}

TEST(RunPlan, KeptFramesOfAStrideAndAFrame) {
  EXPECT_EQ(kept_frames(10, 3), (std::vector<int>{0, 3, 6, 9, 10}));
  EXPECT_EQ(kept_frames(10, 1).size(), 11u);
  SampleRequest r;
  r.t_start = 100;
  r.steps = 10;
  r.keep_frames = true;
  r.trajectory_stride = 3;
  r.frame = 5;
  const RunPlan p = plan_run(r, moons());
  EXPECT_EQ(p.frames, (std::vector<int>{0, 3, 5, 6, 9, 10}));  // SEMANTICS §3: 0, s, 2s, ..., the frame and N
  EXPECT_EQ(p.frame, 5);
  r.trajectory_stride = 50;  // a stride past N keeps the first and the last
  r.frame.reset();
  EXPECT_EQ(plan_run(r, moons()).frames, (std::vector<int>{0, 10}));
  r.frame = 11;
  EXPECT_THROW(plan_run(r, moons()), InvalidInput);
  r.frame_past_end_is_last = true;  // a sidecar's frame past the run: the last, with a note
  const RunPlan q = plan_run(r, moons());
  EXPECT_EQ(q.frame, -1);
  ASSERT_EQ(q.notes.size(), 1u);
  EXPECT_EQ(q.notes[0].kind, RunNote::Kind::FramePastEnd);
}

TEST(RunPlan, AConfigSetsWhatTheRequestLeavesUnset) {
  const SchedulerConfig leading = config_of(R"({"timestep_spacing": "leading", "steps_offset": 1, "clip_sample": false})");
  SampleRequest r;
  r.steps = 10;
  r.scheduler_config = &leading;
  const RunPlan p = plan_run(r, moons());
  // diffusers' leading, T = 1000, N = 10: (arange(10) * 100)[::-1] + steps_offset.
  EXPECT_EQ(p.table.t, (std::vector<int32_t>{901, 801, 701, 601, 501, 401, 301, 201, 101, 1}));
  r.spacing = Spacing::Trailing;  // given: the request wins
  r.steps_offset = 0;
  const RunPlan q = plan_run(r, moons());
  EXPECT_EQ(q.spacing, Spacing::Trailing);
  // trailing: round(arange(1000, 0, -100)) - 1.
  EXPECT_EQ(q.table.t, (std::vector<int32_t>{999, 899, 799, 699, 599, 499, 399, 299, 199, 99}));
}

}  // namespace
}  // namespace diffscope
