// test_compute_paths.cpp — the app's GPU compute paths (interop and host staging) at their faults, through the
// headless UI on a real device (they skip where there is no CUDA device, e.g. CI):
//   - CUDA out of memory when the user asks for too many samples: a clear message, and the app keeps the
//     previous session (the same settings, the same numbers, bit for bit);
//   - interop registration failing (DIFFSCOPE_FAULT=interop_register, platform/fault_injection.h): the run goes
//     on through host staging and gives exactly the numbers of the interop path;
//   - a run whose samples overflow: found at the run's end on both GPU paths (SEMANTICS §9);
//   - a GL context that is not on the CUDA device (Mesa's EGL on an NVIDIA machine, when the test is given
//     Mesa's glvnd vendor file in DIFFSCOPE_TEST_MESA_EGL_VENDOR): staging, the same numbers.
#include <gtest/gtest.h>

#include <filesystem>

#include "gui_test_util.h"
#include "shell/compute_select.h"

namespace diffscope {
namespace {

using guitest::Result;

class ComputePaths : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!shell::cuda_available()) GTEST_SKIP() << "no CUDA device";
  }
  test::TempDir m_dir, m_logs;
  std::string file(const std::string& name) const { return m_dir.file(name); }
  Result run_gui(const std::string& script, const std::string& args, const std::string& env = "") {
    std::ofstream(file("script.txt")) << script;
    return guitest::run_cli("gui --headless --backend cuda --no-persist --size 640x480 " + args + " --script '" +
                                file("script.txt") + "'",
                            m_logs.path(), env);
  }
};

TEST_F(ComputePaths, OutOfGpuMemoryKeepsThePreviousSession) {
  const std::string model = test::repo_root() + "/assets/models/digits8x8.safetensors";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "no bundled digits8x8 model";
  // 10^6 rows of dim 64 with 1000 steps in one launch: 256 MB per frame, 256 GB of launch frames.
  const Result r = run_gui("set steps 1000\nset t_start 999\nset n 4096\nset spl 1000\nwait_complete 3000\n"
                           "expect computed == 1000\nexport state " + file("before.npy") + "\nprint\n"
                           "set n 1000000\nframes 3\nprint\nwait_complete 3000\n"
                           "expect n == 4096\nexpect computed == 1000\nexpect complete == 1\n"
                           "export state " + file("after.npy") + "\nprint\nexpect gl_errors == 0\n",
                           "--model '" + model + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("out of GPU memory"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("kept the previous settings: n 4096 (asked 1000000)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"path\": \"cuda"), std::string::npos) << r.out;  // still on the GPU
  const std::string before = guitest::slurp(file("before.npy")), after = guitest::slurp(file("after.npy"));
  EXPECT_GE(before.size(), 4096 * 64 * 4u);
  EXPECT_TRUE(before == after) << "the kept session's final state differs from the one before the failure";
}

// The same run on the interop path and on the staging path must give the same bytes.
std::string staging_script(const std::string& dir) {
  return "set n 5000\nset steps 50\nset t_start 999\nset spl 7\nset budget_mb 16\nwait_complete 3000\n"
         "expect computed == 50\nexport state " + dir + "/state.npy\nexport trajectory " + dir + "/traj.npy\n"
         "print\nexpect gl_errors == 0\n";
}

// A run whose samples overflow (SEMANTICS §9) on the GPU paths, which do not check each step: the run's end is
// read back and the kept frames bisected. The model of test::write_overflowing_model: eps = 0 for t >= 51 and inf
// for t <= 50, so ddim from t_start 99 in 100 steps (t = 99 - k at step k) first overflows in frame 50; every
// frame is kept, so the bisection names it exactly. Interop, then staging (DIFFSCOPE_FAULT=interop_register).
TEST_F(ComputePaths, OverflowingRunIsFoundAtItsEnd) {
  const std::string model = test::write_overflowing_model(file("overflow.safetensors"));
  for (const char* env : {"", "DIFFSCOPE_FAULT=interop_register"}) {
    SCOPED_TRACE(env);
    const Result r = run_gui("wait_complete 3000\nexpect computed == 50\nexpect complete == 0\nprint\n"
                             "export snapshot " + file("a.png") + "\nexpect gl_errors == 0\n",
                             "--n 64 --t-start 99 --steps 100 --model '" + model + "'", env);
    EXPECT_EQ(r.code, 2) << r.out << r.err;  // the failed wait_complete and snapshot
    EXPECT_NE(r.out.find("samples overflowed at step 50 of 100 (from t = 50): sample 0, coordinate 0 = "),
              std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("expect "), std::string::npos) << r.out;  // the expectations held
    EXPECT_NE(r.out.find("\"path\": \"cuda"), std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(file("a.png")));
  }
}

TEST_F(ComputePaths, InteropRegistrationFailureFallsBackToStaging) {
  const std::string model = guitest::model_2d();
  std::filesystem::create_directories(file("interop"));
  std::filesystem::create_directories(file("staging"));
  const Result a = run_gui(staging_script(file("interop")), "--model '" + model + "'");
  ASSERT_EQ(a.code, 0) << a.out << a.err;
  ASSERT_NE(a.out.find("\"path\": \"cuda + interop"), std::string::npos) << a.out;
  const Result b = run_gui(staging_script(file("staging")), "--model '" + model + "'", "DIFFSCOPE_FAULT=interop_register");
  ASSERT_EQ(b.code, 0) << b.out << b.err;
  EXPECT_NE(b.out.find("\"path\": \"cuda + host staging: interop registration failed (unknown error): host staging"),
            std::string::npos)
      << b.out;
  for (const char* f : {"/state.npy", "/traj.npy"}) {
    const std::string x = guitest::slurp(file("interop") + f), y = guitest::slurp(file("staging") + f);
    EXPECT_GT(x.size(), 128u) << f;
    EXPECT_TRUE(x == y) << f << " differs between interop and staging";
  }
}

TEST_F(ComputePaths, MesaGlOnAnNvidiaMachineUsesStaging) {
  const char* vendor = std::getenv("DIFFSCOPE_TEST_MESA_EGL_VENDOR");
  if (!vendor || !*vendor) GTEST_SKIP() << "set DIFFSCOPE_TEST_MESA_EGL_VENDOR to Mesa's glvnd EGL vendor file";
  const std::string model = guitest::model_2d();
  std::filesystem::create_directories(file("interop"));
  std::filesystem::create_directories(file("mesa"));
  const Result a = run_gui(staging_script(file("interop")), "--model '" + model + "'");
  ASSERT_EQ(a.code, 0) << a.out << a.err;
  const Result b = run_gui(staging_script(file("mesa")), "--model '" + model + "'",
                           std::string("__EGL_VENDOR_LIBRARY_FILENAMES='") + vendor + "'");
  ASSERT_EQ(b.code, 0) << b.out << b.err;
  EXPECT_NE(b.out.find("is not on a CUDA device"), std::string::npos) << b.out;
  EXPECT_NE(b.out.find("host staging"), std::string::npos) << b.out;
  for (const char* f : {"/state.npy", "/traj.npy"})
    EXPECT_TRUE(guitest::slurp(file("interop") + f) == guitest::slurp(file("mesa") + f)) << f;
}

}  // namespace
}  // namespace diffscope
