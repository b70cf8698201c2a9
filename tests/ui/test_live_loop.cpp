// test_live_loop.cpp — the live loop never waits on the GPU in steady state (docs/PERFORMANCE.md "The live loop"):
// while re-simulating every run (loop on) and while replaying a stored trajectory, a frame does no read-back, no
// explicit sync and no camera fit, for a 2D model and for digits8x8 (image grid + PCA). Counted by the app's own
// probes at every such call (run/frame_probe.h) through the headless script's `reset_counts` and `expect`.
// Before the fix the automatic camera refitted to each completed run: one fit and one read-back per run, which
// cost 42-71 ms per frame on the H200; the `runs >= 2` expectations make sure runs complete inside the window.
#include <gtest/gtest.h>

#include "gui_test_util.h"

namespace diffscope {
namespace {

using guitest::Result;

class LiveLoop : public ::testing::Test {
 protected:
  test::TempDir m_dir, m_logs;

  Result run_script(const std::string& model, const std::string& script) {
    std::ofstream(m_dir.file("s.txt")) << script;
    return guitest::run_cli("gui --headless --backend cpu --no-persist --size 800x500 --model '" + model +
                                "' --script '" + m_dir.file("s.txt") + "'",
                            m_logs.path());
  }
};

// Small runs so several complete within the counted frames on a 2-core CI machine.
const char* kLooping =
    "set n 256\nset t_start 999\nset steps 8\nset spl 4\nset trail 6\nset loop 1\n"
    "frames 20\nreset_counts\nexpect runs_since_reset == 0\nframes 60\n"
    "expect runs_since_reset >= 2\nexpect readbacks == 0\nexpect syncs == 0\nexpect camera_fits == 0\nprint\n";

const char* kReplaying =
    "set n 256\nset t_start 999\nset steps 30\nset spl 4\nset loop 0\nset speed 0.5\nwait_complete 2000\n"
    "key Home\nkey Space\n"  // to the first frame, then play the finished run from there
    "reset_counts\nframes 40\nexpect playing == 1\nexpect frame > 0\nexpect frame < 30\n"
    "expect readbacks == 0\nexpect syncs == 0\nexpect camera_fits == 0\nprint\n";

TEST_F(LiveLoop, LoopingTwoDModelNeverWaitsOnTheGpu) {
  const Result r = run_script(guitest::model_2d(), kLooping);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(LiveLoop, ReplayingTwoDModelNeverWaitsOnTheGpu) {
  const Result r = run_script(guitest::model_2d(), kReplaying);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(LiveLoop, LoopingDigitsNeverWaitsOnTheGpu) {
  const Result r = run_script(test::repo_root() + "/assets/models/digits8x8.safetensors", kLooping);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(LiveLoop, ReplayingDigitsNeverWaitsOnTheGpu) {
  const Result r = run_script(test::repo_root() + "/assets/models/digits8x8.safetensors", kReplaying);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

// The counters themselves: a user-asked export reads the trajectory back and is counted, so a zero above is
// a measurement, not a counter that never moves.
TEST_F(LiveLoop, ExportIsCountedAsAReadBack) {
  const Result r = run_script(guitest::model_2d(),
                              "set n 64\nset steps 5\nwait_complete 500\nreset_counts\nexport state " +
                                  m_dir.file("x.npy") + "\nexpect readbacks >= 1\n");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace diffscope
