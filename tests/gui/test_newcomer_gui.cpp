// test_newcomer_gui.cpp — session 5's newcomer trial, the GUI's items, through the headless app (EGL, CPU
// backend): a run that overflows is shown as failed (not "100 / 100 steps") and pictures of its non-finite
// frames are refused like its .npy exports; a saved model that no longer loads falls back to the default with a
// message; a corrupt settings.json is kept as settings.json.bad; `--screenshot q.jpg` writes JPEG, not PNG bytes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

struct NewcomerGui : ::testing::Test {
  test::TempDir dir, logs;
  std::string script(const std::string& text) {
    std::ofstream(dir.file("s.txt")) << text;
    return dir.file("s.txt");
  }
};

// The model of test::write_overflowing_model (io_test_util.h): eps = 0 for t >= 51, inf for t <= 50. ddim from
// t_start 99 in 100 steps visits t = 99 - k at step k, so frame 50 (after the step from t = 50) is the first
// with samples that are not finite. Before: "100 / 100 steps", complete, and the snapshot written.
TEST_F(NewcomerGui, OverflowingRunStopsWithAnErrorAndItsPicturesAreRefused) {
  const std::string model = test::write_overflowing_model(dir.file("overflow.safetensors"));
  const guitest::Result r = guitest::run_cli(
      "gui --headless --backend cpu --no-persist --size 640x400 --n 64 --t-start 99 --steps 100 --model '" + model +
          "' --script '" +
          script("wait_complete 500\nexpect computed == 50\nexpect complete == 0\nprint\n"
                 "export snapshot " + dir.file("a.png") + "\nexport state " + dir.file("a.npy") +
                 "\nkey Left\nexpect frame == 49\nexport snapshot " + dir.file("b.png") + "\nexport state " +
                 dir.file("b.npy") + "\n") +
          "'",
      logs.path());
  EXPECT_EQ(r.code, 2) << r.out << r.err;  // the failed wait_complete and exports
  EXPECT_TRUE(has(r.out, "wait_complete: failed: samples overflowed at step "
                         "50 of 100 (from t = 50): sample 0, coordinate 0 = "))
      << r.out;
  EXPECT_TRUE(has(r.out, "Try a lower t_start, another sampler, or check the model")) << r.out;
  EXPECT_FALSE(has(r.out, "expect computed")) << r.out;  // a failed expect prints its line
  EXPECT_FALSE(has(r.out, "expect complete")) << r.out;
  EXPECT_FALSE(has(r.out, "expect frame")) << r.out;
  EXPECT_TRUE(has(r.out, "export snapshot: error: frame 50 holds samples that are not finite; nothing was written"))
      << r.out;
  EXPECT_TRUE(has(r.out, "export state: error: export " + dir.file("a.npy") + ": row 0, column 0 = ")) << r.out;
  EXPECT_FALSE(fs::exists(dir.file("a.png")));
  EXPECT_FALSE(fs::exists(dir.file("a.npy")));
  // The frame before it is finite: its pictures and state are written.
  EXPECT_TRUE(fs::exists(dir.file("b.png"))) << r.out;
  EXPECT_TRUE(fs::exists(dir.file("b.npy"))) << r.out;
}

// A truncated model named by settings.json: the window used to open with no model ("(none)", steps 0).
TEST_F(NewcomerGui, SavedModelThatDoesNotLoadFallsBackToTheDefault) {
  const std::string cfg = dir.file("cfg"), bad = dir.file("truncated.safetensors");
  fs::create_directories(cfg);
  const std::string whole = guitest::slurp(test::repo_root() + "/assets/models/moons.safetensors");
  ASSERT_GT(whole.size(), 100u);
  test::write_bytes(bad, whole.substr(0, 100));
  std::ofstream(cfg + "/settings.json") << nlohmann::json({{"sampling", {{"model_path", bad}}}}).dump();
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg +
                                                 "' --script '" + script("frames 3\nexpect steps == 100\n") + "'",
                                             logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "model: model " + bad + " from the settings could not be loaded: ")) << r.err;
  EXPECT_TRUE(has(r.err, "(showing the default model instead)")) << r.err;
}

// A corrupt settings.json used to be replaced by the defaults at exit with no copy left.
TEST_F(NewcomerGui, CorruptSettingsFileIsKeptAsBad) {
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

// `--screenshot q.jpg` used to write PNG bytes. JPEG files start with the SOI marker FF D8 and a marker FF
// (ITU T.81 B.1.1.2); PNG's signature is 89 50 4E 47.
TEST_F(NewcomerGui, ScreenshotFormatFollowsTheName) {
  const std::string base = "gui --headless --backend cpu --no-persist --size 320x240 --n 32 --steps 5 --model '" +
                           guitest::model_2d() + "' --screenshot '";
  for (const char* name : {"q.jpg", "q.JPEG"}) {
    const guitest::Result r = guitest::run_cli(base + dir.file(name) + "'", logs.path());
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    const std::string bytes = guitest::slurp(dir.file(name));
    ASSERT_GE(bytes.size(), 3u) << name;
    EXPECT_EQ(bytes.substr(0, 3), "\xFF\xD8\xFF") << name;
    int w = 0, h = 0, ch = 0;
    unsigned char* px = stbi_load(dir.file(name).c_str(), &w, &h, &ch, 3);
    ASSERT_NE(px, nullptr) << name;
    stbi_image_free(px);
    EXPECT_EQ(w, 320);
    EXPECT_EQ(h, 240);
  }
  const guitest::Result png = guitest::run_cli(base + dir.file("q.png") + "'", logs.path());
  ASSERT_EQ(png.code, 0) << png.out << png.err;
  EXPECT_EQ(guitest::slurp(dir.file("q.png")).substr(0, 4), "\x89PNG");
  // The same picture (the runs are deterministic; only the fps text differs): JPEG at quality 92 is within a few
  // levels on average, where swapped channels or rows would be tens of levels off on the blue panels.
  const guitest::Png a = guitest::read_png(dir.file("q.png"));
  int w = 0, h = 0, ch = 0;
  unsigned char* j = stbi_load(dir.file("q.jpg").c_str(), &w, &h, &ch, 3);
  ASSERT_NE(j, nullptr);
  ASSERT_EQ(size_t(w) * h * 3, a.rgb.size());
  double diff = 0;
  for (size_t i = 0; i < a.rgb.size(); ++i) diff += std::abs(int(a.rgb[i]) - int(j[i]));
  stbi_image_free(j);
  EXPECT_LT(diff / a.rgb.size(), 4.0);
  const guitest::Result gif = guitest::run_cli(base + dir.file("q.gif") + "'", logs.path());
  EXPECT_EQ(gif.code, 2) << gif.out << gif.err;
  EXPECT_TRUE(has(gif.err, "--screenshot " + dir.file("q.gif") + ": unknown image type '.gif'; valid: .png, .jpg, .jpeg"))
      << gif.err;
  EXPECT_FALSE(fs::exists(dir.file("q.gif")));
}

}  // namespace
}  // namespace diffscope
