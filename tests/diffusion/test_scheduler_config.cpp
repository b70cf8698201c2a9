// test_scheduler_config.cpp — diffusers' scheduler_config.json (SEMANTICS §3): betas against their closed
// forms (diffusers' formulas written out here, float64), the timesteps of each spacing against diffusers'
// set_timesteps worked by hand, which schedule wins, the round trip, and bad files refused naming the key.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "diffusion/scheduler_config.h"
#include "diffusion/step_table.h"
#include "io_test_util.h"
#include "run/finite_checks.h"
#include "test_paths.h"

namespace diffscope {
namespace {

using test::invalid_input_message;

SchedulerConfig parse_exact(const std::string& text) { return parse_scheduler_config(text, "cfg.json"); }
// The configs of the tests below say "clip_sample": false unless they test it: a config without it takes
// DDIMScheduler's clip_sample = true, which is refused (ClipSampleFollowsTheClassDefault).
SchedulerConfig parse(const std::string& text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || j.contains("clip_sample")) return parse_exact(text);
  j["clip_sample"] = false;
  return parse_exact(j.dump());
}

// alphas_cumprod as the running product of 1 - beta, from the betas of the closed form.
std::vector<double> cumprod_of(const std::vector<double>& betas) {
  std::vector<double> a(betas.size());
  double p = 1.0;
  for (size_t t = 0; t < betas.size(); ++t) a[t] = p *= 1.0 - betas[t];
  return a;
}

void expect_schedule(const Schedule& s, const std::vector<double>& betas) {
  ASSERT_EQ(s.betas.size(), betas.size());
  const std::vector<double> abar = cumprod_of(betas);
  for (size_t t = 0; t < betas.size(); ++t) {
    ASSERT_NEAR(s.betas[t], betas[t], 1e-15 * betas[t] + 1e-18) << t;
    ASSERT_NEAR(s.alphas_cumprod[t], abar[t], 1e-12 * abar[t]) << t;
  }
}

TEST(SchedulerConfig, LinearIsDiffusersLinspace) {
  const SchedulerConfig c = parse(R"({"num_train_timesteps": 500, "beta_start": 0.0002, "beta_end": 0.03,
                                      "beta_schedule": "linear"})");
  std::vector<double> b(500);
  for (int t = 0; t < 500; ++t) b[t] = 0.0002 + (0.03 - 0.0002) * t / 499.0;
  expect_schedule(c.schedule, b);
}

// Stable Diffusion 1.x's config (PNDMScheduler, scaled_linear): betas = linspace(sqrt(b0), sqrt(b1))^2;
// abar[999] = 0.004660098513077234 (the same product in Python floats).
// Its set_alpha_to_one false is refused (SetAlphaToOneFalseRefused); with true the rest is read.
TEST(SchedulerConfig, ScaledLinearStableDiffusion) {
  const SchedulerConfig c = parse(R"({"_class_name": "PNDMScheduler", "_diffusers_version": "0.6.0",
      "beta_end": 0.012, "beta_schedule": "scaled_linear", "beta_start": 0.00085, "num_train_timesteps": 1000,
      "set_alpha_to_one": true, "skip_prk_steps": true, "steps_offset": 1, "trained_betas": null,
      "clip_sample": false})");
  std::vector<double> b(1000);
  for (int t = 0; t < 1000; ++t) {
    const double r = std::sqrt(0.00085) + (std::sqrt(0.012) - std::sqrt(0.00085)) * t / 999.0;
    b[t] = r * r;
  }
  expect_schedule(c.schedule, b);
  EXPECT_NEAR(c.schedule.alphas_cumprod[999], 0.004660098513077234, 1e-15);
  EXPECT_EQ(c.spacing, Spacing::Leading);  // PNDM's default timestep_spacing
  EXPECT_EQ(c.steps_offset, 1);
  // diffusers' PNDM/DDIM set_timesteps(50): step_ratio 20, (arange(50) * 20)[::-1] + 1 = 981, 961, ..., 1.
  const StepTable tab = build_step_table(c.schedule, Sampler::Ddim, 999, 50, 0.0, c.spacing, c.steps_offset);
  ASSERT_EQ(tab.steps(), 50);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(tab.t[i], 981 - 20 * i) << i;
}

