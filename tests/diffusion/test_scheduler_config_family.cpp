// test_scheduler_config_family.cpp — the families' diffusers scheduler configs (SEMANTICS §3 "diffusers
// scheduler_config.json", "Noise-level lists of the families"): each class's defaults as diffusers' __init__
// signatures give them, the lists read from configs against diffusers' own lines run with torch and numpy
// (tests/data/family/diffusers_lists.json), the samplers each class names, the family check against a model,
// every refusal naming the key, the value and the valid range, and the round trip written -> read -> the same list
// and family, per family.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "diffusion/scheduler_config.h"
#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

using nlohmann::json;
using test::invalid_input_message;

SchedulerConfig parse(const std::string& text) { return parse_scheduler_config(text, "cfg.json"); }

nlohmann::json golden() {
  std::ifstream in(test::data_path("family/diffusers_lists.json"));
  return nlohmann::json::parse(in);
}

// Our float64 level rounds to exactly diffusers' float32 level (within `ulps` float32 steps when ulps > 0).
void expect_levels(const LevelList& ours, const std::vector<double>& theirs, double ulps, const std::string& what) {
  ASSERT_EQ(ours.levels.size(), theirs.size()) << what;
  for (size_t i = 0; i < theirs.size(); ++i) {
    if (ulps == 0)
      EXPECT_EQ(static_cast<float>(ours.levels[i]), theirs[i]) << what << " i " << i;
    else
      EXPECT_LE(std::abs(static_cast<float>(ours.levels[i]) - theirs[i]), ulps * theirs[i] * 0x1p-23) << what << " i " << i;
  }
}

void expect_same_list(const LevelList& a, const LevelList& b) {
  EXPECT_EQ(a.levels, b.levels);
  EXPECT_EQ(a.timesteps, b.timesteps);
}

// A config without keys takes the class's defaults (diffusers' __init__ signatures: FlowMatchEuler
// num_train_timesteps 1000, shift 1.0, use_dynamic_shifting False, shift_terminal None; EDMEuler sigma_min 0.002,
// sigma_max 80.0, sigma_data 0.5, sigma_schedule "karras", rho 7.0, prediction_type "epsilon", final_sigmas_type
// "zero"; EDMDPMSolverMultistep the same and algorithm_type "dpmsolver++", solver_order 2, solver_type
// "midpoint"); each names its sampler.
TEST(SchedulerConfigFamily, ClassDefaults) {
  for (const char* cls : {"FlowMatchEulerDiscreteScheduler", "FlowMatchHeunDiscreteScheduler"}) {
    const SchedulerConfig c = parse(std::string(R"({"_class_name": ")") + cls + "\"}");
    ASSERT_TRUE(c.flow_match);
    EXPECT_EQ(c.flow_match->T, 1000);
    EXPECT_EQ(c.flow_match->shift, 1.0);
    EXPECT_FALSE(c.flow_match->use_dynamic_shifting);
    EXPECT_EQ(c.flow_match->shift_terminal, 0.0);
    EXPECT_EQ(c.prediction_type, Family::Flow);
    EXPECT_TRUE(has_family_list(c));
    EXPECT_FALSE(config_uses_flow_mu(c));
    EXPECT_EQ(c.schedule.T, 0);  // no betas
    EXPECT_EQ(c.spacing, Spacing::Default);
    // set_timesteps(4) at shift 1: linspace(1000, 1000 * float32(1/1000), 4) / 1000, then 0.
    const double smin = static_cast<double>(1.0f / 1000.0f);
    const LevelList l = config_family_levels(c, 4, std::nullopt);
    ASSERT_EQ(l.levels.size(), 5u);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(l.levels[i], 1.0 + i * (smin - 1.0) / 3.0, 1e-15) << i;
    EXPECT_EQ(l.levels[4], 0.0);
  }
  EXPECT_EQ(config_samplers(parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler"})")),
            std::vector<Sampler>{Sampler::FlowEuler});
  EXPECT_EQ(config_samplers(parse(R"({"_class_name": "FlowMatchHeunDiscreteScheduler"})")),
            std::vector<Sampler>{Sampler::FlowHeun});
  for (const char* cls : {"EDMEulerScheduler", "EDMDPMSolverMultistepScheduler"}) {
    const SchedulerConfig c = parse(std::string(R"({"_class_name": ")") + cls + "\"}");
    ASSERT_TRUE(c.edm);
    EXPECT_EQ(c.edm->sigma_min, 0.002);
    EXPECT_EQ(c.edm->sigma_max, 80.0);
    EXPECT_EQ(c.edm->sigma_data, 0.5);
    EXPECT_EQ(c.edm->rho, 7.0);
    EXPECT_EQ(c.edm->schedule, EdmSchedule::Karras);
    EXPECT_TRUE(c.edm->final_sigma_zero);
    EXPECT_FALSE(c.edm_v_prediction);
    EXPECT_EQ(c.prediction_type, Family::Edm);
    // Karras et al. eq. 5 with N = 2: sigma_max, sigma_min, then 0.
    const LevelList l = config_family_levels(c, 2, std::nullopt);
    EXPECT_NEAR(l.levels[0], 80.0, 1e-12);
    EXPECT_NEAR(l.levels[1], 0.002, 1e-15);
    EXPECT_EQ(l.levels[2], 0.0);
  }
  EXPECT_EQ(config_samplers(parse(R"({"_class_name": "EDMEulerScheduler"})")),
            (std::vector<Sampler>{Sampler::FlowEuler, Sampler::Ddim}));
  EXPECT_EQ(config_samplers(parse(R"({"_class_name": "EDMDPMSolverMultistepScheduler"})")),
            std::vector<Sampler>{Sampler::Dpmpp2m});
  EXPECT_EQ(config_samplers(parse(R"({"_class_name": "EDMDPMSolverMultistepScheduler", "algorithm_type": "sde-dpmsolver++"})")),
            std::vector<Sampler>{Sampler::Dpmpp2mSde});
  const std::string note = sampler_mismatch_note(parse(R"({"_class_name": "EDMEulerScheduler"})"), Sampler::Heun);
  EXPECT_NE(note.find("names EDMEulerScheduler, diffscope's flow-euler / ddim; the sampler that runs is heun (the "
                      "config gives the noise-level list, never the sampler)"), std::string::npos) << note;
  EXPECT_TRUE(config_samplers(parse(R"({"_class_name": "UniPCMultistepScheduler", "use_flow_sigmas": true,
      "prediction_type": "flow_prediction", "flow_shift": 5.0})")).empty());
}

