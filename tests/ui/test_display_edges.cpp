// test_display_edges.cpp — the app's display at its edges, headless: a window minimised to 0x0 (and 0xH, Wx0,
// 1x1) for many frames has no GL error and exports at the export's own size; `--screenshot` writes the format its
// name asks for (PNG or JPEG) and refuses others.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gui_test_util.h"
#include <stb_image.h>

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using guitest::Result;

class DisplayEdges : public guitest::AppFixture {};

const std::string kModel = guitest::model_2d();

TEST_F(DisplayEdges, MinimisedWindowHasNoGlErrors) {
  const std::string d = dir.path();
  const Result r = run_gui("set n 300\nset steps 30\nset t_start 400\nset field 1\nset trail 8\nframes 2\n"
                           "size 0 0\nframes 30\nexpect gl_errors == 0\n"
                           "set steps 20\nkey Space\nkey Right\nframes 10\n"
                           "export snapshot " + d + "/min.png\n"
                           "size 0 480\nframes 5\nsize 640 0\nframes 5\nsize 1 1\nframes 5\n"
                           "model digits8x8\nsize 0 0\nframes 10\nsize 1 1\nframes 3\n"
                           "expect gl_errors == 0\n"
                           "size 640 480\nwait_complete 20000\nexpect gl_errors == 0\nprint\n",
                           "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("GL error"), std::string::npos) << r.err;
  // The export made while minimised renders at its own size.
  const guitest::Png png = guitest::read_png(d + "/min.png");
  EXPECT_EQ(png.w, 1024);
  EXPECT_GT(png.non_background(), 0.0005);
}

// Found by a newcomer trial.
// `--screenshot q.jpg` used to write PNG bytes. JPEG files start with the SOI marker FF D8 and a marker FF
// (ITU T.81 B.1.1.2); PNG's signature is 89 50 4E 47.
TEST_F(DisplayEdges, ScreenshotFormatFollowsTheName) {
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
