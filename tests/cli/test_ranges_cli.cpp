// test_ranges_cli.cpp — every boundary of the CLI's ranges (SEMANTICS §3, §9): `sample` and
// `denoise` accept lo and hi and refuse lo - 1 and hi + 1 with exit 2 and one line naming the argument, the
// value and the range from base/ranges.h; a refused run writes nothing. t_start's range follows the model's
// schedule (T from the file's metadata), not a constant.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/npy.h"
#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

struct CliRun {
  int code = -1;
  std::string err;
};

class CliRanges : public ::testing::Test {
 protected:
  test::TempDir m_dir, m_logs;
  std::string m_golden = test::data_path("golden/d2_h256.safetensors");  // T = 1000, dim 2

  // env: variables set for this run only ("NAME=value ", through the shell).
  CliRun run(const std::string& args, const std::string& env = "") {
    const std::string e = m_logs.file("stderr");
    const std::string cmd = env + "'" + test::cli_binary() + "' " + args + " >/dev/null 2>'" + e + "' </dev/null";
    const int status = std::system(cmd.c_str());
    std::ifstream f(e);
    std::stringstream s;
    s << f.rdbuf();
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, s.str()};
  }
  // `sample` with `extra` to out.npy; returns the run and removes out.npy for the next call.
  CliRun sample(const std::string& model, const std::string& extra) {
    CliRun r = run("sample --model '" + model + "' --out '" + m_dir.file("out.npy") + "' " + extra);
    return r;
  }
  void expect_accepted(const std::string& model, const std::string& extra, int64_t rows) {
    SCOPED_TRACE(extra);
    const CliRun r = sample(model, extra);
    ASSERT_EQ(r.code, 0) << r.err;
    const NpyFloat x = read_npy_float(m_dir.file("out.npy"), "out");
    EXPECT_EQ(x.shape[0], rows);
    std::filesystem::remove(m_dir.file("out.npy"));
  }
  // Exit 2 with exactly one line "diffscope: error: <arg> = <value> is out of range; valid: [lo, hi]".
  void expect_refused(const std::string& model, const std::string& extra, const std::string& line) {
    SCOPED_TRACE(extra);
    const CliRun r = sample(model, extra);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "diffscope: error: " + line + "\n");
    EXPECT_TRUE(m_dir.entries().empty()) << "a refused run wrote something";
  }
};

TEST_F(CliRanges, SampleTStartBoundaries) {
  expect_accepted(m_golden, "--n 2 --t-start 0", 2);
  expect_accepted(m_golden, "--n 2 --t-start 999 --steps 3", 2);
  expect_refused(m_golden, "--n 2 --t-start -1", "--t-start = -1 is out of range; valid: [0, 999]");
  expect_refused(m_golden, "--n 2 --t-start 1000", "--t-start = 1000 is out of range; valid: [0, 999]");
}

// --frame is in [0, steps]; its default (the last frame) is not a value that can be typed (a newcomer trial found
// --frame -1 accepted as the last frame while -2 named [0, steps]).
TEST_F(CliRanges, SampleFrameBoundaries) {
  expect_accepted(m_golden, "--n 2 --t-start 9 --steps 5 --frame 0", 2);
  expect_accepted(m_golden, "--n 2 --t-start 9 --steps 5 --frame 5", 2);
  expect_refused(m_golden, "--n 2 --t-start 9 --steps 5 --frame -1", "--frame = -1 is out of range; valid: [0, 5]");
  expect_refused(m_golden, "--n 2 --t-start 9 --steps 5 --frame 6", "--frame = 6 is out of range; valid: [0, 5]");
}

TEST_F(CliRanges, SampleStepsBoundaries) {
  expect_accepted(m_golden, "--n 2 --t-start 9 --steps 1", 2);
  expect_accepted(m_golden, "--n 2 --t-start 9 --steps 10", 2);
  expect_refused(m_golden, "--n 2 --t-start 9 --steps 0", "--steps = 0 is out of range; valid: [1, 10]");
  expect_refused(m_golden, "--n 2 --t-start 9 --steps 11", "--steps = 11 is out of range; valid: [1, 10]");
  // The widest case: t_start = T-1 allows T steps.
  expect_accepted(m_golden, "--n 2 --t-start 999 --steps 1000 --sampler ddpm-mean", 2);
  expect_refused(m_golden, "--n 2 --t-start 999 --steps 1001", "--steps = 1001 is out of range; valid: [1, 1000]");
}