// Configs as written by the families' pipelines (SD3's, Flux's, Wan's UniPC, Playground v2.5's EDM) are read with
// every key; their lists are diffusers'.
TEST(SchedulerConfigFamily, PipelineConfigs) {
  const SchedulerConfig sd3 = load_scheduler_config(test::data_path("reported/flow-config/flow_match_euler_shift3.json"));
  ASSERT_TRUE(sd3.flow_match);
  EXPECT_EQ(sd3.flow_match->shift, 3.0);
  // At shift 3, T = 1000 the last level before 0 is shift(shift(0.001)) = 0.0089286 (the shift applied twice).
  const double s1 = 3 * 0.001 / (1 + 2 * 0.001), s2 = 3 * s1 / (1 + 2 * s1);
  const LevelList l28 = config_family_levels(sd3, 28, std::nullopt);
  EXPECT_NEAR(l28.levels[27], s2, 1e-9);
  EXPECT_NEAR(l28.levels[27], 0.0089286, 1e-7);
  const SchedulerConfig flux = parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "_diffusers_version":
      "0.30.0.dev0", "base_image_seq_len": 256, "base_shift": 0.5, "max_image_seq_len": 4096, "max_shift": 1.15,
      "num_train_timesteps": 1000, "shift": 3.0, "use_dynamic_shifting": true, "invert_sigmas": false,
      "shift_terminal": null, "use_karras_sigmas": false, "use_exponential_sigmas": false, "use_beta_sigmas": false,
      "time_shift_type": "exponential", "stochastic_sampling": false})");
  EXPECT_TRUE(config_uses_flow_mu(flux));
  // Dynamic: __init__ does not shift; set_timesteps applies e^mu / (e^mu + 1/s - 1) once. N = 1: s = 1.
  EXPECT_EQ(config_family_levels(flux, 1, 0.7).levels, (std::vector<double>{1.0, 0.0}));
  const SchedulerConfig wan = parse(R"({"_class_name": "UniPCMultistepScheduler", "num_train_timesteps": 1000,
      "prediction_type": "flow_prediction", "use_flow_sigmas": true, "flow_shift": 5.0, "solver_order": 2,
      "solver_type": "bh2", "predict_x0": true, "disable_corrector": [], "lower_order_final": true,
      "final_sigmas_type": "zero", "timestep_spacing": "linspace", "use_dynamic_shifting": false,
      "time_shift_type": "exponential", "beta_schedule": "linear", "beta_start": 0.0001, "beta_end": 0.02})");
  ASSERT_TRUE(wan.flow_sigmas_shift);
  EXPECT_EQ(*wan.flow_sigmas_shift, 5.0);
  EXPECT_EQ(wan.prediction_type, Family::Flow);
  // alphas = linspace(1, 1/T, 2); s = 1 - alphas shifted, reversed, the 0 dropped: shift(1 - 1/T), then 0.
  const double top = 5 * 0.999 / (1 + 4 * 0.999);
  const LevelList w = config_family_levels(wan, 1, std::nullopt);
  EXPECT_NEAR(w.levels[0], top, 1e-15);
  EXPECT_EQ(w.levels[1], 0.0);
  EXPECT_EQ(w.timesteps[0], std::trunc(top * 1000));
  const SchedulerConfig pg = parse(R"({"_class_name": "EDMDPMSolverMultistepScheduler", "_diffusers_version":
      "0.27.0.dev0", "algorithm_type": "dpmsolver++", "dynamic_thresholding_ratio": 0.995, "euler_at_final": false,
      "final_sigmas_type": "zero", "lower_order_final": true, "num_train_timesteps": 1000, "prediction_type":
      "epsilon", "rho": 7.0, "sample_max_value": 1.0, "sigma_data": 0.5, "sigma_max": 80.0, "sigma_min": 0.002,
      "solver_order": 2, "solver_type": "midpoint", "thresholding": false})");
  ASSERT_TRUE(pg.edm);
  EXPECT_EQ(config_samplers(pg), std::vector<Sampler>{Sampler::Dpmpp2m});
}

