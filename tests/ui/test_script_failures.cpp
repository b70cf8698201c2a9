// test_script_failures.cpp — headless script lines (app/shell/headless.cpp) found wrong by a newcomer trial:
// words past what a command takes were dropped (a path with a blank cut at the blank), `frames abc` /
// `frames -1` ran nothing silently and `frames 99999999999999999` hung; a model that does not load and exports started
// by the S / V keys failed with exit 0. Now: double quotes keep blanks, an extra word, a non-number or a value out of
// range is exit 2 at once naming the command, the value and the range; failed commands make the run exit 2 after the
// script, naming the first (README "Headless scripts"). Expected values written out from those rules.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using guitest::Result;

class ScriptFailures : public ::testing::Test {
 protected:
  test::TempDir m_dir, m_logs;
  double m_seconds = 0;
  Result script(const std::string& text) {
    std::ofstream(m_dir.file("s.txt")) << text;
    const auto t0 = std::chrono::steady_clock::now();
    Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 320x240 --model moons --set n=64 "
                                "--set steps=5 --set t_start=200 --script '" + m_dir.file("s.txt") + "'",
                                m_logs.path());
    m_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
  static bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
};

TEST_F(ScriptFailures, QuotedPathKeepsItsBlankAndAnExtraWordIsRefused) {
  const std::string d = m_dir.path();
  Result r = script("wait_complete 2000\nset export_dir \"" + d + "/sp ace\"\nexport snapshot\n");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(d + "/sp ace/snapshot_0001.png")) << r.out;
  EXPECT_FALSE(fs::exists(d + "/sp"));

  r = script("wait_complete 2000\nset export_dir " + d + "/other dir\nexport snapshot\n");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "script:2: set: unexpected extra word 'dir'")) << r.err;
  EXPECT_FALSE(fs::exists(d + "/other")) << "the export ran into the cut path";

  for (const std::string& line : {"model " + d + "/a b.safetensors", "screenshot " + d + "/a b.png",
                                  "export state " + d + "/a b.npy", "restore " + d + "/a b.png"}) {
    r = script(line + "\n");
    EXPECT_EQ(r.code, 2) << line << "\n" << r.err;
    EXPECT_TRUE(has(r.err, "unexpected extra word 'b.")) << line << "\n" << r.err;
  }
}

TEST_F(ScriptFailures, FramesNotANumberOrOutOfRangeExit2AtOnce) {
  struct Case {
    const char* line;
    const char* message;
  } cases[] = {
      {"frames abc", "script:1: frames: N = 'abc' is not an integer; valid: an integer in [0, 1000000]"},
      {"frames -1", "script:1: frames: N = -1 is out of range; valid: an integer in [0, 1000000]"},
      {"frames 99999999999999999", "script:1: frames: N = 99999999999999999 is out of range; valid: an integer in [0, 1000000]"},
      {"frames 3 4", "script:1: frames: unexpected extra word '4'"},
      {"wait_complete 0", "script:1: wait_complete: MAX = 0 is out of range; valid: an integer in [1, 1000000]"},
      {"measure x", "script:1: measure: FRAMES = 'x' is not an integer"},
      {"mouse 10", "script:1: mouse: missing Y"},
      {"key Left alt", "script:1: key: MODIFIER = 'alt' is not valid; valid: one of: shift ctrl"},
      {"sett n 5", "script:1: unknown command 'sett' (did you mean 'set'?); the commands: diffscope gui --script-help"},
      {"expect fram == 1", "script:1: expect: QUANTITY = 'fram' is not valid; valid: one of: frame computed"},
  };
  for (const Case& c : cases) {
    const Result r = script(std::string(c.line) + "\nprint\n");
    EXPECT_EQ(r.code, 2) << c.line << "\n" << r.err;
    EXPECT_TRUE(has(r.err, c.message)) << c.line << "\n" << r.err;
    EXPECT_FALSE(has(r.out, "\"frame\"")) << c.line << ": the script went on";  // refused before `print`
    EXPECT_LT(m_seconds, 60) << c.line;
  }
}

