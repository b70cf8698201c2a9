// test_scheduler_config_cli.cpp — `sample --scheduler-config` / `--write-scheduler-config` (SEMANTICS §3): a
// config's spacing gives the same run as the flag, flags override it, an analytic model takes its schedule,
// bad files exit 2 naming the key with nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "formats/npy.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

std::string exact_model() { return test::repo_root() + "/assets/models/gaussians8-exact.safetensors"; }

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<float> run(const test::TempDir& dir, const std::string& extra, const std::string& out) {
  const guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + exact_model() +
                                                 "' --sampler dpmpp-2m --steps 6 --n 16 --seed 3 --out '" +
                                                 dir.file(out) + "' " + extra,
                                             dir.path());
  EXPECT_EQ(r.code, 0) << r.err;
  return r.code == 0 ? read_npy_float(dir.file(out), "out").data : std::vector<float>{};
}

TEST(SchedulerConfigCli, SpacingFromTheConfigAndFlagsOverrideIt) {
  if (!std::filesystem::exists(exact_model())) GTEST_SKIP() << "no " << exact_model();
  test::TempDir dir;
  write_text(dir.file("trailing.json"), R"({"timestep_spacing": "trailing", "beta_schedule": "linear", "clip_sample": false})");
  const std::vector<float> by_flag = run(dir, "--spacing trailing", "a.npy");
  const std::vector<float> by_config = run(dir, "--scheduler-config '" + dir.file("trailing.json") + "'", "b.npy");
  ASSERT_FALSE(by_flag.empty());
  EXPECT_EQ(by_flag, by_config);
  const std::vector<float> linspace = run(dir, "--spacing linspace", "c.npy");
  EXPECT_NE(linspace, by_flag);
  EXPECT_EQ(run(dir, "--scheduler-config '" + dir.file("trailing.json") + "' --spacing linspace", "d.npy"), linspace);

  // The analytic model takes the config's schedule: another run, and the written config names it.
  write_text(dir.file("cos.json"), R"({"timestep_spacing": "trailing", "beta_schedule": "squaredcos_cap_v2", "clip_sample": false})");
  const std::vector<float> cosine = run(dir, "--scheduler-config '" + dir.file("cos.json") + "' --write-scheduler-config '" +
                                             dir.file("out.json") + "'",
                                        "e.npy");
  EXPECT_NE(cosine, by_flag);
  const std::string written = guitest::slurp(dir.file("out.json"));
  EXPECT_NE(written.find("\"squaredcos_cap_v2\""), std::string::npos) << written;
  EXPECT_NE(written.find("\"trailing\""), std::string::npos) << written;
  EXPECT_EQ(run(dir, "--scheduler-config '" + dir.file("out.json") + "'", "f.npy"), cosine);  // read back: same run
}

TEST(SchedulerConfigCli, BadConfigExitsTwoWritingNothing) {
  if (!std::filesystem::exists(exact_model())) GTEST_SKIP() << "no " << exact_model();
  test::TempDir dir;
  write_text(dir.file("v.json"), R"({"prediction_type": "v_prediction", "clip_sample": false})");
  const std::string base = "sample --backend cpu --model '" + exact_model() + "' --steps 4 --n 4 --out '" +
                           dir.file("x.npy") + "' ";
  guitest::Result r = guitest::run_cli(base + "--scheduler-config '" + dir.file("v.json") + "'", dir.path());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("prediction_type = v_prediction (its prediction_type) does not go with the model's family "
                       "epsilon"), std::string::npos) << r.err;
  // The default spacing has no diffusers name. From t_start 5 in 3 steps it visits round(5 * (2 - i) / 2) with
  // ties away from zero: 5, 3, 0; diffusers' linspace(0, 5, 3) rounds 2.5 half to even: 5, 2, 0. Refused before
  // anything is written, saying what to pass.
  r = guitest::run_cli("sample --backend cpu --model '" + exact_model() + "' --t-start 5 --steps 3 --n 4 --out '" +
                           dir.file("x.npy") + "' --write-scheduler-config '" + dir.file("c.json") + "'", dir.path());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("valid: pass --spacing linspace, leading, trailing or karras"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.npy")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("c.json")));
}