// The lists of configs holding each golden case's parameters, against diffusers' own lines (torch 2.11, numpy 2.5):
// FlowMatchEuler (shifts, T = 500, dynamic mu, shift_terminal), DPM-Solver use_flow_sigmas, EDM karras (exact in
// float32) and exponential (diffusers computes it in float32: within 3 float32 steps).
TEST(SchedulerConfigFamily, ListsAreDiffusers) {
  const json g = golden();
  for (const json& c : g["flow_match_euler"]) {
    json cfg = {{"_class_name", "FlowMatchEulerDiscreteScheduler"}, {"num_train_timesteps", c["T"]},
                {"shift", c["shift"]}, {"use_dynamic_shifting", c["dynamic"]}};
    if (c["shift_terminal"].get<double>() > 0) cfg["shift_terminal"] = c["shift_terminal"];
    const std::optional<double> mu = c["mu"].is_null() ? std::nullopt : std::optional<double>(c["mu"].get<double>());
    expect_levels(config_family_levels(parse(cfg.dump()), c["n"], mu), c["sigmas"], 0, cfg.dump());
  }
  for (const json& c : g["dpm_flow"]) {
    const json cfg = {{"_class_name", "DPMSolverMultistepScheduler"}, {"num_train_timesteps", c["T"]},
                      {"prediction_type", "flow_prediction"}, {"use_flow_sigmas", true}, {"flow_shift", c["flow_shift"]}};
    const LevelList l = config_family_levels(parse(cfg.dump()), c["n"], std::nullopt);
    expect_levels(l, c["sigmas"], 0, cfg.dump());
    EXPECT_EQ(l.timesteps, c["timesteps"].get<std::vector<double>>());
    // use_dynamic_shifting with mu: set_timesteps sets flow_shift = e^mu, so mu = log(flow_shift) is this list.
    json dyn = cfg;
    dyn["flow_shift"] = 1.0;
    dyn["use_dynamic_shifting"] = true;
    const LevelList d = config_family_levels(parse(dyn.dump()), c["n"], std::log(c["flow_shift"].get<double>()));
    expect_levels(d, c["sigmas"], 0, dyn.dump());
  }
  for (const json& c : g["edm"]) {
    const json cfg = {{"_class_name", "EDMEulerScheduler"}, {"sigma_schedule", c["schedule"]},
                      {"sigma_min", c["sigma_min"]}, {"sigma_max", c["sigma_max"]}, {"rho", c["rho"]}};
    expect_levels(config_family_levels(parse(cfg.dump()), c["n"], std::nullopt), c["sigmas"],
                  c["schedule"] == "karras" ? 0 : 3, cfg.dump());
  }
}

