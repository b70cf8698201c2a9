// test_soak.cpp — the short CI version of the long run: scripts/soak.sh drives the headless UI on the CPU
// backend with random actions for $DIFFSCOPE_SOAK_SECONDS (default 120 s, the 2-minute version; 0 skips; cycles of 19 actions, so that
// even a slow shared CI machine completes the 3 cycles the comparison needs) and fails on a non-zero
// exit, a failed expectation, any GL error, RSS growth beyond its bound or frame-time drift beyond its bound
// (both bounds are stated in scripts/soak.sh; the 10-minute figures are in tests/RELIABILITY.md).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "gui_test_util.h"

namespace diffscope {
namespace {

TEST(Soak, RandomUiActionsOnTheCpuBackend) {
  int secs = 120;
  if (const char* s = std::getenv("DIFFSCOPE_SOAK_SECONDS")) secs = std::atoi(s);
  if (secs <= 0) GTEST_SKIP() << "DIFFSCOPE_SOAK_SECONDS=0";
  test::TempDir out;
  const std::string cmd = "SOAK_CYCLE=19 SOAK_OUT='" + out.path() + "' DIFFSCOPE_BIN='" + test::cli_binary() + "' DIFFSCOPE_ROOT='" +
                          test::repo_root() + "' '" + test::repo_root() + "/scripts/soak.sh' " + std::to_string(secs) +
                          " >'" + out.file("soak.log") + "' 2>&1";
  const int status = std::system(cmd.c_str());
  const std::string log = guitest::slurp(out.file("soak.log"));
  ASSERT_TRUE(WIFEXITED(status)) << log;
  EXPECT_EQ(WEXITSTATUS(status), 0) << log << "\napp stderr:\n" << guitest::slurp(out.file("app.err"));
  const std::string summary = guitest::slurp(out.file("summary.txt"));
  EXPECT_NE(summary.find("PASS"), std::string::npos) << log;
  // The run did something: whole cycles of actions, each compared with the first.
  EXPECT_NE(summary.find("complete cycles"), std::string::npos) << summary;
  std::printf("%s", summary.c_str());
}

}  // namespace
}  // namespace diffscope
