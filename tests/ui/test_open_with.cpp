// test_open_with.cpp — what a file manager's "Open with" passes, and options checked before any GL context: `diffscope
// FILE` and `diffscope gui FILE` open a model, or restore an export's .png / .json sidecar as `--restore` does (the
// PNG used to be loaded as a model, and `gui FILE` was refused); `gui --headless` refuses a bad --set, --model or
// script line before it opens EGL (its "EGL device" line on stderr comes with the context).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gui_test_util.h"

namespace diffscope {
namespace {

constexpr const char* kHeadless = "--headless --backend cpu --no-persist --size 320x240";

TEST(OpenWith, PositionalExportRestoresAndPositionalModelLoads) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("make.txt")) << "set n 64\nset t_start 300\nset steps 7\nwait_complete 5000\nexport snapshot "
                                      << dir.file("a.png") << "\n";
  guitest::Result r = guitest::run_cli(std::string("gui ") + kHeadless + " --model moons --script '" + dir.file("make.txt") + "'",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  // The restored run has the export's 7 steps and t_start 300 (not the defaults 100 and 999).
  std::ofstream(dir.file("check.txt")) << "wait_complete 5000\nexpect steps == 7\nexpect t_start == 300\n";
  for (const std::string& file : {dir.file("a.png"), dir.file("a.json")}) {
    for (const std::string& form : {"gui '" + file + "' " + kHeadless, "'" + file + "' " + kHeadless}) {
      r = guitest::run_cli(form + " --script '" + dir.file("check.txt") + "'", logs.path());
      EXPECT_EQ(r.code, 0) << form << "\n" << r.out << r.err;
    }
  }
  // A model file the same way (the golden model: T = 1000, so t_start 999 is in range).
  std::ofstream(dir.file("model.txt")) << "set n 32\nset steps 3\nwait_complete 5000\nexpect steps == 3\n";
  const std::string model = test::data_path("golden/d2_h256.safetensors");
  r = guitest::run_cli("gui '" + model + "' " + kHeadless + " --script '" + dir.file("model.txt") + "'", logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // FILE and the flag it stands for, both given: refused naming both.
  r = guitest::run_cli("gui '" + dir.file("a.png") + "' --restore '" + dir.file("a.json") + "' " + kHeadless, logs.path());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("FILE '" + dir.file("a.png") + "' and --restore '" + dir.file("a.json") + "' both name"),
            std::string::npos) << r.err;
}

TEST(OpenWith, HeadlessRefusesBadOptionsBeforeOpeningEgl) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("bad.txt")) << "frames 1\nprint\nfly away\n";
  std::ofstream(dir.file("quote.txt")) << "set export_dir \"/a/b\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--set n=0", "--set n = 0 is out of range"},
      {"--set nosuchkey=1", "nosuchkey"},
      {"--model nosuchmodel", "nosuchmodel"},
      {"--script '" + dir.file("missing.txt") + "'", "cannot be read"},
      {"--script '" + dir.file("bad.txt") + "'", "script:3: unknown command 'fly'"},
      {"--script '" + dir.file("quote.txt") + "'", "script:1: a quote opened at column 16 is not closed"},
  };
  for (const auto& [args, message] : cases) {
    const guitest::Result r = guitest::run_cli(std::string("gui ") + kHeadless + " " + args, logs.path());
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.err.find("EGL device"), std::string::npos) << args << ": a GL context was opened first\n" << r.err;
    EXPECT_EQ(r.out.find("\"frame\""), std::string::npos) << args << ": the script ran";
  }
}

}  // namespace
}  // namespace diffscope