// The flow-config report: a flow-matching config ran ddim on the leading spacing with exit 0, its shift "ignored".
// Its family (flow, v_prediction) must be the model's: on an epsilon model it is refused before anything is
// written; a key that changes the maths on a class that does not read it is refused naming the key and the value,
// and so is a DDIM config that leaves clip_sample at DDIMScheduler's default, true.
TEST(SchedulerConfigCli, ConfigsThatChangeTheMathsExitTwo) {
  test::TempDir dir;
  const std::string base = "sample --backend cpu --model '" + guitest::model_2d() + "' --n 8 --steps 5 --out '" +
                           dir.file("x.npy") + "' --scheduler-config ";
  const std::vector<std::pair<std::string, std::string>> files = {
      {"flow_match_euler_shift3.json", "prediction_type = flow (_class_name FlowMatchEulerDiscreteScheduler) does not "
                                       "go with the model's family epsilon"},
      {"dpm_flow_sigmas.json", "prediction_type = flow (prediction_type flow_prediction with use_flow_sigmas) does not "
                               "go with the model's family epsilon"},
      {"ddim_v_ztsnr.json", "'clip_sample' is missing, and DDIMScheduler's default is true"}};
  for (const auto& [name, part] : files) {
    const guitest::Result r = guitest::run_cli(base + "'" + test::data_path("reported/flow-config/" + name) + "'", dir.path());
    EXPECT_EQ(r.code, 2) << name;
    EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("ignored"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("x.npy")));
  }
  write_text(dir.file("shift.json"), R"({"_class_name": "EulerDiscreteScheduler", "shift": 3.0})");
  write_text(dir.file("ddim.json"), R"({"_class_name": "DDIMScheduler", "beta_schedule": "linear"})");
  guitest::Result r = guitest::run_cli(base + "'" + dir.file("shift.json") + "'", dir.path());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'shift' = 3.0"), std::string::npos) << r.err;
  r = guitest::run_cli(base + "'" + dir.file("ddim.json") + "'", dir.path());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'clip_sample' is missing, and DDIMScheduler's default is true"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.npy")));
}

