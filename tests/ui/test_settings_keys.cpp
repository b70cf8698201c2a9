// test_settings_keys.cpp — named settings refuse out-of-range values and unknown keys (SEMANTICS §3),
// and command-line values stay out of the settings file.
// Expected values are the ranges as documented in base/ranges.h and SEMANTICS §3, written out by hand.
#include <gtest/gtest.h>

#include "base/errors.h"
#include "session/backend_defaults.h"
#include "session/run_only.h"
#include "session/settings_keys.h"

namespace diffscope::ui {
namespace {

std::string refusal(const std::string& key, const std::string& value) {
  AppSettings s;
  try {
    apply_setting(s, key, value, "--set " + key);
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(SettingsKeys, InRangeValuesApply) {
  AppSettings s;
  apply_setting(s, "trail", "64");
  apply_setting(s, "speed", "0.1");
  apply_setting(s, "follow", "off");
  apply_setting(s, "n", "1000000");
  apply_setting(s, "seed", "18446744073709551615");
  EXPECT_EQ(s.view.trail_frames, 64);
  EXPECT_FLOAT_EQ(s.view.play_speed, 0.1f);
  EXPECT_FALSE(s.view.follow_newest);
  EXPECT_EQ(s.sampling.n_samples, 1000000);
  EXPECT_EQ(s.sampling.seed, 18446744073709551615ull);
}

TEST(SettingsKeys, OutOfRangeAndUnknownAreRefusedNamingTheRange) {
  EXPECT_NE(refusal("trail", "65").find("--set trail = 65 is out of range; valid: [0, 64]"), std::string::npos);
  EXPECT_NE(refusal("point_alpha", "0").find("[0.05, 1]"), std::string::npos);
  EXPECT_NE(refusal("steps", "-5").find("[1, t_start + 1]"), std::string::npos);
  EXPECT_NE(refusal("n", "0").find("[1, 1000000]"), std::string::npos);
  EXPECT_NE(refusal("eta", "nan").find("not a finite number"), std::string::npos);
  EXPECT_NE(refusal("steps", "12x").find("not an integer"), std::string::npos);
  EXPECT_NE(refusal("seed", "abc").find("not an integer"), std::string::npos);
  EXPECT_NE(refusal("seed", "18446744073709551616").find("out of range"), std::string::npos);
  EXPECT_NE(refusal("vsync", "yes").find("not a switch"), std::string::npos);
  const std::string unknown = refusal("foo", "1");
  EXPECT_NE(unknown.find("--set foo: unknown setting"), std::string::npos);
  EXPECT_NE(unknown.find("steps, t_start, n, sampler"), std::string::npos) << unknown;
}

TEST(SettingsKeys, ModelRangesDependOnTheScheduleAndTStart) {
  Schedule sch;
  sch.T = 1000;
  SamplingSettings s;
  s.t_start = 99, s.steps = 100;
  EXPECT_NO_THROW(check_model_ranges(s, sch, false, {{"steps", "--steps"}, {"t_start", "--t-start"}}));
  s.steps = 101;  // [1, t_start + 1] = [1, 100]
  try {
    check_model_ranges(s, sch, false, {{"steps", "--steps"}});
    ADD_FAILURE() << "steps 101 with t_start 99 accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("--steps = 101 is out of range; valid: [1, 100]"), std::string::npos);
  }
  EXPECT_NO_THROW(check_model_ranges(s, sch, false, {{"t_start", "--t-start"}}));  // steps not given: clamped later
  s.t_start = 1000;
  EXPECT_THROW(check_model_ranges(s, sch, false, {{"t_start", "--t-start"}}), InvalidInput);
}

TEST(RunOnlyValues, CommandLineValuesAreNotSavedUnlessChangedInTheUi) {
  const nlohmann::json saved = {{"sampling", {{"steps", 100}, {"n", 4096}, {"backend", "auto"}}}};
  const nlohmann::json applied = {{"sampling", {{"steps", 40}, {"n", 4096}, {"backend", "cpu"}}}};
  const RunOnlyValues r(saved, applied, false);
  // untouched in the UI: the saved values come back
  EXPECT_EQ(r.to_persist(applied), saved);
  // steps changed in the UI to 50: kept; n changed (not a command-line value): kept; backend still run-only
  const nlohmann::json now = {{"sampling", {{"steps", 50}, {"n", 64}, {"backend", "cpu"}}}};
  const nlohmann::json want = {{"sampling", {{"steps", 50}, {"n", 64}, {"backend", "auto"}}}};
  EXPECT_EQ(r.to_persist(now), want);
}

TEST(RunOnlyValues, AModelGivenOnTheCommandLineIsRunOnlyEvenWhenUnchanged) {
  const nlohmann::json saved = {{"sampling", {{"model_path", "/m/moons.safetensors"}}}};
  const RunOnlyValues r(saved, saved, true);
  EXPECT_EQ(r.to_persist(saved), saved);
  const nlohmann::json other = {{"sampling", {{"model_path", "/m/rings.safetensors"}}}};
  EXPECT_EQ(RunOnlyValues(saved, other, true).to_persist(other), saved);
}

TEST(BackendDefaults, CpuStartsLighterUnlessGivenOrChanged) {
  AppSettings s;
  s.sampling.n_samples = 65536;
  apply_cpu_defaults(s, false, false);
  EXPECT_EQ(s.sampling.n_samples, kCpuSamples);
  EXPECT_EQ(s.view.trail_frames, kCpuTrailFrames);
  AppSettings fresh;  // the defaults themselves
  apply_cpu_defaults(fresh, false, false);
  EXPECT_EQ(fresh.sampling.n_samples, kCpuSamples);
  AppSettings chosen;
  chosen.sampling.n_samples = 2000;  // the user's choice
  apply_cpu_defaults(chosen, false, false);
  EXPECT_EQ(chosen.sampling.n_samples, 2000);
  AppSettings given;
  given.sampling.n_samples = 65536;
  apply_cpu_defaults(given, true, true);
  EXPECT_EQ(given.sampling.n_samples, 65536);
  EXPECT_EQ(given.view.trail_frames, ViewSettings{}.trail_frames);
  AppSettings changed;
  changed.view.trail_frames = 20;  // the user's choice
  apply_cpu_defaults(changed, false, false);
  EXPECT_EQ(changed.view.trail_frames, 20);
}

}  // namespace
}  // namespace diffscope::ui