// squaredcos_cap_v2 = diffusers' betas_for_alpha_bar(T, max_beta=0.999) with the cosine alpha_bar_fn.
TEST(SchedulerConfig, SquaredcosCapV2IsBetasForAlphaBar) {
  const SchedulerConfig c = parse(R"({"beta_schedule": "squaredcos_cap_v2", "num_train_timesteps": 1000})");
  const double pi = std::acos(-1.0);
  auto alpha_bar_fn = [&](double t) { return std::pow(std::cos((t + 0.008) / 1.008 * pi / 2), 2); };
  std::vector<double> b(1000);
  for (int i = 0; i < 1000; ++i) b[i] = std::min(1.0 - alpha_bar_fn((i + 1) / 1000.0) / alpha_bar_fn(i / 1000.0), 0.999);
  EXPECT_EQ(b[999], 0.999);  // the cap is reached at the last step
  expect_schedule(c.schedule, b);
  EXPECT_NEAR(c.schedule.alphas_cumprod[999], 2.4287669070348567e-09, 1e-12 * 2.43e-9);  // Python floats
}

TEST(SchedulerConfig, TrainedBetasWin) {
  const SchedulerConfig c = parse(R"({"num_train_timesteps": 4, "beta_schedule": "scaled_linear",
                                      "trained_betas": [0.1, 0.2, 0.3, 0.4]})");
  expect_schedule(c.schedule, {0.1, 0.2, 0.3, 0.4});
}

// diffusers' DDIMScheduler.set_timesteps for T = 1000, worked by hand:
//   leading:  step_ratio = T // N, (arange(N) * step_ratio).round()[::-1] + steps_offset
//   linspace: linspace(0, T-1, N).round()[::-1]  (numpy rounds half to even: 166.5 -> 166, 832.5 -> 832)
//   trailing: round(arange(T, 0, -T/N)) - 1      (1000/7 = 142.857...: 1000, 857.14, 714.29, ... -> -1)
TEST(SchedulerConfig, SpacingsMatchDiffusersSetTimesteps) {
  struct Case {
    const char* json;
    int n;
    std::vector<int> t;
  };
  const std::vector<Case> cases = {
      {R"({"timestep_spacing": "leading", "steps_offset": 1})", 10, {901, 801, 701, 601, 501, 401, 301, 201, 101, 1}},
      {R"({"timestep_spacing": "leading", "steps_offset": 1})", 7, {853, 711, 569, 427, 285, 143, 1}},
      {R"({"timestep_spacing": "leading"})", 7, {852, 710, 568, 426, 284, 142, 0}},
      {R"({"timestep_spacing": "linspace"})", 10, {999, 888, 777, 666, 555, 444, 333, 222, 111, 0}},
      {R"({"timestep_spacing": "linspace"})", 7, {999, 832, 666, 500, 333, 166, 0}},
      {R"({"timestep_spacing": "trailing"})", 10, {999, 899, 799, 699, 599, 499, 399, 299, 199, 99}},
      {R"({"timestep_spacing": "trailing"})", 7, {999, 856, 713, 570, 428, 285, 142}},
      {R"({"_class_name": "EulerDiscreteScheduler"})", 4, {999, 666, 333, 0}},  // its default: linspace
      {R"({"_class_name": "DDIMScheduler"})", 4, {750, 500, 250, 0}},           // its default: leading
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(std::string(k.json) + " N = " + std::to_string(k.n));
    const SchedulerConfig c = parse(k.json);
    const StepTable tab = build_step_table(c.schedule, Sampler::Ddim, 999, k.n, 0.0, c.spacing, c.steps_offset);
    EXPECT_EQ(std::vector<int>(tab.t.begin(), tab.t.end()), k.t);
  }
}