// A config written for dpmpp-2m read back with the default sampler ran ddim without a word: a note says which
// sampler runs and which the config names; with the sampler it names, nothing is said.
TEST(SchedulerConfigCli, ConfigNamingAnotherSamplerIsNoted) {
  test::TempDir dir;
  const std::string base = "sample --backend cpu --model '" + guitest::model_2d() + "' --n 8 --steps 5 --spacing leading ";
  guitest::Result r = guitest::run_cli(base + "--sampler dpmpp-2m --out '" + dir.file("a.npy") +
                                           "' --write-scheduler-config '" + dir.file("c.json") + "'", dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  r = guitest::run_cli(base + "--out '" + dir.file("b.npy") + "' --scheduler-config '" + dir.file("c.json") + "'", dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("note: " + dir.file("c.json") + " names DPMSolverMultistepScheduler (algorithm_type dpmsolver++, "
                       "solver_order 2), diffscope's dpmpp-2m; the sampler that runs is ddim"), std::string::npos) << r.err;
  r = guitest::run_cli(base + "--sampler dpmpp-2m --out '" + dir.file("b.npy") + "' --scheduler-config '" +
                           dir.file("c.json") + "'", dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("the sampler that runs"), std::string::npos) << r.err;
  EXPECT_EQ(read_npy_float(dir.file("a.npy"), "a").data, read_npy_float(dir.file("b.npy"), "b").data);
}

// The obvious first try, --write-scheduler-config with the default spacing, works when the run's step list is
// linspace's: from t_start 999 in 4 steps both visit 999, 666, 333, 0 (999 * k / 3 is an integer: no tie). The
// config says linspace and runs the same samples back.
TEST(SchedulerConfigCli, DefaultSpacingIsWrittenAsLinspaceWhenTheListsAgree) {
  if (!std::filesystem::exists(exact_model())) GTEST_SKIP() << "no " << exact_model();
  test::TempDir dir;
  const std::string base = "sample --backend cpu --model '" + exact_model() + "' --steps 4 --n 8 --seed 2 ";
  guitest::Result r = guitest::run_cli(base + "--out '" + dir.file("a.npy") + "' --write-scheduler-config '" +
                                           dir.file("c.json") + "'", dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("written as timestep_spacing linspace"), std::string::npos) << r.err;
  const auto j = nlohmann::json::parse(guitest::slurp(dir.file("c.json")));
  EXPECT_EQ(j["timestep_spacing"], "linspace");
  EXPECT_EQ(j["use_karras_sigmas"], false);
  r = guitest::run_cli(base + "--out '" + dir.file("b.npy") + "' --scheduler-config '" + dir.file("c.json") + "'", dir.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_npy_float(dir.file("a.npy"), "a").data, read_npy_float(dir.file("b.npy"), "b").data);
}

// Options this solver or spacing does not use get a one-line note (they used to be dropped silently).
TEST(SchedulerConfigCli, IgnoredOptionsAreNoted) {
  if (!std::filesystem::exists(exact_model())) GTEST_SKIP() << "no " << exact_model();
  test::TempDir dir;
  const std::string base = "sample --backend cpu --model '" + exact_model() + "' --steps 4 --n 4 --out '" + dir.file("x.npy") + "' ";
  guitest::Result r = guitest::run_cli(base + "--sampler heun --eta 0.5", dir.path());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("note: --eta has no effect with --sampler heun"), std::string::npos) << r.err;
  r = guitest::run_cli(base + "--sampler ddim --eta 0.5 --steps-offset 1", dir.path());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("--eta has no effect"), std::string::npos) << r.err;  // ddim takes eta
  EXPECT_NE(r.err.find("note: --steps-offset has no effect with --spacing default"), std::string::npos) << r.err;
  r = guitest::run_cli(base + "--spacing leading --steps-offset 1", dir.path());
  EXPECT_EQ(r.err.find("--steps-offset has no effect"), std::string::npos) << r.err;
  write_text(dir.file("k.json"), R"({"use_karras_sigmas": true, "beta_schedule": "linear", "clip_sample": false})");
  r = guitest::run_cli(base + "--sampler ddpm --scheduler-config '" + dir.file("k.json") + "'", dir.path());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("use_karras_sigmas) has no effect with --sampler ddpm"), std::string::npos) << r.err;
}

// Picture and video flags (and the trajectory stride) given without their output get a note too (a newcomer trial:
// they were dropped silently).
TEST(SchedulerConfigCli, OutputFlagsWithoutTheirOutputAreNoted) {
  if (!std::filesystem::exists(exact_model())) GTEST_SKIP() << "no " << exact_model();
  test::TempDir dir;
  const std::string base = "sample --backend cpu --model '" + exact_model() + "' --steps 4 --n 4 --out '" + dir.file("x.npy") + "' ";
  guitest::Result r = guitest::run_cli(base + "--fps 10 --trajectory-stride 2", dir.path());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("note: --fps has no effect without --video\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("note: --trajectory-stride has no effect without --trajectory or --video or --png or --svg or --pdf\n"),
            std::string::npos)
      << r.err;
  r = guitest::run_cli(base + "--trajectory '" + dir.file("t.npy") + "' --trajectory-stride 2", dir.path());
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("has no effect"), std::string::npos) << r.err;
#ifdef DIFFSCOPE_HAVE_GUI
  r = guitest::run_cli(base + "--size 64x64 --frame 1", dir.path());
  EXPECT_NE(r.err.find("note: --size has no effect without --png or --video or --svg or --pdf\n"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--frame has no effect"), std::string::npos) << r.err;  // --out holds frame 1's state
  // The picture is drawn through EGL: Mesa's dlopen'ed driver leaks in the ASan build (no leak report asked).
  r = guitest::run_cli(base + "--png '" + dir.file("p.png") + "' --size 64x64 --frame 1", dir.path(),
                       "ASAN_OPTIONS=detect_leaks=0");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("has no effect"), std::string::npos) << r.err;
#endif
}

}  // namespace
}  // namespace diffscope