TEST_F(CliRanges, SampleEtaBoundaries) {
  expect_accepted(m_golden, "--n 2 --t-start 20 --eta 0", 2);
  expect_accepted(m_golden, "--n 2 --t-start 20 --eta 1", 2);
  expect_refused(m_golden, "--n 2 --t-start 20 --eta -0.001", "--eta = -0.001 is out of range; valid: [0, 1]");
  expect_refused(m_golden, "--n 2 --t-start 20 --eta 1.001", "--eta = 1.001 is out of range; valid: [0, 1]");
  expect_refused(m_golden, "--n 2 --t-start 20 --eta nan", "--eta = nan is out of range; valid: [0, 1]");
}

TEST_F(CliRanges, SampleCountBoundaries) {
  // A tiny network (hidden 4) so that n = 1e6 rows cost little; one step from t_start 0.
  const std::string tiny = test::eps_net_builder(2, 4).write(m_logs.file("tiny.safetensors"));
  expect_accepted(tiny, "--t-start 0 --n 1", 1);
  expect_accepted(tiny, "--t-start 0 --n 1000000", 1'000'000);
  expect_refused(tiny, "--t-start 0 --n 0", "--n = 0 is out of range; valid: [1, 1000000]");
  expect_refused(tiny, "--t-start 0 --n 1000001", "--n = 1000001 is out of range; valid: [1, 1000000]");
  expect_refused(tiny, "--t-start 0 --n -1", "--n = -1 is out of range; valid: [1, 1000000]");
}

// --threads (the CPU backend's threads, platform/cpu_threads.h): [1, 1024], refused before any work on every command
// that computes; results do not depend on it.
TEST_F(CliRanges, ThreadsBoundaries) {
  expect_accepted(m_golden, "--n 600 --t-start 20 --threads 1", 600);
  expect_accepted(m_golden, "--n 600 --t-start 20 --threads 1024", 600);
  expect_refused(m_golden, "--n 2 --t-start 20 --threads 0", "--threads = 0 is out of range; valid: [1, 1024]");
  expect_refused(m_golden, "--n 2 --t-start 20 --threads 1025", "--threads = 1025 is out of range; valid: [1, 1024]");
  expect_refused(m_golden, "--n 2 --t-start 20 --threads -3", "--threads = -3 is out of range; valid: [1, 1024]");
  std::vector<std::string> commands{"mlp3 --weights w --x x --out '" + m_dir.file("y.npy") + "'",
                                    "denoise --model m --x x --t-start t --steps 1 --out '" + m_dir.file("y.npy") + "'",
                                    "bench --quick"};
#ifdef DIFFSCOPE_HAVE_GUI
  commands.push_back("gui --headless --backend cpu");
#endif
  for (const std::string& cmd : commands) {
    const CliRun r = run(cmd + " --threads 0");
    EXPECT_EQ(r.code, 2) << cmd << ": " << r.err;
    EXPECT_EQ(r.err, "diffscope: error: --threads = 0 is out of range; valid: [1, 1024]\n") << cmd;
  }
  // the same samples at 1 and 3 threads (600 rows: three blocks)
  ASSERT_EQ(sample(m_golden, "--n 600 --t-start 300 --sampler ddpm --seed 4 --threads 1").code, 0);
  const NpyFloat one = read_npy_float(m_dir.file("out.npy"), "out");
  ASSERT_EQ(sample(m_golden, "--n 600 --t-start 300 --sampler ddpm --seed 4 --threads 3").code, 0);
  EXPECT_EQ(read_npy_float(m_dir.file("out.npy"), "out").data, one.data);
}