// Every value checked: exit-2 InvalidInput naming the key, the value and the valid range; every key that changes
// the maths and is not implemented refused at any value but the one that changes nothing.
TEST(SchedulerConfigFamily, RefusalsNameKeyValueAndRange) {
  struct Case {
    const char* json;
    std::vector<const char*> parts;
  };
  const std::string fm = R"({"_class_name": "FlowMatchEulerDiscreteScheduler", )";
  const std::string heun = R"({"_class_name": "FlowMatchHeunDiscreteScheduler", )";
  const std::string edm = R"({"_class_name": "EDMEulerScheduler", )";
  const std::string dpm = R"({"_class_name": "DPMSolverMultistepScheduler", "prediction_type": "flow_prediction", )";
  const std::vector<std::pair<std::string, std::vector<const char*>>> cases = {
      {fm + R"("shift": 0})", {"'shift' = 0", "a finite number > 0"}},
      {fm + R"("shift": -3.0})", {"'shift' = -3.0", "> 0"}},
      {fm + R"("num_train_timesteps": 1})", {"'num_train_timesteps' = 1", "[2, 1000000]"}},
      {fm + R"("shift_terminal": 1.0})", {"'shift_terminal' = 1.0", "[0, 1)"}},
      {fm + R"("shift_terminal": -0.1})", {"'shift_terminal' = -0.1", "[0, 1)"}},
      {fm + R"("invert_sigmas": true})", {"'invert_sigmas' = true", "valid: false"}},
      {fm + R"("stochastic_sampling": true})", {"'stochastic_sampling' = true", "valid: false"}},
      {fm + R"("use_karras_sigmas": true})", {"'use_karras_sigmas' = true", "valid: false"}},
      {fm + R"("use_exponential_sigmas": true})", {"'use_exponential_sigmas' = true", "valid: false"}},
      {fm + R"("use_beta_sigmas": true})", {"'use_beta_sigmas' = true", "valid: false"}},
      {fm + R"("use_dynamic_shifting": true, "time_shift_type": "linear"})", {"'time_shift_type' = \"linear\"", "exponential"}},
      {fm + R"("time_shift_type": "cubic"})", {"'time_shift_type' = \"cubic\"", "exponential, linear"}},
      {fm + R"("base_shift": "x"})", {"'base_shift' = \"x\"", "a finite number"}},
      {fm + R"("max_image_seq_len": 0})", {"'max_image_seq_len' = 0", "an integer in [1, "}},
      {fm + R"("prediction_type": "epsilon"})", {"'prediction_type' = \"epsilon\"", "flow_prediction"}},
      {fm + R"("beta_schedule": "linear"})", {"'beta_schedule' = \"linear\"", "not a scheduler_config key of FlowMatchEulerDiscreteScheduler"}},
      {heun + R"("use_dynamic_shifting": true})", {"'use_dynamic_shifting' = true", "FlowMatchHeunDiscreteScheduler has no dynamic shifting"}},
      {heun + R"("shift_terminal": 0.1})", {"'shift_terminal' = 0.1", "FlowMatchHeunDiscreteScheduler has no shift_terminal"}},
      {R"({"_class_name": "FlowMatchLCMScheduler"})", {"'_class_name' = \"FlowMatchLCMScheduler\"", "FlowMatchEulerDiscreteScheduler, FlowMatchHeunDiscreteScheduler"}},
      {R"({"_class_name": "EDMHeunScheduler"})", {"'_class_name' = \"EDMHeunScheduler\"", "EDMEulerScheduler, EDMDPMSolverMultistepScheduler"}},
      {edm + R"("sigma_min": 0})", {"'sigma_min' = 0", "> 0"}},
      {edm + R"("sigma_max": 0.001})", {"'sigma_max' = 0.001", "above sigma_min = 0.002"}},
      {edm + R"("sigma_min": 100})", {"'sigma_min' = 100", "below sigma_max = 80 (EDMEulerScheduler's default)"}},
      {edm + R"("sigma_data": -1})", {"'sigma_data' = -1", "> 0"}},
      {edm + R"("rho": 0})", {"'rho' = 0", "> 0"}},
      {edm + R"("sigma_schedule": "linear"})", {"'sigma_schedule' = \"linear\"", "karras, exponential"}},
      {edm + R"("final_sigmas_type": "one"})", {"'final_sigmas_type' = \"one\"", "zero, sigma_min"}},
      {edm + R"("prediction_type": "sample"})", {"'prediction_type' = \"sample\"", "epsilon, v_prediction"}},
      {edm + R"("thresholding": false})", {"'thresholding' = false", "not a scheduler_config key of EDMEulerScheduler"}},
      {R"({"_class_name": "EDMDPMSolverMultistepScheduler", "thresholding": true})", {"'thresholding' = true", "valid: false"}},
      {R"({"_class_name": "EDMDPMSolverMultistepScheduler", "algorithm_type": "dpmsolver"})", {"'algorithm_type' = \"dpmsolver\"", "dpmsolver++, sde-dpmsolver++"}},
      {dpm + R"("use_flow_sigmas": true, "flow_shift": 0})", {"'flow_shift' = 0", "> 0"}},
      {dpm + R"("use_flow_sigmas": true, "final_sigmas_type": "sigma_min"})", {"'final_sigmas_type' = \"sigma_min\"", "zero", "refused on flow lists"}},
      {dpm + R"("use_flow_sigmas": true, "use_karras_sigmas": true})", {"'use_karras_sigmas' = true", "valid: false"}},
      {dpm + R"("use_flow_sigmas": true, "sigma_min": 0.01})", {"'sigma_min' = 0.01", "no value"}},
      {dpm + R"("use_flow_sigmas": true, "time_shift_type": "linear"})", {"'time_shift_type' = \"linear\"", "exponential"}},
      {R"({"_class_name": "DPMSolverMultistepScheduler", "use_flow_sigmas": true})", {"'prediction_type' is missing", "flow_prediction"}},
      {R"({"_class_name": "DPMSolverMultistepScheduler", "use_flow_sigmas": true, "prediction_type": "epsilon"})", {"'prediction_type' = \"epsilon\"", "flow_prediction with use_flow_sigmas"}},
      {R"({"_class_name": "EulerDiscreteScheduler", "use_flow_sigmas": true, "prediction_type": "flow_prediction"})", {"'use_flow_sigmas' = true", "DPMSolverMultistepScheduler and UniPCMultistepScheduler"}},
      {R"({"_class_name": "DPMSolverMultistepScheduler", "prediction_type": "flow_prediction"})", {"'prediction_type' = \"flow_prediction\"", "use_flow_sigmas"}},
      {R"({"_class_name": "DPMSolverMultistepScheduler", "flow_shift": 3.0})", {"'flow_shift' = 3.0", "only with use_flow_sigmas"}},
      {R"({"_class_name": "DPMSolverMultistepScheduler", "shift": 3.0})", {"'shift' = 3.0", "FlowMatch"}},
      {R"({"_class_name": "DPMSolverMultistepScheduler", "prediction_type": "x0"})", {"'prediction_type' = \"x0\"", "epsilon, sample, v_prediction, flow_prediction"}},
  };
  for (const auto& [text, parts] : cases) {
    const std::string msg = invalid_input_message([&] { parse(text); });
    EXPECT_EQ(msg.rfind("cfg.json: ", 0), 0u) << text << " -> " << msg;
    for (const char* p : parts) EXPECT_NE(msg.find(p), std::string::npos) << text << " -> " << msg;
  }
  // The values that change nothing are accepted: what diffusers writes by default.
  parse(R"({"_class_name": "DPMSolverMultistepScheduler", "use_flow_sigmas": false, "flow_shift": 1.0,
            "use_dynamic_shifting": false, "time_shift_type": "exponential", "final_sigmas_type": "zero"})");
  parse(fm + R"("shift_terminal": null, "invert_sigmas": false, "time_shift_type": "linear"})");  // no dynamic shift
  parse(heun + R"("use_dynamic_shifting": false, "shift_terminal": null, "base_shift": 0.5})");
}

