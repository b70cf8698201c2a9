// test_export_faults.cpp — exports that cannot be written, through the headless app (Mesa EGL, CPU backend): an
// unwritable place, a failing sidecar, a full disk, a sidecar that would be the export itself, the pictures of a run
// that overflowed: an error, nothing half-written, and the session goes on.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/sha256.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using guitest::Result;

class ExportFaults : public guitest::AppFixture {};

const std::string kModel = guitest::model_2d();

// A 64 KiB tmpfs: a real ENOSPC. Mounting needs CAP_SYS_ADMIN; the test skips where that is not allowed.
class FullDisk : public ExportFaults {
 protected:
  std::string m_mnt;
  bool m_mounted = false;
  void SetUp() override {
    m_mnt = file("full");
    fs::create_directories(m_mnt);
    const std::string cmd = "mount -t tmpfs -o size=64k diffscope-full '" + m_mnt + "' 2>/dev/null";
    m_mounted = std::system(cmd.c_str()) == 0;
  }
  void TearDown() override {
    if (m_mounted) std::system(("umount '" + m_mnt + "'").c_str());
  }
};

TEST_F(ExportFaults, UnwritableExportPathGivesErrorAndKeepsSession) {
  // Root ignores permission bits, so "unwritable" here is a path under a regular file (ENOTDIR) and /proc.
  write("blocker", "a file, not a folder");
  const std::string d = dir.path(), b = file("blocker");
  const Result r = run_gui(
      "set n 100\nset steps 12\nset t_start 300\nwait_complete 5000\nexpect computed == 12\n"
      "export snapshot " + b + "/x.png\nexport state " + b + "/x.npy\nexport trajectory " + b + "/t.npy\n"
      "export snapshot /proc/x.png\n"
      "set export_dir " + b + "/sub\nexport snapshot\nexport frames\n"
      // the session is untouched and the app keeps working
      "expect computed == 12\nexpect steps == 12\nexpect t_start == 300\nexpect complete == 1\n"
      "set export_dir " + d + "/good\nexport snapshot\nset seed 5\nwait_complete 5000\nexpect computed == 12\n"
      "expect gl_errors == 0\n",
      "--model '" + kModel + "'");
  // The script ran to its end (the good export exists), then the run failed naming the first bad export.
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("6 commands failed, the first: script:6: export snapshot: export " + b + "/x.png: cannot write"),
            std::string::npos)
      << r.err;
  size_t errors = 0;
  for (size_t p = r.out.find(": error: "); p != std::string::npos; p = r.out.find(": error: ", p + 1)) ++errors;
  EXPECT_EQ(errors, 6u) << r.out;  // each failed export reports its own error
  EXPECT_NE(r.out.find("export snapshot: error: export " + b + "/x.png: cannot write"), std::string::npos) << r.out;
  // Only the blocker, the script and the one good export (PNG + sidecar) exist.
  EXPECT_EQ(names(d), (std::vector<std::string>{"blocker", "good", "script.txt"}));
  EXPECT_EQ(names(d + "/good"), (std::vector<std::string>{"snapshot_0001.json", "snapshot_0001.png"}));
  EXPECT_EQ(guitest::slurp(b), "a file, not a folder");
}

TEST_F(ExportFaults, SidecarFailureRemovesTheExportedFile) {
  // x.json is a folder: the PNG (or .npy) is written, its sidecar cannot be; neither may stay behind.
  fs::create_directories(file("out/x.json"));
  fs::create_directories(file("out/s.json"));
  const std::string o = file("out");
  const Result r = run_gui("set n 64\nset steps 5\nwait_complete 5000\nexport snapshot " + o + "/x.png\n"
                           "export state " + o + "/s.npy\nexpect complete == 1\n",
                           "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("2 commands failed, the first: script:4: export snapshot:"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("export snapshot: error:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export state: error:"), std::string::npos) << r.out;
  EXPECT_EQ(names(o), (std::vector<std::string>{"s.json", "x.json"})) << "half an export was left behind";
}

TEST_F(FullDisk, ExportToFullDiskLeavesNothingAndAppGoesOn) {
  if (!m_mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs CAP_SYS_ADMIN)";
  // trajectory: 41 frames x 2000 rows x 2 x 4 bytes = 656 KB > 64 KiB; state: 16 KB fits.
  const Result r = run_gui("set n 2000\nset t_start 400\nset steps 40\nwait_complete 20000\n"
                           "export trajectory " + m_mnt + "/t.npy\nexpect complete == 1\nexpect computed == 40\n"
                           "export state " + m_mnt + "/s.npy\n",
                           "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;  // the failed trajectory export, after the script's end
  EXPECT_NE(r.err.find("1 command failed, the first: script:5: export trajectory:"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("export trajectory: error: export " + m_mnt + "/t.npy: cannot write (No space left on device)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("export state: " + m_mnt + "/s.npy"), std::string::npos) << r.out;
  EXPECT_EQ(names(m_mnt), (std::vector<std::string>{"s.json", "s.npy"})) << "no temporary or partial file";
}

// Found by the public bug reports (tests/data/reported/).
TEST_F(ExportFaults, ExportWhoseSidecarIsItselfIsRefused) {
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

// Found by a newcomer trial.
// The model of test::write_overflowing_model (io_test_util.h): eps = 0 for t >= 51, inf for t <= 50. ddim from
// t_start 99 in 100 steps visits t = 99 - k at step k, so frame 50 (after the step from t = 50) is the first
// with samples that are not finite. Before: "100 / 100 steps", complete, and the snapshot written.
TEST_F(ExportFaults, OverflowingRunStopsWithAnErrorAndItsPicturesAreRefused) {
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

}  // namespace
}  // namespace diffscope
