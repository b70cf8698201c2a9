// test_bundled_model_cli.cpp — `--model` takes a bundled model's name as the GUI does (platform/model_paths.h):
// `sample --model moons` samples from assets/models/moons.safetensors of $DIFFSCOPE_ROOT, and a name that is
// neither a file nor bundled exits 2 (SEMANTICS §9) with a message that lists the bundled names.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "formats/npy.h"
#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

struct Result {
  int code = -1;
  std::string err;
};

// Runs `diffscope <args>` with DIFFSCOPE_ROOT at the repository, in the folder `cwd` (so that a bare name
// cannot be found as a file of the working directory).
Result run_cli(const test::TempDir& cwd, const test::TempDir& logs, const std::string& args) {
  const std::string e = logs.file("stderr");
  const std::string cmd = "cd '" + cwd.path() + "' && DIFFSCOPE_ROOT='" + test::repo_root() + "' '" +
                          test::cli_binary() + "' " + args + " >/dev/null 2>'" + e + "' </dev/null";
  const int status = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(e);
  std::stringstream s;
  s << f.rdbuf();
  r.err = s.str();
  return r;
}

bool moons_bundled() {
  return std::filesystem::exists(test::repo_root() + "/assets/models/moons.safetensors");
}

// 8 samples of the 2-D moons model after 2 steps: an (8, 2) array of finite numbers.
TEST(BundledModelCli, SampleTakesABundledName) {
  if (!moons_bundled()) GTEST_SKIP() << "assets/models/moons.safetensors absent";
  test::TempDir cwd, logs;
  const std::string out = cwd.file("x.npy");
  const Result r = run_cli(cwd, logs, "sample --model moons --n 8 --steps 2 --out '" + out + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const NpyFloat x = read_npy_float(out, "--out");
  ASSERT_EQ(x.shape.size(), 2u);
  EXPECT_EQ(x.shape[0], 8);
  EXPECT_EQ(x.shape[1], 2);
  for (float v : x.data) EXPECT_TRUE(std::isfinite(v));
}

// The same name works for `info`; an unknown name is exit 2 naming the value and listing "moons".
TEST(BundledModelCli, UnknownNameListsTheBundledNames) {
  if (!moons_bundled()) GTEST_SKIP() << "assets/models/moons.safetensors absent";
  test::TempDir cwd, logs;
  EXPECT_EQ(run_cli(cwd, logs, "info --model moons").code, 0);
  const Result r = run_cli(cwd, logs, "sample --model nosuchmodel --n 8 --steps 2 --out '" + cwd.file("y.npy") + "'");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err.rfind("diffscope: error: --model = nosuchmodel", 0), 0u) << r.err;
  EXPECT_NE(r.err.find("moons"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("digits8x8"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(cwd.file("y.npy")));
}

}  // namespace
}  // namespace diffscope