// mu: a config with use_dynamic_shifting needs the run's flow_mu (diffusers computes it from the image size);
// a mu that makes e^mu overflow and a step count below 1 are refused.
TEST(SchedulerConfigFamily, DynamicShiftingNeedsFlowMu) {
  const SchedulerConfig flux = parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "use_dynamic_shifting": true})");
  std::string msg = invalid_input_message([&] { config_family_levels(flux, 10, std::nullopt); });
  EXPECT_NE(msg.find("'use_dynamic_shifting' = true needs flow_mu"), std::string::npos) << msg;
  EXPECT_NE(msg.find("image's size"), std::string::npos) << msg;
  msg = invalid_input_message([&] { config_family_levels(flux, 10, 800.0); });
  EXPECT_NE(msg.find("flow_mu = 800 is out of range; valid: a number in [-700, 700]"), std::string::npos) << msg;
  // e^mu / (e^mu + 1/s - 1) at mu = 0 is s itself: the unshifted linspace(1000, 1, 3) / 1000.
  const double smin = static_cast<double>(1.0f / 1000.0f);
  const LevelList l = config_family_levels(flux, 3, 0.0);
  EXPECT_NEAR(l.levels[1], (1000 + 1000 * smin) / 2.0 / 1000, 1e-15);
  msg = invalid_input_message([&] { config_family_levels(flux, 0, 0.5); });
  EXPECT_NE(msg.find("steps = 0"), std::string::npos) << msg;
  const SchedulerConfig fixed = parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift": 3.0})");
  EXPECT_FALSE(config_uses_flow_mu(fixed));
  expect_same_list(config_family_levels(fixed, 7, 0.9), config_family_levels(fixed, 7, std::nullopt));
  const SchedulerConfig vp = parse(R"({"_class_name": "EulerDiscreteScheduler"})");
  EXPECT_FALSE(has_family_list(vp));
  EXPECT_THROW(config_family_levels(vp, 4, std::nullopt), std::logic_error);
}

