// test_reported_gui.cpp — issue 11 cases that need the headless app or the PNG renderer (EGL): the reported
// settings file with cam_x = 1e16 (the app used to stall ~65 s in the axis-grid loop and exit 3 at every
// start), a model path that is not UTF-8 (the settings autosave used to kill the app; `sample --png` used to
// exit 1 after writing the .npy and .png), and an export whose sidecar would overwrite it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "formats/json_path.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

struct ReportedGui : ::testing::Test {
  test::TempDir dir, logs;
  std::string script(const std::string& text) {
    std::ofstream(dir.file("s.txt")) << text;
    return dir.file("s.txt");
  }
};

TEST_F(ReportedGui, CameraFarAwayInSettingsStartsAndIsClamped) {
  const std::string cfg = dir.file("cfg");
  fs::create_directories(cfg);
  fs::copy_file(test::data_path("reported/settings-range/settings.json"), cfg + "/settings.json");
  const auto t0 = std::chrono::steady_clock::now();
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg +
                                                 "' --model '" + guitest::model_2d() + "' --script '" +
                                                 script("frames 3\nexpect gl_errors == 0\n") + "'",
                                             logs.path());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_LT(s, 30.0);
  EXPECT_NE(r.err.find("view.cam_x = 1e+16 clamped to 100000"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(guitest::slurp(cfg + "/settings.json"));
  EXPECT_LE(std::abs(j["view"]["cam_x"].get<double>()), 1e5);
}

TEST_F(ReportedGui, NonUtf8ModelPathPersistsLosslessly) {
  const std::string model = dir.file("mo\xE9ns.safetensors"), cfg = dir.file("cfg");
  fs::copy_file(guitest::model_2d(), model);
  guitest::Result r = guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg +
                                           "' --model '" + model + "' --script '" + script("frames 3\n") + "'",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(guitest::slurp(cfg + "/settings.json"));
  std::string back;
  ASSERT_TRUE(get_path(j["sampling"], "model_path", &back)) << j.dump();
  EXPECT_EQ(back, model);
  // A restart without --model restores that file and runs it.
  r = guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg + "' --script '" +
                           script("frames 3\nexpect steps >= 1\n") + "'",
                       logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(ReportedGui, SamplePngSidecarTakesAnyFileName) {
  const std::string model = dir.file("mo\xE9ns.safetensors");
  fs::copy_file(guitest::model_2d(), model);
  const std::string png = dir.file("p\xE9.png");
  const guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + model +
                                                 "' --n 50 --steps 5 --t-start 200 --out '" + dir.file("x.npy") +
                                                 "' --png '" + png + "' --size 64x48",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(guitest::slurp(dir.file("p\xE9.json")));
  std::string back;
  ASSERT_TRUE(get_path(j["model"], "file", &back));
  EXPECT_EQ(back, model);
  ASSERT_TRUE(get_path(j, "png", &back));
  EXPECT_EQ(back, "p\xE9.png");
  EXPECT_EQ(j["model"]["file"].get<std::string>(), dir.path() + "/mo\\xE9ns.safetensors");
}

// schedule-underflow in the GUI: the session clamps t_start below the first t whose sigma leaves float32
// (t = 25 for 120 betas of 0.999: abar[25] = 1e-78 < 1 / FLT_MAX^2) and runs there, finitely, instead of
// showing all-NaN samples.
TEST_F(ReportedGui, UnderflowingScheduleRunsBelowTheFirstUnusableT) {
  const guitest::Result r = guitest::run_cli(
      "gui --headless --backend cpu --size 320x240 --n 32 --no-persist --model '" +
          test::data_path("reported/schedule-underflow/underflow_betas.safetensors") + "' --script '" +
          script("frames 40\nexpect t_start == 24\nexpect computed >= 1\nexport state " + dir.file("s.npy") + "\n") +
          "'",
      logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("export state: " + dir.file("s.npy")), std::string::npos) << r.out;  // finite, so written
}

TEST_F(ReportedGui, ExportWhoseSidecarIsItselfIsRefused) {
  const guitest::Result r = guitest::run_cli(
      "gui --headless --backend cpu --size 320x240 --n 32 --no-persist --model '" + guitest::model_2d() +
          "' --script '" + script("frames 3\nexport state " + dir.file("s.json") + "\nexport snapshot " +
                                  dir.file("p.json") + "\n") + "'",
      logs.path());
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("2 commands failed, the first: script:2: export state: export '"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("export state: error: export '" + dir.file("s.json") + "' and its sidecar"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("export snapshot: error:"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir.file("s.json")));
  EXPECT_FALSE(fs::exists(dir.file("p.json")));
}

}  // namespace
}  // namespace diffscope