// `diffscope gui --script-help` prints the script language: every command, its arguments with their ranges and
// defaults (written out here from the parsers in app/shell/headless.cpp), and exits 0 without starting the app.
TEST_F(ScriptFailures, ScriptHelpListsEveryCommandWithItsArguments) {
  const Result r = guitest::run_cli("gui --script-help", m_logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* part :
       {"\n  frames [N]\n", "N: an integer in [0, 1000000]; default 1", "\n  wait_complete [MAX]\n",
        "MAX: an integer in [1, 1000000]; default 100000", "\n  set KEY VALUE\n", "steps, t_start, n, sampler",
        "\n  restore FILE\n", "\n  model NAME|PATH\n", "\n  backend BACKEND\n", "BACKEND: one of: auto cpu cuda",
        "\n  key KEY [MODIFIER]\n", "KEY: one of: Space Left Right Home End S V H", "MODIFIER: one of: shift ctrl; optional",
        "\n  mouse X Y [BUTTON]\n", "BUTTON: one of: down up; optional", "\n  click ITEM [KEY]\n",
        "ITEM: one of: model_path scheduler_config export_folder", "\n  wheel X Y CLICKS\n",
        "CLICKS: a number in [-1000, 1000]", "\n  drag_timeline FROM TO [FRAMES]\n", "FROM: a number in [-1, 2]",
        "FRAMES: an integer in [1, 10000]; default 8", "\n  export KIND [PATH] [FPS]\n",
        "KIND: one of: snapshot grid state trajectory frames video",
        "FPS: an integer in [1, 240] (video only; else the Export section's); optional\n",  // no "default 0"
        "\n  screenshot PATH\n", "\n  expect QUANTITY OP VALUE\n", "OP: one of: == != >= <= > <",
        "QUANTITY: one of: frame computed steps t_start n complete playing show_ui exports clipped",
        "\n  bench [BACKEND] [FILTER]\n", "BACKEND: one of: cpu gpu; default cpu", "\n  measure [FRAMES]\n",
        "FRAMES: an integer in [1, 1000000]; default 120", "\n  stop_after SECONDS\n", "SECONDS: a number in [0, 1e+07]",
        "\n  size W H\n", "W: an integer in [0, 16384]", "\n  open SECTION\n",
        "SECTION: one of: Model Train Sampling Schedule View Picks Grid Export Kernels", "\n  schedule [WAIT]\n",
        "WAIT: one of: wait; optional", "\n  pick X Y [MODE]\n", "MODE: one of: only add (add: Shift+click); default only",
        "\n  pin INDEX\n", "\n  unpin INDEX\n", "\n  move_start INDEX X Y\n", "\n  scheduler_config [PATH]\n", "\n  reset_counts\n", "\n  print\n",
        "\n  train_data SOURCE\n", "\n  brush X Y R N\n", "\n  brush_erase X Y R\n", "\n  brush_undo\n",
        "\n  train_set KEY VALUE\n", "\n  train WHAT\n", "WHAT: one of: start stop resume wait until save checkpoint print",
        "\n  grid rows=AXIS:V1,V2,... cols=AXIS:V1,...\n", "\n  grid_metric NAME\n",
        "NAME: one of: energy exact_rms displacement path_length straightness evaluations wall_ms",
        "\n  grid_click ROW COL\n", "ROW: an integer in [0, 7]", "\n  grid_export NPY\n"})
    EXPECT_TRUE(has(r.out, part)) << "missing: " << part << "\n" << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(ScriptFailures, ModelThatDoesNotLoadFailsTheRunAfterTheScript) {
  const Result r = script("model nosuchmodel\nprint\n");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "\"frame\"")) << "the script goes on after the failed line: " << r.out;
  EXPECT_TRUE(has(r.err, "1 command failed, the first: script:1: model nosuchmodel: ")) << r.err;
}

TEST_F(ScriptFailures, KeyExportsIntoAnUnwritableFolderFailTheRun) {
  for (const char* key : {"S", "V"}) {
    const Result r = script(std::string("wait_complete 2000\nset export_dir /proc/no/such\nkey ") + key + "\nframes 3\n");
    EXPECT_EQ(r.code, 2) << key << "\n" << r.out << r.err;
    EXPECT_TRUE(has(r.err, "1 command failed, the first: script:3: export started by a key: ")) << key << "\n" << r.err;
  }
}

}  // namespace
}  // namespace diffscope