// VP families: prediction_type sample and v_prediction are read (the reported zero-terminal-SNR v config among
// them), with their betas and spacing.
TEST(SchedulerConfigFamily, VpPredictionTypes) {
  // The reported ddim_v_ztsnr.json with clip_sample false (without it DDIMScheduler's default clips: refused).
  const SchedulerConfig v = parse(R"({"_class_name": "DDIMScheduler", "num_train_timesteps": 1000, "beta_schedule":
      "linear", "beta_start": 0.0001, "beta_end": 0.02, "prediction_type": "v_prediction", "timestep_spacing":
      "trailing", "rescale_betas_zero_snr": true, "clip_sample": false})");
  EXPECT_EQ(v.prediction_type, Family::VPrediction);
  EXPECT_EQ(v.spacing, Spacing::Trailing);
  EXPECT_EQ(v.schedule.alphas_cumprod.back(), 0.0);
  EXPECT_FALSE(has_family_list(v));
  EXPECT_EQ(parse(R"({"_class_name": "EulerDiscreteScheduler", "prediction_type": "sample"})").prediction_type,
            Family::Sample);
  EXPECT_EQ(parse(R"({"_class_name": "EulerDiscreteScheduler", "prediction_type": "epsilon"})").prediction_type,
            Family::Epsilon);
  EXPECT_FALSE(parse(R"({"_class_name": "EulerDiscreteScheduler"})").prediction_type);  // names none
  const SchedulerConfig dpm = load_scheduler_config(test::data_path("reported/flow-config/dpm_flow_sigmas.json"));
  EXPECT_EQ(dpm.prediction_type, Family::Flow);
  EXPECT_EQ(dpm.flow_sigmas_shift, 3.0);
  EXPECT_EQ(dpm.spacing, Spacing::Default);
  EXPECT_EQ(config_samplers(dpm), std::vector<Sampler>{Sampler::Dpmpp2m});
}

FamilyParams family_of(Family f) {
  FamilyParams p;
  p.family = f;
  p.time_input = default_time_input(f);
  return p;
}

