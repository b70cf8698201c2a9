// test_stop_signal_video.cpp — SIGINT / SIGTERM while a video is being encoded (platform/stop_signal.h): `sample --video`
// and a headless `export video` end with 128 + the signal (130 / 143), leave no `X.mp4.tmp.PID.N` (nor its .log) and
// no ffmpeg behind (no process whose command line names the folder). Before: the default action killed diffscope,
// its temporary files stayed and ffmpeg ran on. Also: without ffmpeg `sample --video` exits 3 before any work,
// writing nothing (it used to sample, write the frames as PNGs and drop --out).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gui_test_util.h"
#include "signal_run.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

bool have_ffmpeg() { return std::system("ffmpeg -version >/dev/null 2>&1") == 0; }

// Processes whose command line mentions `dir` (an ffmpeg writing there).
int processes_naming(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::ifstream f(e.path() / "cmdline", std::ios::binary);
    const std::string cmd((std::istreambuf_iterator<char>(f)), {});
    n += cmd.find(dir) != std::string::npos;
  }
  return n;
}

void expect_clean_stop(const test::SignalRun& r, int code, const test::TempDir& dir) {
  EXPECT_TRUE(r.seen) << "the encode never started: " << r.err;
  EXPECT_EQ(r.killed_by, 0) << r.err;
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_NE(r.err.find("interrupted by"), std::string::npos) << r.err;
  for (const auto& e : dir.entries()) {
    EXPECT_EQ(e.find(".tmp."), std::string::npos) << e;
    EXPECT_EQ(e.find(".mp4"), std::string::npos) << e;
  }
  EXPECT_EQ(processes_naming(dir.path()), 0) << "ffmpeg still running";
}

// 1,001 frames at 640x480: tens of seconds of rendering and encoding, stopped 0.5 s into the encode.
TEST(StopSignalVideo, SigintDuringSampleVideoLeavesNothing) {
  if (!have_ffmpeg()) GTEST_SKIP() << "ffmpeg not installed (scripts/install-deps.sh installs it)";
  test::TempDir dir, logs;
  const test::SignalRun r = test::run_and_signal(
      {"sample", "--backend", "cpu", "--model", guitest::model_2d(), "--n", "256", "--steps", "1000", "--out",
       dir.file("x.npy"), "--video", dir.file("run.mp4"), "--trajectory-stride", "1", "--size", "640x480"},
      SIGINT, std::chrono::milliseconds(500), logs.file("err"), dir.path(), ".tmp.");
  expect_clean_stop(r, 130, dir);
  EXPECT_FALSE(fs::exists(dir.file("x.npy")));
}

TEST(StopSignalVideo, SigtermDuringHeadlessExportVideoLeavesNothing) {
  if (!have_ffmpeg()) GTEST_SKIP() << "ffmpeg not installed (scripts/install-deps.sh installs it)";
  test::TempDir dir, logs;
  std::ofstream(logs.file("s.txt")) << "set n 256\nset steps 1000\nset t_start 999\nset export_size 640x480\n"
                                       "wait_complete 100000\nexport video " << dir.file("run.mp4") << "\nprint\n";
  const test::SignalRun r = test::run_and_signal(
      {"gui", "--headless", "--backend", "cpu", "--no-persist", "--size", "320x240", "--model", guitest::model_2d(),
       "--script", logs.file("s.txt")},
      SIGTERM, std::chrono::milliseconds(500), logs.file("err"), dir.path(), ".tmp.");
  expect_clean_stop(r, 143, dir);
}

TEST(StopSignalVideo, MissingFfmpegExits3BeforeAnyWork) {
  test::TempDir dir, logs;
  const guitest::Result r = guitest::run_cli(
      "sample --backend cpu --model '" + guitest::model_2d() + "' --n 64 --steps 5 --out '" + dir.file("x.npy") +
          "' --png '" + dir.file("p.png") + "' --trajectory '" + dir.file("t.npy") + "' --video '" + dir.file("v.mp4") + "'",
      logs.path(), "env -u DIFFSCOPE_FFMPEG PATH=/nonexistent");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("--video " + dir.file("v.mp4") + ": cannot start 'ffmpeg' (not found)"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("apt-get install ffmpeg"), std::string::npos) << r.err;
  EXPECT_TRUE(dir.entries().empty()) << dir.entries().front();  // no frames folder, no --out, --png or --trajectory
}

}  // namespace
}  // namespace diffscope