TEST(SchedulerConfig, KarrasIsUseKarrasSigmas) {
  EXPECT_EQ(parse(R"({"use_karras_sigmas": true, "timestep_spacing": "trailing"})").spacing, Spacing::Karras);
  const std::string msg = invalid_input_message([] { parse(R"({"timestep_spacing": "karras"})"); });
  EXPECT_NE(msg.find("'timestep_spacing' = \"karras\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("use_karras_sigmas"), std::string::npos) << msg;
}

// rescale_betas_zero_snr (Lin et al. 2023, Algorithm 1): sqrt(abar) mapped linearly so that its first value is
// kept and its last is 0; abar[T-1] = 0 makes runs from T-1 refused, runs below it fine (SEMANTICS §3).
TEST(SchedulerConfig, ZeroTerminalSnr) {
  const SchedulerConfig c = parse(R"({"num_train_timesteps": 1000, "rescale_betas_zero_snr": true})");
  std::vector<double> b(1000);
  for (int t = 0; t < 1000; ++t) b[t] = 1e-4 + (0.02 - 1e-4) * t / 999.0;
  const std::vector<double> abar = cumprod_of(b);
  const double r0 = std::sqrt(abar[0]), rT = std::sqrt(abar[999]);
  for (int t : {0, 1, 10, 500, 998}) {
    const double r = (std::sqrt(abar[t]) - rT) * r0 / (r0 - rT);
    EXPECT_NEAR(c.schedule.alphas_cumprod[t], r * r, 1e-12 * r * r) << t;
  }
  EXPECT_EQ(c.schedule.alphas_cumprod[999], 0.0);
  EXPECT_EQ(first_unusable_t(c.schedule), 999);
  const StepTable bad = build_step_table(c.schedule, Sampler::Ddim, 999, 10);
  const std::string msg = invalid_input_message([&] { check_run_coefficients(c.schedule, bad, 10, -1); });
  EXPECT_NE(msg.find("999"), std::string::npos) << msg;
  const StepTable ok = build_step_table(c.schedule, Sampler::Ddim, 998, 10);
  check_run_coefficients(c.schedule, ok, 10, -1);
}

TEST(SchedulerConfig, BadValuesNameKeyValueAndRange) {
  struct Case {
    const char* json;
    std::vector<const char*> parts;
  };
  const std::vector<Case> cases = {
      {R"({"prediction_type": "v"})", {"'prediction_type' = \"v\"", "epsilon, sample, v_prediction, flow_prediction"}},
      {R"({"num_train_timesteps": 1})", {"'num_train_timesteps' = 1", "[2, 1000000]"}},
      {R"({"num_train_timesteps": 10.5})", {"'num_train_timesteps' = 10.5", "an integer"}},
      {R"({"beta_end": 1.5})", {"'beta_end' = 1.5", "(0, 1)"}},
      {R"({"beta_start": "0.001"})", {"'beta_start' = \"0.001\"", "(0, 1)"}},
      {R"({"beta_schedule": "sigmoid"})", {"'beta_schedule' = \"sigmoid\"", "linear, scaled_linear, squaredcos_cap_v2"}},
      {R"({"num_train_timesteps": 3, "trained_betas": [0.1, 0.2]})", {"'trained_betas'", "array of 3 numbers"}},
      {R"({"num_train_timesteps": 2, "trained_betas": [0.1, -0.2]})", {"'trained_betas[1]' = -0.2", "(0, 1)"}},
      {R"({"steps_offset": -1})", {"'steps_offset' = -1", "[0, 999]"}},
      {R"({"use_karras_sigmas": "yes"})", {"'use_karras_sigmas' = \"yes\"", "true or false"}},
      {R"({"use_exponential_sigmas": true})", {"'use_exponential_sigmas' = true", "use_karras_sigmas"}},
      {R"({"timestep_spacing": "even"})", {"'timestep_spacing' = \"even\"", "leading, linspace, trailing"}},
      {R"([1, 2])", {"a JSON object"}},
      {R"({"beta_end": )", {"not valid JSON"}},
  };
  for (const Case& k : cases) {
    const std::string msg = invalid_input_message([&] { parse(k.json); });
    EXPECT_EQ(msg.rfind("cfg.json: ", 0), 0u) << msg;
    for (const char* p : k.parts) EXPECT_NE(msg.find(p), std::string::npos) << k.json << " -> " << msg;
  }
  const std::string missing = invalid_input_message([] { load_scheduler_config("/nonexistent/scheduler_config.json"); });
  EXPECT_NE(missing.find("/nonexistent/scheduler_config.json"), std::string::npos) << missing;
}

// clip_sample, thresholding and set_alpha_to_one false change diffusers' step (the x0 prediction clipped or
// thresholded, the last step ending at alphas_cumprod[0]): refused, never ignored, whether the config says so or
// its class's default does (DDIMScheduler's and DDPMScheduler's clip_sample default is true, PNDMScheduler's
// set_alpha_to_one default false; a config without _class_name takes DDIMScheduler's).
TEST(SchedulerConfig, ClipSampleFollowsTheClassDefault) {
  struct Case {
    const char* json;
    const char* part;  // "" when the config is accepted
  };
  const std::vector<Case> cases = {
      {R"({"clip_sample": true, "clip_sample_range": 2.0})", "'clip_sample' = true"},
      {R"({})", "'clip_sample' is missing, and DDIMScheduler's default (a config without _class_name takes its defaults) is true"},
      {R"({"_class_name": "DDIMScheduler"})", "'clip_sample' is missing, and DDIMScheduler's default is true"},
      {R"({"_class_name": "DDPMScheduler"})", "'clip_sample' is missing, and DDPMScheduler's default is true"},
      {R"({"_class_name": "EulerDiscreteScheduler"})", ""},
      {R"({"_class_name": "DPMSolverMultistepScheduler"})", ""},
      {R"({"_class_name": "DDIMScheduler", "clip_sample": false, "clip_sample_range": 2.0})", ""},
      {R"({"clip_sample": false, "thresholding": true})", "'thresholding' = true"},
      {R"({"clip_sample": false, "thresholding": false, "dynamic_thresholding_ratio": 0.9, "sample_max_value": 2})", ""},
      {R"({"clip_sample": false, "set_alpha_to_one": false})", "'set_alpha_to_one' = false"},
      {R"({"_class_name": "PNDMScheduler"})", "'set_alpha_to_one' is missing, and PNDMScheduler's default is false"},
      {R"({"_class_name": "PNDMScheduler", "set_alpha_to_one": true})", ""},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.json);
    if (*k.part == '\0') {
      parse_exact(k.json);
      continue;
    }
    const std::string msg = invalid_input_message([&] { parse_exact(k.json); });
    EXPECT_NE(msg.find(k.part), std::string::npos) << msg;
    EXPECT_NE(msg.find("SEMANTICS §3"), std::string::npos) << msg;
  }
}

// On a VP class the flow keys and the other keys that change diffusers' steps are refused naming the key and the
// value, never "ignored"; so is a key this reader does not know. The three files of the flow-config report are
// read in their families (test_scheduler_config_family.cpp), but for the DDIM one's missing clip_sample.
TEST(SchedulerConfig, KeysThatChangeTheMathsAreRefused) {
  struct Case {
    const char* json;
    const char* part;
  };
  const std::vector<Case> cases = {
      {R"({"shift": 3.0})", "'shift' = 3.0"},
      {R"({"use_dynamic_shifting": true})", "'use_dynamic_shifting' = true"},
      {R"({"base_shift": 0.5})", "'base_shift' = 0.5"},
      {R"({"max_shift": 1.15})", "'max_shift' = 1.15"},
      {R"({"shift_terminal": 0.1})", "'shift_terminal' = 0.1"},
      {R"({"use_flow_sigmas": true})", "'use_flow_sigmas' = true"},
      {R"({"flow_shift": 3.0})", "'flow_shift' = 3.0"},
      {R"({"prediction_type": "flow_prediction"})", "'prediction_type' = \"flow_prediction\""},
      {R"({"invert_sigmas": true})", "'invert_sigmas' = true"},
      {R"({"final_sigmas_type": "sigma_min"})", "'final_sigmas_type' = \"sigma_min\""},
      {R"({"sigma_min": 0.02})", "'sigma_min' = 0.02"},
      {R"({"timestep_type": "continuous"})", "'timestep_type' = \"continuous\""},
      {R"({"interpolation_type": "log_linear"})", "'interpolation_type' = \"log_linear\""},
      {R"({"use_lu_lambdas": true})", "'use_lu_lambdas' = true"},
      {R"({"variance_type": "learned_range"})", "'variance_type' = \"learned_range\""},
      {R"({"use_beta_sigmas": true})", "'use_beta_sigmas' = true"},
      {R"({"some_new_option": 7})", "'some_new_option' = 7 is not a scheduler_config key diffscope knows"},
  };
  for (const Case& k : cases) {
    const std::string msg = invalid_input_message([&] { parse(k.json); });
    EXPECT_NE(msg.find(k.part), std::string::npos) << k.json << " -> " << msg;
  }
  // The neutral values of those keys change nothing and are accepted (what diffusers writes by default).
  const SchedulerConfig neutral = parse(R"({"_class_name": "DPMSolverMultistepScheduler", "use_flow_sigmas": false,
      "flow_shift": 1.0, "final_sigmas_type": "zero", "use_lu_lambdas": false, "lower_order_final": true,
      "euler_at_final": false, "variance_type": null, "sigma_min": null, "invert_sigmas": false})");
  EXPECT_EQ(neutral.spacing, Spacing::Linspace);
  EXPECT_TRUE(load_scheduler_config(test::data_path("reported/flow-config/flow_match_euler_shift3.json")).flow_match);
  EXPECT_TRUE(load_scheduler_config(test::data_path("reported/flow-config/dpm_flow_sigmas.json")).flow_sigmas_shift);
  const std::string path = test::data_path("reported/flow-config/ddim_v_ztsnr.json");
  const std::string msg = invalid_input_message([&] { load_scheduler_config(path); });
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("'clip_sample' is missing, and DDIMScheduler's default is true"), std::string::npos) << msg;
}

