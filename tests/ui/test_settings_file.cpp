// test_settings_file.cpp — the GUI's settings file as the app reads it (--config-dir): files that are not what
// we wrote (defaults with a note, a corrupt one kept as settings.json.bad), a camera far away (clamped, the app
// starts), a model path that is not UTF-8 (persisted losslessly).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/json_path.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using guitest::Result;

class SettingsFile : public guitest::AppFixture {};

const std::string kModel = guitest::model_2d();

TEST_F(SettingsFile, CorruptSettingsFilesFallBackWithANote) {
  struct Case {
    std::string name, bytes, note;
  };
  const std::vector<Case> cases = {
      {"empty", "", "corrupt"},
      {"binary", std::string("\x00\xff\xfe\x01garbage\x80", 12), "corrupt"},
      {"truncated", "{\"sampling\": {\"steps\": 33, \"t_st", "corrupt"},
      {"array", "[1, 2, 3]", "not a JSON object"},
      {"ill-typed", "{\"sampling\": {\"steps\": \"many\", \"n_samples\": [1]}}", "ill-typed field 'steps'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string cfg = file("cfg_" + c.name);
    fs::create_directories(cfg);
    std::ofstream(cfg + "/settings.json", std::ios::binary) << c.bytes;
    write("s.txt", "frames 2\nexpect steps == 100\nexpect t_start == 999\nset steps 7\nframes 1\n");
    const Result r = guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg +
                                          "' --model '" + kModel + "' --script '" + file("s.txt") + "'",
                                      logs.path());
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.err.find(c.note), std::string::npos) << r.err;
    // On exit the app writes a good file again, with what was set in this session.
    const nlohmann::json j = nlohmann::json::parse(guitest::slurp(cfg + "/settings.json"));
    EXPECT_EQ(j["sampling"]["steps"], 7) << j.dump();
  }
  // Out-of-range values in a well-formed file are clamped like typed ones.
  const std::string cfg = file("cfg_range");
  fs::create_directories(cfg);
  std::ofstream(cfg + "/settings.json") << "{\"sampling\": {\"t_start\": 123456, \"steps\": -3, \"eta\": 7}}";
  write("s.txt", "frames 1\nexpect t_start == 999\nexpect steps == 1\n");
  const Result r = guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg +
                                        "' --model '" + kModel + "' --script '" + file("s.txt") + "'",
                                    logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

// Found by a newcomer trial.
// A corrupt settings.json used to be replaced by the defaults at exit with no copy left.
TEST_F(SettingsFile, CorruptSettingsFileIsKeptAsBad) {
  const std::string cfg = dir.file("cfg"), corrupt = "{\"sampling\": {\"steps\": 12,";
  fs::create_directories(cfg);
  test::write_bytes(cfg + "/settings.json", corrupt);
  const guitest::Result r =
      guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg + "' --model '" +
                           guitest::model_2d() + "' --script '" + script("frames 3\n") + "'",
                       logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "is corrupt")) << r.err;
  EXPECT_TRUE(has(r.err, "the corrupt file is kept as " + cfg + "/settings.json.bad")) << r.err;
  EXPECT_EQ(guitest::slurp(cfg + "/settings.json.bad"), corrupt);
  EXPECT_NO_THROW(nlohmann::json::parse(guitest::slurp(cfg + "/settings.json")));  // the defaults, saved at exit
}

// Found by the public bug reports (tests/data/reported/).
TEST_F(SettingsFile, CameraFarAwayInSettingsStartsAndIsClamped) {
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

// Found by the public bug reports (tests/data/reported/).
TEST_F(SettingsFile, NonUtf8ModelPathPersistsLosslessly) {
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

}  // namespace
}  // namespace diffscope
