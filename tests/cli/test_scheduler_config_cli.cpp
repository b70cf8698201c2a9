// test_scheduler_config_cli.cpp — `sample --scheduler-config` / `--write-scheduler-config` (SEMANTICS §3): a
// config's spacing gives the same run as the flag, flags override it, an analytic model takes its schedule,
// bad files exit 2 naming the key with nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "../gui/gui_test_util.h"
#include "core/npy.h"

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
  write_text(dir.file("trailing.json"), R"({"timestep_spacing": "trailing", "beta_schedule": "linear"})");
  const std::vector<float> by_flag = run(dir, "--spacing trailing", "a.npy");
  const std::vector<float> by_config = run(dir, "--scheduler-config '" + dir.file("trailing.json") + "'", "b.npy");
  ASSERT_FALSE(by_flag.empty());
  EXPECT_EQ(by_flag, by_config);
  const std::vector<float> linspace = run(dir, "--spacing linspace", "c.npy");
  EXPECT_NE(linspace, by_flag);
  EXPECT_EQ(run(dir, "--scheduler-config '" + dir.file("trailing.json") + "' --spacing linspace", "d.npy"), linspace);

  // The analytic model takes the config's schedule: another run, and the written config names it.
  write_text(dir.file("cos.json"), R"({"timestep_spacing": "trailing", "beta_schedule": "squaredcos_cap_v2"})");
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
  write_text(dir.file("v.json"), R"({"prediction_type": "v_prediction"})");
  const std::string base = "sample --backend cpu --model '" + exact_model() + "' --steps 4 --n 4 --out '" +
                           dir.file("x.npy") + "' ";
  guitest::Result r = guitest::run_cli(base + "--scheduler-config '" + dir.file("v.json") + "'", dir.path());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("'prediction_type' = \"v_prediction\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("epsilon"), std::string::npos) << r.err;
  // The default spacing has no diffusers name: refused before anything is written.
  r = guitest::run_cli(base + "--write-scheduler-config '" + dir.file("c.json") + "'", dir.path());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--spacing = default"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("x.npy")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("c.json")));
}

}  // namespace
}  // namespace diffscope
