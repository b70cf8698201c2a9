// test_gui_window.cpp — a real GLFW window smoke test: under the session's X display, or a private Xvfb
// started here; skipped when there is neither. Opens the app for 30 frames and checks the screenshot.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "gui_test_util.h"

namespace diffscope {
namespace {

TEST(GuiWindow, OpensUnderX) {
  test::TempDir dir, logs;
  std::string display;
  pid_t xvfb = -1;
  if (const char* d = std::getenv("DISPLAY"); d && *d) {
    display = d;
  } else if (std::system("command -v Xvfb >/dev/null 2>&1") == 0) {
    for (int n = 91; n < 120 && xvfb < 0; ++n) {
      if (std::filesystem::exists("/tmp/.X11-unix/X" + std::to_string(n))) continue;
      display = ":" + std::to_string(n);
      xvfb = fork();
      if (xvfb == 0) {
        execlp("Xvfb", "Xvfb", display.c_str(), "-screen", "0", "1024x768x24", "-nolisten", "tcp", (char*)nullptr);
        _exit(127);
      }
      for (int i = 0; i < 100 && !std::filesystem::exists("/tmp/.X11-unix/X" + std::to_string(n)); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  if (display.empty()) GTEST_SKIP() << "no DISPLAY and no Xvfb";
  const std::string shot = dir.file("window.png");
  const guitest::Result r =
      guitest::run_cli("gui --no-persist --backend cpu --n 500 --steps 20 --frames 30 --size 800x600 --model '" +
                           guitest::model_2d() + "' --screenshot '" + shot + "'",
                       logs.path(), "DISPLAY=" + display);
  if (xvfb > 0) {
    kill(xvfb, SIGTERM);
    waitpid(xvfb, nullptr, 0);
  }
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const guitest::Png p = guitest::read_png(shot);
  EXPECT_EQ(p.w, 800);
  EXPECT_EQ(p.h, 600);
  EXPECT_GT(p.distinct_colors(), 20u);
  EXPECT_NE(r.out.find("30 frames"), std::string::npos) << r.out;
}

TEST(GuiWindow, WithoutADisplayPointsAtTheHeadlessWays) {
  // Issue 13 item 13: exit 3 (no display is a missing resource), naming what works without one: the headless app
  // with a screenshot or a script, and `sample --png`.
  test::TempDir logs;
  const guitest::Result r = guitest::run_cli("gui --no-persist --backend cpu --frames 2", logs.path(),
                                             "env -u DISPLAY -u WAYLAND_DISPLAY");
  EXPECT_EQ(r.code, 3) << r.out << r.err;
  for (const char* way : {"gui --headless --screenshot", "--script", "sample --model moons", "--png"})
    EXPECT_NE(r.err.find(way), std::string::npos) << way << " not named: " << r.err;
}

}  // namespace
}  // namespace diffscope