// The config never sets the model's family; it must go with it (a VP config naming none with every VP family).
TEST(SchedulerConfigFamily, FamilyMustGoWithTheModel) {
  const SchedulerConfig fm = parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift": 3.0})");
  const SchedulerConfig vp = parse(R"({"_class_name": "EulerDiscreteScheduler"})");
  const SchedulerConfig v = parse(R"({"_class_name": "EulerDiscreteScheduler", "prediction_type": "v_prediction"})");
  const SchedulerConfig edm = parse(R"({"_class_name": "EDMEulerScheduler", "sigma_data": 1.0, "prediction_type": "v_prediction"})");
  check_config_family(fm, family_of(Family::Flow), true);
  for (Family f : {Family::Epsilon, Family::Sample, Family::VPrediction}) check_config_family(vp, family_of(f), false);
  check_config_family(v, family_of(Family::VPrediction), true);
  std::string msg = invalid_input_message([&] { check_config_family(fm, family_of(Family::Epsilon), false); });
  EXPECT_NE(msg.find("prediction_type = flow (_class_name FlowMatchEulerDiscreteScheduler) does not go with the model's "
                     "family epsilon (the default of a model that names none"), std::string::npos) << msg;
  msg = invalid_input_message([&] { check_config_family(v, family_of(Family::Epsilon), true); });
  EXPECT_NE(msg.find("prediction_type = v_prediction (its prediction_type) does not go with the model's family epsilon "
                     "(its file's prediction_type)"), std::string::npos) << msg;
  msg = invalid_input_message([&] { check_config_family(vp, family_of(Family::Flow), true); });
  EXPECT_NE(msg.find("a VP scheduler config"), std::string::npos) << msg;
  EXPECT_NE(msg.find("FlowMatchEulerDiscreteScheduler, FlowMatchHeunDiscreteScheduler"), std::string::npos) << msg;
  FamilyParams e = family_of(Family::Edm);
  e.sigma_data = 1.0;
  e.edm_v = true;
  check_config_family(edm, e, true);
  e.sigma_data = 0.5;
  msg = invalid_input_message([&] { check_config_family(edm, e, true); });
  EXPECT_NE(msg.find("'sigma_data' = 1 differs from the model's sigma_data 0.5"), std::string::npos) << msg;
  e.sigma_data = 1.0;
  e.edm_v = false;
  msg = invalid_input_message([&] { check_config_family(edm, e, true); });
  EXPECT_NE(msg.find("'prediction_type' = v_prediction (the sign of c_out) differs"), std::string::npos) << msg;
  FamilyParams f500 = family_of(Family::Flow);
  f500.T = 500;
  msg = invalid_input_message([&] { check_config_family(fm, f500, true); });
  EXPECT_NE(msg.find("'num_train_timesteps' = 1000 differs from the model's T = 500 (its time input T*s)"),
            std::string::npos) << msg;
  f500.time_input = TimeInput::S;  // the network does not read T: the list's T is the config's
  check_config_family(fm, f500, true);
}

// apply_scheduler_config: a family list carries no betas, so the model keeps its schedule (an analytic model
// too); the family check comes first.
TEST(SchedulerConfigFamily, ApplyKeepsTheModelsSchedule) {
  DiffusionModel flow;
  flow.schedule = Schedule::cosine(100);
  flow.family = family_of(Family::Flow);
  flow.family_in_file = true;
  apply_scheduler_config(flow, parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift": 3.0})"));
  EXPECT_EQ(flow.schedule.betas, Schedule::cosine(100).betas);
  EXPECT_TRUE(flow.warnings.empty());
  DiffusionModel mix;
  mix.mixture = GaussianMixture{};
  mix.schedule = Schedule::linear(1000);
  mix.family = family_of(Family::Edm);
  apply_scheduler_config(mix, parse(R"({"_class_name": "EDMEulerScheduler"})"));
  EXPECT_EQ(mix.schedule.betas, Schedule::linear(1000).betas);
  DiffusionModel eps = mix;
  eps.family = family_of(Family::Epsilon);
  const std::string msg = invalid_input_message(
      [&] { apply_scheduler_config(eps, parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler"})")); });
  EXPECT_NE(msg.find("does not go with the model's family epsilon"), std::string::npos) << msg;
}