// The sampler comes from --sampler; the config's _class_name only names one, and a note says when they differ.
TEST(SchedulerConfig, SamplerMismatchNote) {
  const SchedulerConfig dpm = parse(scheduler_config_json(Schedule::linear(1000), Sampler::Dpmpp2m, Spacing::Leading, 0));
  EXPECT_EQ(dpm.class_name, "DPMSolverMultistepScheduler");
  EXPECT_EQ(config_samplers(dpm), std::vector<Sampler>{Sampler::Dpmpp2m});
  EXPECT_EQ(sampler_mismatch_note(dpm, Sampler::Dpmpp2m), "");
  const std::string note = sampler_mismatch_note(dpm, Sampler::Ddim);
  EXPECT_NE(note.find("names DPMSolverMultistepScheduler (algorithm_type dpmsolver++, solver_order 2), diffscope's "
                      "dpmpp-2m; the sampler that runs is ddim"), std::string::npos) << note;
  const SchedulerConfig sde = parse(scheduler_config_json(Schedule::linear(1000), Sampler::Dpmpp2mSde, Spacing::Leading, 0));
  EXPECT_EQ(config_samplers(sde), std::vector<Sampler>{Sampler::Dpmpp2mSde});
  const SchedulerConfig ddpm = parse(scheduler_config_json(Schedule::linear(1000), Sampler::Ddpm, Spacing::Leading, 0));
  EXPECT_EQ(sampler_mismatch_note(ddpm, Sampler::DdpmMean), "");
  EXPECT_NE(sampler_mismatch_note(ddpm, Sampler::Heun).find("DDPMScheduler, diffscope's ddpm / ddpm-mean"),
            std::string::npos);
  const SchedulerConfig third = parse(R"({"_class_name": "DPMSolverMultistepScheduler", "solver_order": 3})");
  EXPECT_TRUE(config_samplers(third).empty());
  EXPECT_NE(sampler_mismatch_note(third, Sampler::Dpmpp2m).find("which diffscope does not run"), std::string::npos);
  EXPECT_EQ(sampler_mismatch_note(parse("{}"), Sampler::Heun), "");  // no class named: nothing to say
}

