// test_schedule_panel.cpp — the Schedule section through the headless app: with an analytic model and
// a deterministic solver its plots are drawn (the per-frame error's green line and the error-vs-evaluations
// points are in the screenshot), and with the section open while looping the frame still never waits on the
// GPU (the exact-ODE errors are computed on the CPU in the background: no read-back, no sync).
#include <gtest/gtest.h>

#include <filesystem>

#include "gui_test_util.h"

namespace diffscope {
namespace {

using guitest::Result;

std::string exact_model() { return test::repo_root() + "/assets/models/gaussians8-exact.safetensors"; }

class SchedulePanel : public ::testing::Test {
 protected:
  test::TempDir m_dir, m_logs;

  Result run_script(const std::string& script) {
    std::ofstream(m_dir.file("s.txt")) << script;
    Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 1100x1000 --model '" + exact_model() +
                                    "' --script '" + m_dir.file("s.txt") + "'",
                                m_logs.path());
    return r;
  }
};

// Pixels of exactly this colour in the picture.
size_t count_colour(const guitest::Png& p, int r, int g, int b) {
  size_t n = 0;
  for (size_t i = 0; i + 2 < p.rgb.size(); i += 3) n += p.rgb[i] == r && p.rgb[i + 1] == g && p.rgb[i + 2] == b;
  return n;
}

TEST_F(SchedulePanel, PlotsTheScheduleAndTheErrorsVsTheExactOde) {
  if (!std::filesystem::exists(exact_model())) GTEST_SKIP() << "no " << exact_model();
  const std::string shot = m_dir.file("schedule.png");
  const Result r = run_script("set n 256\nset sampler dpmpp-2m\nset spacing karras\nset steps 20\nwait_complete 2000\n"
                              "schedule wait\nscreenshot " + shot + "\n");
  if (r.code == 3) GTEST_SKIP() << "no headless GL: " << r.err;
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const guitest::Png p = guitest::read_png(shot);
  ASSERT_GT(p.w, 0);
  EXPECT_GT(count_colour(p, 130, 220, 130), 50u) << "the per-frame error line (green)";
  EXPECT_GT(count_colour(p, 120, 180, 255), 200u) << "the schedule lines and the error-vs-evaluations points (blue)";
}

TEST_F(SchedulePanel, OpenWhileLoopingNeverWaitsOnTheGpu) {
  if (!std::filesystem::exists(exact_model())) GTEST_SKIP() << "no " << exact_model();
  const Result r = run_script("set n 256\nset sampler heun\nset steps 8\nset spl 4\nset loop 1\nschedule\nframes 20\n"
                              "reset_counts\nframes 60\nexpect runs_since_reset >= 2\nexpect readbacks == 0\n"
                              "expect syncs == 0\nexpect camera_fits == 0\nprint\n");
  if (r.code == 3) GTEST_SKIP() << "no headless GL: " << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace diffscope
