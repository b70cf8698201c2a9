// test_export_frames_path.cpp — a headless `export frames PATH` (a newcomer trial): the sequence goes
// into PATH (it used to be ignored, the frames landing in the export folder), an existing PATH is refused, and a
// sequence stopped by SIGTERM leaves nothing — it is written into a temporary folder that becomes PATH only when
// its last frame is written (it used to leave a partial folder while saying "nothing was written"; SEMANTICS §9).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gui_test_util.h"
#include "signal_run.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

size_t pngs_in(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().extension() == ".png";
  return n;
}

TEST(ExportFramesPath, SequenceGoesIntoThePathAndAnExistingOneIsRefused) {
  test::TempDir dir, logs;
  const std::string target = dir.file("my frames");
  // 10 steps, every frame kept (a few KB, far under the memory budget): frames 0..10 = 11 PNGs.
  std::ofstream(logs.file("s.txt")) << "set export_dir \"" << dir.file("default") << "\"\nset steps 10\n"
                                       "wait_complete 1000\nexport frames \"" << target
                                    << "\"\nexport frames \"" << target << "\"\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 320x240 --model '" +
                                                 guitest::model_2d() + "' --script '" + logs.file("s.txt") + "'",
                                             logs.path());
  EXPECT_EQ(r.code, 2) << r.err;  // the second export fails: the folder exists
  EXPECT_NE(r.err.find("export frames '" + target + "' already exists"), std::string::npos) << r.err;
  ASSERT_TRUE(fs::is_directory(target)) << r.out << r.err;
  EXPECT_EQ(pngs_in(target), 11u);
  EXPECT_TRUE(fs::exists(target + "/sequence.json"));
  EXPECT_FALSE(fs::exists(dir.file("default")));  // nothing in the export folder
  for (const auto& e : dir.entries()) EXPECT_EQ(e.find(".tmp."), std::string::npos) << e;
}

TEST(ExportFramesPath, SigtermDuringASequenceLeavesNothing) {
  test::TempDir dir, logs;
  std::ofstream(logs.file("s.txt")) << "set export_dir \"" << dir.path() << "\"\nset n 256\nset steps 300\n"
                                       "set export_size 640x480\nwait_complete 100000\nexport frames\n";
  const test::SignalRun r = test::run_and_signal(
      {"gui", "--headless", "--backend", "cpu", "--no-persist", "--size", "320x240", "--model", guitest::model_2d(),
       "--script", logs.file("s.txt")},
      SIGTERM, std::chrono::milliseconds(500), logs.file("err"), dir.path(), ".tmp.");
  EXPECT_TRUE(r.seen) << "the sequence never started: " << r.err;
  EXPECT_EQ(r.killed_by, 0) << r.err;
  EXPECT_EQ(r.code, 143) << r.err;
  EXPECT_TRUE(dir.entries().empty()) << dir.entries().front();
}

}  // namespace
}  // namespace diffscope