// SEMANTICS §3: a network's own schedule wins (a warning when the config's differs); an analytic model or a
// network file without schedule information takes the config's.
TEST(SchedulerConfig, WhichScheduleWins) {
  const SchedulerConfig cfg = parse(R"({"beta_schedule": "squaredcos_cap_v2"})");
  DiffusionModel net;
  net.schedule = Schedule::linear(1000);
  net.schedule_in_file = true;
  apply_scheduler_config(net, cfg);
  EXPECT_EQ(net.schedule.betas, Schedule::linear(1000).betas);
  ASSERT_EQ(net.warnings.size(), 1u);
  EXPECT_NE(net.warnings[0].find("the model file's schedule is used"), std::string::npos) << net.warnings[0];

  DiffusionModel same = net;  // the same betas: no warning
  same.warnings.clear();
  apply_scheduler_config(same, parse("{}"));
  EXPECT_TRUE(same.warnings.empty());

  DiffusionModel bare = net;
  bare.schedule_in_file = false;
  apply_scheduler_config(bare, cfg);
  EXPECT_EQ(bare.schedule.betas, cfg.schedule.betas);

  DiffusionModel mix = net;
  mix.mixture = GaussianMixture{};
  apply_scheduler_config(mix, cfg);
  EXPECT_EQ(mix.schedule.betas, cfg.schedule.betas);
}