// A value that is not a number, or an option that does not exist: the same one line naming the argument, the
// value and the valid range, or the nearest option (a newcomer typed --n 1e3 and --setps; CLI11 said "Could not
// convert" and "The following arguments were not expected: 3 --setps").
TEST_F(CliRanges, NonNumbersAndUnknownOptionsNameTheRangeOrTheNearestOption) {
  expect_refused(m_golden, "--n 1e3", "--n = '1e3' is not an integer; valid: [1, 1000000]; see diffscope sample --help");
  expect_refused(m_golden, "--n 2 --eta x", "--eta = 'x' is not a number; valid: [0, 1]; see diffscope sample --help");
  // CLI11 read "" as 0 and a number past 64 bits as the largest one: the message named a value nobody typed.
  expect_refused(m_golden, "--n 99999999999999999999",
                 "--n = '99999999999999999999' is not an integer; valid: [1, 1000000]; see diffscope sample --help");
  expect_refused(m_golden, "--n ''", "--n = '' is not an integer; valid: [1, 1000000]; see diffscope sample --help");
  expect_refused(m_golden, "--n 2 --setps 3",
                 "--setps is not an option of diffscope sample (did you mean --steps?); see diffscope sample --help");
  expect_refused(m_golden, "--n 2 --bogus 3", "--bogus is not an option of diffscope sample; see diffscope sample --help");
#ifdef DIFFSCOPE_HAVE_GUI
  // The picture flags take their range from the settings schema (base/ranges.h: point size [1, 12]).
  const std::string png = " --png '" + m_dir.file("p.png") + "'";
  expect_refused(m_golden, "--n 2 --point-size nan" + png, "--point-size = 'nan' is not a finite number; valid: [1, 12]");
  expect_refused(m_golden, "--n 2 --point-alpha inf" + png,
                 "--point-alpha = 'inf' is not a finite number; valid: [0.05, 1]");
  // The headless GUI opens EGL before it reads its options; Mesa's dlopen'ed driver leaks a few bytes that
  // LeakSanitizer reports (exit 1) in the ASan build (scripts/test.sh checks the headless app's own leaks apart,
  // with the driver kept loaded), so this run does not ask for the leak report.
  const CliRun gui = run("gui --headless --no-persist --backend cpu --n 1e3", "ASAN_OPTIONS=detect_leaks=0 ");
  EXPECT_EQ(gui.code, 2);
  EXPECT_NE(gui.err.find("diffscope: error: --n = '1e3' is not an integer; valid: [1, 1000000]; see diffscope gui --help\n"),
            std::string::npos)
      << gui.err;
  // A near miss of a command (`diffscope smaple`) names the command it probably meant (it said "diffscope takes
  // options only", although diffscope takes a FILE).
  const CliRun typo = run("smaple");
  EXPECT_EQ(typo.code, 2);
  EXPECT_NE(typo.err.find("unexpected argument 'smaple' (diffscope takes options and one FILE: an existing file, "
                          ".safetensors, .png or .json; did you mean the command 'sample'?)"),
            std::string::npos)
      << typo.err;
#endif
}

TEST_F(CliRanges, TStartRangeComesFromTheModelsSchedule) {
  // T = 50 from the file's metadata (SEMANTICS §1): t_start in [0, 49], steps up to 50.
  const std::string m = test::eps_net_builder(2, 4).meta("T", "50").write(m_logs.file("t50.safetensors"));
  expect_accepted(m, "--n 2 --t-start 49 --steps 50 --sampler ddpm-mean", 2);
  expect_refused(m, "--n 2 --t-start 50", "--t-start = 50 is out of range; valid: [0, 49]");
  expect_refused(m, "--n 2 --t-start 49 --steps 51", "--steps = 51 is out of range; valid: [1, 50]");
}

// denoise (SEMANTICS §4): t_start[b] in [0, T-1], S >= 1 (no upper bound: finished rows freeze).
TEST_F(CliRanges, DenoiseBoundaries) {
  const std::string x = m_logs.file("x.npy");
  const std::vector<float> xv = {0.1f, -0.2f, 0.3f, 0.4f};
  write_npy_float(x, {2, 2}, xv.data(), "x");
  auto t_file = [&](int64_t a, int64_t b) {
    const std::string p = m_logs.file("t" + std::to_string(a) + "_" + std::to_string(b) + ".npy");
    std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }";
    header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
    std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
    bytes += static_cast<char>(header.size() & 0xff);
    bytes += static_cast<char>(header.size() >> 8);
    bytes += header + test::raw_bytes(std::vector<int64_t>{a, b});
    test::write_bytes(p, bytes);
    return p;
  };
  auto denoise = [&](const std::string& t, int steps) {
    return run("denoise --model '" + m_golden + "' --x '" + x + "' --t-start '" + t + "' --steps " +
               std::to_string(steps) + " --out '" + m_dir.file("d.npy") + "'");
  };
  CliRun r = denoise(t_file(0, 999), 1);
  EXPECT_EQ(r.code, 0) << r.err;
  r = denoise(t_file(0, 999), 1000);
  EXPECT_EQ(r.code, 0) << r.err;
  std::filesystem::remove(m_dir.file("d.npy"));

  r = denoise(t_file(-1, 5), 1);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "diffscope: error: --t-start[0] = -1 is out of range; valid: [0, 999]\n");
  r = denoise(t_file(5, 1000), 1);
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "diffscope: error: --t-start[1] = 1000 is out of range; valid: [0, 999]\n");
  r = denoise(t_file(0, 999), 0);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--steps = 0 is out of range"), std::string::npos) << r.err;
  EXPECT_TRUE(m_dir.entries().empty()) << "a refused denoise wrote something";
}

