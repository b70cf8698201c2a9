// test_stop_and_outputs_cli.cpp — fixes found by a newcomer trial through the diffscope binary: an output in a
// folder that cannot take files (/proc) is "not writable", exit 2, not a free-space error; SIGINT / SIGTERM during
// `sample` end it with 128 + the signal (130 / 143, as a shell reports it) and nothing written (SEMANTICS §9).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io_test_util.h"
#include "signal_run.h"
#include "test_paths.h"

namespace diffscope {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(StopAndOutputsCli, OutputInProcIsNotWritableExit2) {
  test::TempDir logs;
  const std::string cmd = "'" + test::cli_binary() + "' sample --backend cpu --model '" +
                          test::data_path("golden/d2_h256.safetensors") + "' --n 16 --steps 2 --out /proc/a.npy 2>'" +
                          logs.file("err") + "' >/dev/null";
  const int status = std::system(cmd.c_str());
  const std::string err = slurp(logs.file("err"));
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2) << err;
  EXPECT_NE(err.find("--out '/proc/a.npy': folder '/proc' is not writable"), std::string::npos) << err;
  EXPECT_EQ(err.find("free"), std::string::npos) << err;
}

// An output "folder" that is a file is named as a file, not as a folder that "does not exist".
TEST(StopAndOutputsCli, OutputFolderThatIsAFileIsNamedAsAFile) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("afile")) << "not a folder";
  for (const std::string& out : {dir.file("afile/x.npy"), dir.file("afile/sub/x.npy")}) {
    const std::string cmd = "'" + test::cli_binary() + "' sample --backend cpu --model '" +
                            test::data_path("golden/d2_h256.safetensors") + "' --n 16 --steps 2 --out '" + out +
                            "' 2>'" + logs.file("err") + "' >/dev/null";
    const int status = std::system(cmd.c_str());
    const std::string err = slurp(logs.file("err"));
    EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2) << err;
    EXPECT_NE(err.find("'" + dir.file("afile") + "' is a file, not a folder"), std::string::npos) << err;
    EXPECT_EQ(err.find("does not exist"), std::string::npos) << err;
  }
}

#ifdef DIFFSCOPE_HAVE_GUI
// A sidecar whose model file is gone (a copy, so no bundled model has its bytes): `sample --config` names that
// model (it said the sidecar "names no model").
TEST(StopAndOutputsCli, ConfigWhoseModelIsGoneNamesIt) {
  test::TempDir dir, logs;
  const std::string model = dir.file("m.safetensors");
  std::filesystem::copy_file(test::data_path("golden/d2_h256.safetensors"), model);
  const std::string base = "'" + test::cli_binary() + "' sample --backend cpu --n 8 --steps 2 ";
  // --png draws through EGL: Mesa's dlopen'ed driver leaks in the ASan build (no leak report asked).
  ASSERT_EQ(std::system(("ASAN_OPTIONS=detect_leaks=0 " + base + "--model '" + model + "' --out '" + dir.file("a.npy") + "' --png '" + dir.file("a.png") +
                                "' --size 64x64 2>/dev/null").c_str()),
            0);
  std::filesystem::remove(model);
  const int status = std::system((base + "--config '" + dir.file("a.png") + "' --out '" + dir.file("b.npy") + "' 2>'" +
                                  logs.file("err") + "' >/dev/null").c_str());
  const std::string err = slurp(logs.file("err"));
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 2) << err;
  EXPECT_NE(err.find("names the model " + model + ", which is gone"), std::string::npos) << err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("b.npy")));
}
#endif

// A run of many short chunks (2,000 samples, 1,000 steps on the CPU: seconds) stopped after 1.5 s.
void expect_stopped(int signo, int code) {
  test::TempDir dir, logs;
  const test::SignalRun r = test::run_and_signal({"sample", "--backend", "cpu", "--model", test::data_path("golden/d2_h256.safetensors"),
                                "--n", "2000", "--steps", "1000", "--out", dir.file("x.npy"), "--trajectory",
                                dir.file("t.npy"), "--trajectory-stride", "100"},
                               signo, std::chrono::milliseconds(1500), logs.file("err"));
  EXPECT_EQ(r.killed_by, 0) << "ended by signal " << r.killed_by << " instead of exiting: " << r.err;
  EXPECT_EQ(r.code, code) << r.err;
  EXPECT_NE(r.err.find(signo == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"), std::string::npos) << r.err;
  EXPECT_TRUE(dir.entries().empty()) << dir.entries().front();  // nothing written, no temporary file
}

TEST(StopAndOutputsCli, SigintDuringSampleExits130WritingNothing) { expect_stopped(SIGINT, 130); }
TEST(StopAndOutputsCli, SigtermDuringSampleExits143WritingNothing) { expect_stopped(SIGTERM, 143); }

}  // namespace
}  // namespace diffscope