// Written and read back: the same betas (named schedule or trained_betas), spacing and steps_offset; karras is
// written as use_karras_sigmas, never as a timestep_spacing; the default spacing has no diffusers name.
TEST(SchedulerConfig, RoundTrip) {
  struct Case {
    Schedule s;
    Spacing spacing;
    const char* named;
  };
  std::vector<double> odd(50);
  for (int t = 0; t < 50; ++t) odd[t] = 0.01 + 0.001 * (t % 7);
  const std::vector<Case> cases = {{Schedule::linear(1000), Spacing::Trailing, "\"linear\""},
                                   {Schedule::scaled_linear(1000, 0.00085, 0.012), Spacing::Leading, "\"scaled_linear\""},
                                   {Schedule::cosine(300), Spacing::Karras, "\"squaredcos_cap_v2\""},
                                   {Schedule::from_betas(odd, "odd"), Spacing::Linspace, "\"trained_betas\": ["}};
  for (const Case& k : cases) {
    const std::string text = scheduler_config_json(k.s, Sampler::Dpmpp2m, k.spacing, 3);
    SCOPED_TRACE(text.substr(0, 400));
    EXPECT_NE(text.find(k.named), std::string::npos);
    EXPECT_EQ(text.find("\"karras\""), std::string::npos);
    EXPECT_NE(text.find("\"DPMSolverMultistepScheduler\""), std::string::npos);
    const SchedulerConfig back = parse(text);
    EXPECT_EQ(back.spacing, k.spacing);
    EXPECT_EQ(back.steps_offset, 3);
    expect_schedule(back.schedule, k.s.betas);
  }
  const std::string msg =
      test::cli_error_message([] { scheduler_config_json(Schedule::linear(1000), Sampler::Ddim, Spacing::Default, 0); });
  EXPECT_NE(msg.find("--spacing = default"), std::string::npos) << msg;
  // Betas stored in float32 (as in the bundled model files) are still "linear", with the end points written as
  // the shortest decimals of their floats: 0.0001 and 0.02.
  std::vector<double> f32 = Schedule::linear(1000).betas;
  for (double& b : f32) b = static_cast<float>(b);
  const nlohmann::json w = nlohmann::json::parse(
      scheduler_config_json(Schedule::from_betas(f32, "f32"), Sampler::Ddim, Spacing::Leading, 0));
  EXPECT_EQ(w["beta_schedule"], "linear");
  EXPECT_EQ(w["beta_start"].get<double>(), 0.0001);
  EXPECT_EQ(w["beta_end"].get<double>(), 0.02);
  // A zero-terminal-SNR schedule goes out as trained_betas ending in 1 and comes back the same.
  const Schedule zsnr = parse(R"({"rescale_betas_zero_snr": true})").schedule;
  const SchedulerConfig back = parse(scheduler_config_json(zsnr, Sampler::Ddim, Spacing::Trailing, 0));
  EXPECT_EQ(back.schedule.betas.back(), 1.0);
  EXPECT_EQ(back.schedule.alphas_cumprod.back(), 0.0);
}

}  // namespace
}  // namespace diffscope