// Inputs a newcomer trial found accepted with exit 0: each is refused now, naming the argument, and nothing is written.
TEST_F(CliRanges, KernelOptionsFromTheEnvironmentAreCheckedWithoutADevice) {
  const CliRun r = run("sample --model '" + m_golden + "' --n 2 --steps 2 --out '" + m_dir.file("out.npy") + "'",
                       "DIFFSCOPE_KERNEL_OPTIONS=bogus=1 ");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("DIFFSCOPE_KERNEL_OPTIONS: kernel option 'bogus' is not known; valid: "), std::string::npos)
      << r.err;
  EXPECT_TRUE(m_dir.entries().empty());
}

TEST_F(CliRanges, AFileThatIsNotASidecarIsRefusedAsConfig) {
  const std::string cfg = m_logs.file("scheduler_config.json");  // a diffusers config given to --config by mistake
  std::ofstream(cfg) << R"({"_class_name": "DDIMScheduler", "clip_sample": false, "timestep_spacing": "trailing"})";
  const std::string empty = m_logs.file("empty.json");
  std::ofstream(empty) << "{}";
  for (const std::string& f : {cfg, empty}) {
    SCOPED_TRACE(f);
    const CliRun r = sample(m_golden, "--n 2 --steps 2 --config '" + f + "'");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("--config " + f + ": not a diffscope sidecar: it has none of a sidecar's keys"),
              std::string::npos) << r.err;
    EXPECT_TRUE(m_dir.entries().empty());
  }
  EXPECT_NE(sample(m_golden, "--n 2 --config '" + cfg + "'").err.find("that is --scheduler-config"), std::string::npos);
}

TEST_F(CliRanges, GuiOptionsOutOfTheirRange) {
  CliRun r = run("gui --frames -1");  // a window that never closed
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--frames: Value -1 not in range 1 to 1000000000"), std::string::npos) << r.err;
  if (run("gui --help").err.find("not an option") != std::string::npos) GTEST_SKIP() << "a build without the GUI";
  r = run("gui --headless --no-persist --script '" + m_logs.path() + "'");  // a folder ran as an empty script
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "diffscope: error: --script " + m_logs.path() +
                       ": is a folder; valid: a script file (diffscope gui --script-help)\n");
  // --backend cuda by name without a device ran on the CPU with exit 0; with a device the run reaches the script
  r = run("gui --headless --no-persist --backend cuda --script '" + m_logs.file("none.txt") + "'");
  if (r.code == 3) EXPECT_NE(r.err.find("--backend cuda: no CUDA device is usable here"), std::string::npos) << r.err;
  else EXPECT_NE(r.err.find("none.txt: cannot be read"), std::string::npos) << r.err;
}

TEST_F(CliRanges, CameraAspectZeroTypedIsRefused) {  // 0 is a sidecar's "not set", never a typed value
  if (std::system(("'" + test::cli_binary() + "' sample --help | grep -q -- --camera-aspect").c_str()) != 0)
    GTEST_SKIP() << "a build without sample --png";
  const CliRun r = sample(m_golden, "--n 2 --steps 2 --png '" + m_dir.file("p.png") + "' --camera-aspect 0");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(r.err, "diffscope: error: --camera-aspect = 0 is out of range; valid: [0.001, 1000]\n");
  EXPECT_TRUE(m_dir.entries().empty());
}

}  // namespace
}  // namespace diffscope