// Written -> read -> the same list (config_family_levels) and the same family, per family and list kind; what is
// written is what diffusers reads (class, keys).
TEST(SchedulerConfigFamily, RoundTripPerFamily) {
  struct Case {
    std::string config;  // the list, as a config
    Sampler sampler;
    const char* written_class;
    std::optional<double> mu;
  };
  const std::vector<Case> cases = {
      {R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift": 3.0})", Sampler::FlowEuler, "FlowMatchEulerDiscreteScheduler", {}},
      {R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift": 3.0})", Sampler::FlowHeun, "FlowMatchHeunDiscreteScheduler", {}},
      {R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift": 1.73, "num_train_timesteps": 500})", Sampler::Dpmpp2m, "FlowMatchEulerDiscreteScheduler", {}},
      {R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift": 3.0, "shift_terminal": 0.1})", Sampler::FlowEuler, "FlowMatchEulerDiscreteScheduler", {}},
      {R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "use_dynamic_shifting": true})", Sampler::FlowEuler, "FlowMatchEulerDiscreteScheduler", 1.15},
      {R"({"_class_name": "DPMSolverMultistepScheduler", "prediction_type": "flow_prediction", "use_flow_sigmas": true, "flow_shift": 5.0})", Sampler::Dpmpp2mSde, "DPMSolverMultistepScheduler", {}},
      {R"({"_class_name": "UniPCMultistepScheduler", "prediction_type": "flow_prediction", "use_flow_sigmas": true, "use_dynamic_shifting": true})", Sampler::Dpmpp2m, "DPMSolverMultistepScheduler", 0.8},
      {R"({"_class_name": "EDMEulerScheduler"})", Sampler::FlowEuler, "EDMEulerScheduler", {}},
      {R"({"_class_name": "EDMEulerScheduler", "sigma_schedule": "exponential", "sigma_min": 0.01, "sigma_max": 40, "final_sigmas_type": "sigma_min"})", Sampler::Ddim, "EDMEulerScheduler", {}},
      {R"({"_class_name": "EDMEulerScheduler", "rho": 3.5, "sigma_data": 1.0, "prediction_type": "v_prediction"})", Sampler::Dpmpp2m, "EDMDPMSolverMultistepScheduler", {}},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.config + " " + sampler_name(k.sampler));
    const SchedulerConfig list = parse(k.config);
    FamilyParams p = family_of(*list.prediction_type);
    if (list.edm) p.sigma_data = list.edm->sigma_data, p.edm_v = list.edm_v_prediction;
    if (list.flow_match) p.T = list.flow_match->T;
    const std::string text = family_scheduler_config_json(p, k.sampler, list, k.mu);
    EXPECT_EQ(json::parse(text)["_class_name"], k.written_class) << text;
    const SchedulerConfig back = parse(text);
    EXPECT_EQ(back.prediction_type, p.family);
    check_config_family(back, p, true);
    // A dynamic shift of use_flow_sigmas is written as its value e^mu: the list needs no mu any more.
    const std::optional<double> mu = config_uses_flow_mu(back) ? k.mu : std::nullopt;
    for (int n : {2, 9, 50}) expect_same_list(config_family_levels(back, n, mu), config_family_levels(list, n, k.mu));
    if (!list.flow_match || list.flow_match->shift_terminal == 0)
      expect_same_list(config_family_levels(back, 1, mu), config_family_levels(list, 1, k.mu));
  }
  // One step with shift_terminal: diffusers' stretch_shift_to_terminal divides 1 - s_last = 0 by itself (NaN).
  const std::string msg = invalid_input_message([&] {
    config_family_levels(parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift_terminal": 0.1})"), 1, {});
  });
  EXPECT_NE(msg.find("its noise-level list for 1 steps has level 0 = "), std::string::npos) << msg;
  // VP families through the VP writer with their prediction_type.
  for (Family f : {Family::Epsilon, Family::Sample, Family::VPrediction}) {
    const SchedulerConfig back = parse(scheduler_config_json(Schedule::linear(1000), Sampler::FlowEuler, Spacing::Trailing, 0, f));
    EXPECT_EQ(back.prediction_type, f);
    EXPECT_EQ(back.class_name, "DDIMScheduler");  // flow-euler's step on VP levels is ddim's
    EXPECT_EQ(back.spacing, Spacing::Trailing);
  }
}

// What cannot be written is refused: a family whose list the config does not hold, flow-heun on a list
// FlowMatchHeun cannot compute, a dynamic list without mu, a VP writer for flow or edm, flow-heun on VP levels.
TEST(SchedulerConfigFamily, WriteRefusals) {
  const SchedulerConfig fm = parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift_terminal": 0.2})");
  const SchedulerConfig dyn = parse(R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "use_dynamic_shifting": true})");
  const std::vector<std::pair<std::function<void()>, const char*>> cases = {
      {[&] { family_scheduler_config_json(family_of(Family::Edm), Sampler::FlowEuler, fm, {}); }, "the flow family's; the model's family is edm"},
      {[&] { family_scheduler_config_json(family_of(Family::Flow), Sampler::FlowHeun, fm, {}); }, "FlowMatchHeunDiscreteScheduler has neither"},
      {[&] { family_scheduler_config_json(family_of(Family::Flow), Sampler::FlowEuler, dyn, {}); }, "needs flow_mu"},
      {[&] { family_scheduler_config_json(family_of(Family::Flow), Sampler::FlowEuler, parse("{\"clip_sample\": false}"), {}); }, "no noise-level list"},
      {[&] { scheduler_config_json(Schedule::linear(1000), Sampler::Ddim, Spacing::Leading, 0, Family::Flow); }, "prediction_type flow has no VP scheduler config"},
      {[&] { scheduler_config_json(Schedule::linear(1000), Sampler::FlowHeun, Spacing::Leading, 0); }, "flow-heun runs flow models only"},
  };
  for (const auto& [f, part] : cases) {
    const std::string msg = invalid_input_message(f);
    EXPECT_NE(msg.find(part), std::string::npos) << msg;
  }
}

}  // namespace
}  // namespace diffscope
