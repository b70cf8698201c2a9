// test_frame_loop.cpp — the one frame loop and its Display, in this process (Mesa EGL, CPU
// backend): a start that throws after the ImGui and GL setup (a mistyped --model: exit 2) still tears all of it
// down, so ImGui has no context afterwards and a second run in the same process works; the headless display
// keeps a 1 x 1 target for a 0 x 0 (minimised) frame.
#include <gtest/gtest.h>
#include <imgui.h>

#include <fstream>

#include "base/errors.h"
#include "io_test_util.h"
#include "render/egl_display.h"
#include "shell/run.h"

namespace diffscope {
namespace {

shell::AppOptions cpu_options(const std::string& config_dir) {
  shell::AppOptions o;
  o.backend = "cpu";
  o.headless = true;
  o.persist = false;
  o.config_dir = config_dir;
  return o;
}

TEST(FrameLoop, TeardownRunsWhenStartupThrowsAndTheNextRunWorks) {
  test::TempDir dir;
  shell::AppOptions bad = cpu_options(dir.path());
  bad.model = "no_such_model";
  shell::HeadlessOptions h;
  h.width = 64, h.height = 48;
  try {
    shell::run_headless(bad, h);
    FAIL() << "a mistyped --model started";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_model"), std::string::npos) << e.what();
  } catch (const ResourceUnavailable& e) {
    FAIL() << "no headless GL context: " << e.what();  // CI has Mesa: this must work there
  }
  EXPECT_EQ(ImGui::GetCurrentContext(), nullptr) << "ImGui's context outlived the failed start";

  std::ofstream(dir.file("s.txt")) << "set n 50\nset steps 5\nwait_complete 500\nexpect complete == 1\nexpect steps == 5\n";
  h.script = dir.file("s.txt");
  h.screenshot = dir.file("shot.png");
  EXPECT_TRUE(shell::run_headless(cpu_options(dir.path()), h).ok());
  EXPECT_EQ(ImGui::GetCurrentContext(), nullptr);
  std::ifstream png(h.screenshot, std::ios::binary);
  char sig[8] = {};
  png.read(sig, 8);
  EXPECT_EQ(std::string(sig + 1, 3), "PNG") << "the screenshot was written";
}

TEST(FrameLoop, HeadlessDisplayKeepsAOnePixelTargetForAnEmptyFrame) {
  render::EglDisplay d;
  d.set_size(0, 0);
  EXPECT_EQ(d.size().w, 0);
  EXPECT_EQ(d.size().h, 0);
  const render::Pixels px = d.read_rgba();
  EXPECT_EQ(px.w, 1);
  EXPECT_EQ(px.h, 1);
  EXPECT_EQ(px.rgba.size(), 4u);
  d.set_size(7, 3);
  const render::Pixels p2 = d.read_rgba();
  EXPECT_EQ(p2.w, 7);
  EXPECT_EQ(p2.h, 3);
  EXPECT_EQ(p2.rgba.size(), size_t(7) * 3 * 4);
}

}  // namespace
}  // namespace diffscope
