// test_cli.cpp — the diffscope binary end to end (SEMANTICS §4, §5, §3, §9): golden inputs reproduce
// PyTorch's float64 outputs; bad input exits 2 naming the argument and leaves nothing at the output path;
// a missing CUDA build exits 3. Runs the binary from test_paths.h cli_binary() in a temporary folder.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "formats/npy.h"
#include "formats/npy_parse.h"
#include "io_test_util.h"
#include "model_fixtures.h"
#include "test_paths.h"
#include <nlohmann/json.hpp>
#include "base/philox_normal.h"

namespace diffscope {
namespace {

struct Result {
  int code = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string golden(const std::string& name) { return test::data_path("golden/" + name); }

class Cli : public ::testing::Test {
 protected:
  test::TempDir m_dir;
  test::TempDir m_logs;  // stdout/stderr captures, kept apart from the outputs

  // Runs `diffscope <args>` (args already shell-quoted where needed).
  Result run(const std::string& args) {
    Result r;
    const std::string o = m_logs.file("stdout"), e = m_logs.file("stderr");
    const std::string cmd = "'" + test::cli_binary() + "' " + args + " >'" + o + "' 2>'" + e + "' </dev/null";
    const int status = std::system(cmd.c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(o);
    r.err = slurp(e);
    return r;
  }
  std::string out(const std::string& name) const { return m_dir.file(name); }

  // Exit 2, one "diffscope: error:" line naming `arg`, and nothing written in the output folder.
  void expect_bad_input(const std::string& args, const std::string& arg, const std::string& value = "") {
    SCOPED_TRACE(args);
    const Result r = run(args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("diffscope: error: ", 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find(arg), std::string::npos) << r.err;
    if (!value.empty()) EXPECT_NE(r.err.find(value), std::string::npos) << r.err;
    EXPECT_TRUE(m_dir.entries().empty()) << "something was written to " << m_dir.path();
  }
};

using test::write_npy_i64;

double rel_err_vs_golden(const std::string& got_path, const std::string& expected) {
  const NpyDouble got = read_npy_double(got_path, "got");
  const NpyDouble want = read_npy_double(golden(expected), "expected");
  EXPECT_EQ(got.shape, want.shape);
  if (got.shape != want.shape) return 1.0;
  return test::rel_frobenius(got.data, want.data);
}

TEST_F(Cli, DenoiseReproducesGolden) {
  for (const char* c : {"ref_b8_d64_h256_s16", "mixed_t_start_s16", "d3_h40_s16"}) {
    const std::string name = c;
    const std::string model = name == "d3_h40_s16" ? "d3_h40.safetensors" : "ref_d64_h256.safetensors";
    const Result r = run("denoise --model " + golden(model) + " --x " + golden(name + "_x.npy") + " --t-start " +
                         golden(name + "_t_start.npy") + " --steps 16 --out " + out(name + ".npy") +
                         " --trajectory " + out(name + "_traj.npy"));
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_LT(rel_err_vs_golden(out(name + ".npy"), name + "_expected.npy"), 1e-5) << name;
    // Trajectory (S+1, B, dim): frame 0 the input, frame S the output.
    const NpyFloat traj = read_npy_float(out(name + "_traj.npy"), "traj");
    const NpyFloat x = read_npy_float(golden(name + "_x.npy"), "x");
    const NpyFloat y = read_npy_float(out(name + ".npy"), "y");
    ASSERT_EQ(traj.shape, (std::vector<int64_t>{17, x.shape[0], x.shape[1]}));
    const size_t frame = x.data.size();
    EXPECT_TRUE(std::equal(x.data.begin(), x.data.end(), traj.data.begin()));
    EXPECT_TRUE(std::equal(y.data.begin(), y.data.end(), traj.data.begin() + 16 * frame));
  }
}

TEST_F(Cli, Mlp3ReproducesGolden) {
  for (const std::string name : {"mlp3_b16_48_64_40_24", "mlp3_b1_7_33_5_3"}) {
    const Result r = run("mlp3 --weights " + golden(name + "_weights.safetensors") + " --x " + golden(name + "_x.npy") +
                         " --out " + out(name + ".npy"));
    ASSERT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_LT(rel_err_vs_golden(out(name + ".npy"), name + "_expected.npy"), 1e-5) << name;
  }
}

TEST_F(Cli, SampleReproducesGoldenWithStridedTrajectory) {
  const Result r = run("sample --model " + golden("d2_h256.safetensors") +
                       " --sampler ddim --eta 1 --steps 50 --t-start 999 --seed 1234 --n 37 --out " + out("s.npy") +
                       " --trajectory " + out("traj.npy") + " --trajectory-stride 20");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(rel_err_vs_golden(out("s.npy"), "sample_d2_ddim_eta1_n50_expected.npy"), 1e-5);
  // Frames 0, 20, 40 and the last (50): 4 frames; frame 0 is the start noise, the last the output.
  const NpyDouble traj = read_npy_double(out("traj.npy"), "traj");
  ASSERT_EQ(traj.shape, (std::vector<int64_t>{4, 37, 2}));
  const NpyDouble start = read_npy_double(golden("sample_d2_ddim_eta1_n50_x_start.npy"), "start");
  EXPECT_LT(test::rel_frobenius(std::vector<double>(traj.data.begin(), traj.data.begin() + 74), start.data), 1e-6);
  const NpyDouble s = read_npy_double(out("s.npy"), "s");
  EXPECT_EQ(std::vector<double>(traj.data.begin() + 3 * 74, traj.data.end()), s.data);
  // Every frame (stride 1, N + 1 = 51 frames) holds the strided frames bit for bit.
  const Result all = run("sample --model " + golden("d2_h256.safetensors") +
                         " --sampler ddim --eta 1 --steps 50 --t-start 999 --seed 1234 --n 37 --out " + out("s1.npy") +
                         " --trajectory " + out("traj1.npy"));
  ASSERT_EQ(all.code, 0) << all.err;
  const NpyDouble traj1 = read_npy_double(out("traj1.npy"), "traj1");
  ASSERT_EQ(traj1.shape, (std::vector<int64_t>{51, 37, 2}));
  const int kept[] = {0, 20, 40, 50};
  for (int i = 0; i < 4; ++i)
    EXPECT_TRUE(std::equal(traj.data.begin() + i * 74, traj.data.begin() + (i + 1) * 74,
                           traj1.data.begin() + kept[i] * 74))
        << "frame " << kept[i];

  // The ddpm default N = t_start + 1 (100 steps from 99).
  const Result d = run("sample --model " + golden("d2_h256.safetensors") +
                       " --sampler ddpm --t-start 99 --seed 77 --n 37 --out " + out("d.npy"));
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_LT(rel_err_vs_golden(out("d.npy"), "sample_d2_ddpm_t99_n100_expected.npy"), 1e-5);
}

#ifdef DIFFSCOPE_HAVE_CUDA
// The same golden cases through --backend cuda (fp32): skipped when the machine has no CUDA device (exit 3).
TEST_F(Cli, CudaBackendReproducesGolden) {
  const std::string name = "ref_b8_d64_h256_s16";
  const Result r = run("denoise --backend cuda --model " + golden("ref_d64_h256.safetensors") + " --x " +
                       golden(name + "_x.npy") + " --t-start " + golden(name + "_t_start.npy") + " --steps 16 --out " +
                       out("y.npy"));
  if (r.code == 3) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_LT(rel_err_vs_golden(out("y.npy"), name + "_expected.npy"), 1e-5);
  const Result m = run("mlp3 --backend cuda --weights " + golden("mlp3_b16_48_64_40_24_weights.safetensors") + " --x " +
                       golden("mlp3_b16_48_64_40_24_x.npy") + " --out " + out("m.npy"));
  ASSERT_EQ(m.code, 0) << m.err;
  EXPECT_LT(rel_err_vs_golden(out("m.npy"), "mlp3_b16_48_64_40_24_expected.npy"), 1e-5);
  const Result s = run("sample --backend cuda --model " + golden("d2_h256.safetensors") +
                       " --sampler ddim --eta 1 --steps 50 --seed 1234 --n 37 --out " + out("s.npy"));
  ASSERT_EQ(s.code, 0) << s.err;
  EXPECT_LT(rel_err_vs_golden(out("s.npy"), "sample_d2_ddim_eta1_n50_expected.npy"), 1e-5);
}

// A CUDA build on a machine without a usable GPU (CI) refuses --backend cuda with exit
// 3, says what to do instead, and writes nothing. Skipped where a device runs it.
TEST_F(Cli, CudaBackendWithoutDeviceExits3AndSaysWhatToDo) {
  const Result r = run("sample --backend cuda --model " + golden("d2_h256.safetensors") + " --n 8 --steps 2 --out " +
                       out("s.npy"));
  if (r.code == 0) GTEST_SKIP() << "a CUDA device ran it";
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("--backend cpu"), std::string::npos) << r.err;
  EXPECT_TRUE(m_dir.entries().empty());
}
#endif

TEST_F(Cli, DenoiseRefusesBadInput) {
  test::TempDir in;
  const std::string model = golden("d2_h256.safetensors");
  const std::string x = in.file("x.npy"), x3 = in.file("x3.npy"), xnan = in.file("xnan.npy");
  write_npy_float(x, {2, 2}, std::vector<float>{0.1f, 0.2f, 0.3f, 0.4f}.data(), "x");
  write_npy_float(x3, {2, 3}, std::vector<float>(6, 0.5f).data(), "x");
  write_npy_float(xnan, {2, 2}, std::vector<float>{0.1f, NAN, 0.3f, 0.4f}.data(), "x");
  auto t_file = [&](int64_t bad) {
    const std::string p = in.file("t" + std::to_string(bad) + ".npy");
    write_npy_i64(p, {5, bad});
    return p;
  };
  const std::string ok_t = t_file(7);
  const std::string base = "denoise --model " + model + " --out " + out("y.npy");
  for (int64_t bad : {int64_t(-1), int64_t(1000), int64_t(5000)})
    expect_bad_input(base + " --x " + x + " --t-start " + t_file(bad) + " --steps 4", "--t-start[1] = " + std::to_string(bad),
                     "[0, 999]");
  expect_bad_input(base + " --x " + x + " --t-start " + ok_t + " --steps 0", "--steps", "0");
  expect_bad_input(base + " --x " + xnan + " --t-start " + ok_t + " --steps 4", "--x[0][1]", "nan");
  expect_bad_input(base + " --x " + x3 + " --t-start " + ok_t + " --steps 4", "--x", "width 3");
  // x as SEMANTICS §6 says for both front ends: empty said so, integers refused naming the dtype
  const std::string x0 = in.file("x0.npy"), xi = in.file("xi.npy");
  test::write_bytes(x0, npy_header("<f4", {0, 2}));
  test::write_bytes(xi, npy_header("<i4", {1, 2}) + std::string(8, '\0'));
  expect_bad_input(base + " --x " + x0 + " --t-start " + ok_t + " --steps 4", "is empty (shape (0, 2))",
                   "valid: a float16, float32 or float64 array (B, dim) with B >= 1");
  expect_bad_input(base + " --x " + xi + " --t-start " + ok_t + " --steps 4", "dtype '<i4'", "'<f2', '<f4', '<f8'");
  expect_bad_input(base + " --x " + in.file("missing.npy") + " --t-start " + ok_t + " --steps 4", "--x");
  expect_bad_input(base + " --x " + x + " --t-start " + ok_t + " --steps 4 --precision bf16", "--precision bf16");
  expect_bad_input(base + " --x " + x + " --t-start " + ok_t + " --steps 4 --backend tpu", "--backend");
  expect_bad_input(base + " --x " + x + " --t-start " + ok_t + " --steps 4 --bogus", "--bogus");
  // Unwritable output paths: a missing folder, a folder in place of the file.
  expect_bad_input("denoise --model " + model + " --x " + x + " --t-start " + ok_t + " --steps 4 --out " +
                       out("no/such/dir/y.npy"),
                   "--out");
  expect_bad_input("denoise --model " + model + " --x " + x + " --t-start " + ok_t + " --steps 4 --out " + m_dir.path(),
                   "--out");
  // A valid run after all that writes exactly the output.
  const Result r = run(base + " --x " + x + " --t-start " + ok_t + " --steps 4");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(m_dir.entries(), std::vector<std::string>{"y.npy"});
}

TEST_F(Cli, SampleFromDataStartsAtNoisedData) {
  // eps = 0 (zero network): one ddim step from t_start = 0 maps x = sqrt(abar0) d + sqrt(1-abar0) z to
  // x / sqrt(abar0) = d + sqrt((1-abar0)/abar0) z, with z from Philox step_key T + 1 (SEMANTICS §3, §7).
  test::TempDir in;
  const int dim = 2, hidden = 4, n = 5;
  const std::vector<float> data{1.f, 2.f, -3.f, 4.f, 0.5f, -0.25f};  // 3 data rows
  test::StBuilder b;
  b.add_f32("eps_net.0.weight", {hidden, dim + 1}, std::vector<float>(hidden * (dim + 1), 0.f))
      .add_f32("eps_net.0.bias", {hidden}, std::vector<float>(hidden, 0.f))
      .add_f32("eps_net.2.weight", {hidden, hidden}, std::vector<float>(hidden * hidden, 0.f))
      .add_f32("eps_net.2.bias", {hidden}, std::vector<float>(hidden, 0.f))
      .add_f32("eps_net.4.weight", {dim, hidden}, std::vector<float>(dim * hidden, 0.f))
      .add_f32("eps_net.4.bias", {dim}, std::vector<float>(dim, 0.f))
      .add_f32("data_samples", {3, dim}, data);
  const std::string model = b.write(in.file("m.safetensors"));
  const Result r = run("sample --model " + model + " --from-data --t-start 0 --steps 1 --seed 5 --n 5 --out " +
                       out("s.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  const NpyDouble x = read_npy_double(out("s.npy"), "s");
  ASSERT_EQ(x.shape, (std::vector<int64_t>{n, dim}));
  const double beta0 = 1e-4, scale = std::sqrt(beta0 / (1 - beta0));  // abar0 = 1 - beta0
  for (int i = 0; i < n; ++i) {
    float z[dim];
    philox_normal_row(5, i, 1001, dim, z);
    for (int d = 0; d < dim; ++d) EXPECT_NEAR(x.data[i * dim + d], data[(i % 3) * dim + d] + scale * z[d], 1e-5);
  }
}

TEST_F(Cli, SampleRefusesBadInput) {
  const std::string base = "sample --model " + golden("d2_h256.safetensors") + " --n 3 --out " + out("s.npy");
  expect_bad_input(base + " --steps 0", "--steps = 0", "[1, 1000]");
  expect_bad_input(base + " --t-start 10 --steps 12", "--steps = 12", "[1, 11]");
  expect_bad_input(base + " --t-start 1000", "--t-start = 1000", "[0, 999]");
  expect_bad_input(base + " --t-start -1", "--t-start = -1", "[0, 999]");
  expect_bad_input(base + " --eta 1.5", "--eta = 1.5", "[0, 1]");
  expect_bad_input(base + " --sampler euler", "--sampler");
  expect_bad_input(base + " --seed -1", "--seed = -1");
  expect_bad_input(base + " --seed 18446744073709551616", "--seed = 18446744073709551616", "out of range");
  expect_bad_input(base + " --seed abc", "--seed = 'abc'", "is not an integer");  // not "out of range"
  expect_bad_input(base + " --trajectory-stride 0 --trajectory " + out("t.npy"), "--trajectory-stride");
  expect_bad_input(base + " --from-data", "--from-data");  // the golden models carry no data_samples
  expect_bad_input("sample --model " + golden("d2_h256.safetensors") + " --n 0 --out " + out("s.npy"), "--n = 0");
  expect_bad_input("sample --model " + golden("d2_h256.safetensors") + " --n 3 --out " + out("nodir/s.npy"), "--out");
}

TEST_F(Cli, SampleSaysWhatItWroteAndParseErrorsPointAtTheSubcommandsHelp) {
  // One closing line with the file, its shape (n, dim) and the time; a parse error names
  // `diffscope sample --help`, not the top-level help.
  const Result r = run("sample --model " + golden("d2_h256.safetensors") + " --n 37 --steps 5 --out " + out("s.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("wrote " + out("s.npy") + " (37, 2) in "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(5 steps, ddim, cpu)"), std::string::npos) << r.err;
  // One step is "1 step" (the newcomer trial read "1 steps").
  const Result one = run("sample --model " + golden("d2_h256.safetensors") + " --n 3 --steps 1 --out " + out("s1.npy"));
  ASSERT_EQ(one.code, 0) << one.err;
  EXPECT_NE(one.err.find("(1 step, ddim, cpu)"), std::string::npos) << one.err;
  const Result bad = run("sample --model " + golden("d2_h256.safetensors") + " --bogus --out " + out("s.npy"));
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("see diffscope sample --help"), std::string::npos) << bad.err;
}

TEST_F(Cli, Mlp3RefusesBiasAndWrongWidth) {
  test::TempDir in;
  const std::string w = in.file("w.safetensors"), wb = in.file("wb.safetensors"), x = in.file("x.npy");
  test::StBuilder b;
  b.add_f32("fc1.weight", {4, 3}, std::vector<float>(12, 0.1f))
      .add_f32("fc2.weight", {5, 4}, std::vector<float>(20, 0.1f))
      .add_f32("fc3.weight", {2, 5}, std::vector<float>(10, 0.1f));
  b.write(w);
  b.add_f32("fc1.bias", {4}, std::vector<float>(4, 0.f)).write(wb);
  write_npy_float(x, {1, 3}, std::vector<float>{1.f, 2.f, 3.f}.data(), "x");
  expect_bad_input("mlp3 --weights " + wb + " --x " + x + " --out " + out("y.npy"), "fc1.bias");
  const std::string x4 = in.file("x4.npy");
  write_npy_float(x4, {1, 4}, std::vector<float>(4, 1.f).data(), "x");
  expect_bad_input("mlp3 --weights " + w + " --x " + x4 + " --out " + out("y.npy"), "--x", "width 4");
  const Result r = run("mlp3 --weights " + w + " --x " + x + " --out " + out("y.npy"));
  ASSERT_EQ(r.code, 0) << r.err;
  // relu(relu(x W1^T) W2^T) W3^T with every weight 0.1: 0.6 -> 0.24 -> 0.12 per output.
  const NpyDouble y = read_npy_double(out("y.npy"), "y");
  ASSERT_EQ(y.shape, (std::vector<int64_t>{1, 2}));
  for (double v : y.data) EXPECT_NEAR(v, 0.12, 1e-6);
}

TEST_F(Cli, TrajectoryTooLargeForMemoryExits3) {
  // (S+1, B, dim) = (2^31, 8, 64) float32 is 4.4 TB: refused before any work, nothing written.
  const std::string name = "ref_b8_d64_h256_s16";
  const Result r = run("denoise --model " + golden("ref_d64_h256.safetensors") + " --x " + golden(name + "_x.npy") +
                       " --t-start " + golden(name + "_t_start.npy") + " --steps 2147483647 --out " + out("y.npy") +
                       " --trajectory " + out("t.npy"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("--trajectory"), std::string::npos) << r.err;
  EXPECT_TRUE(m_dir.entries().empty());
}

#ifdef DIFFSCOPE_HAVE_GUI
// GUI builds: `sample --png` renders the run headless (EGL) into a PNG with a JSON sidecar that records the
// run; skipped where no headless GL context exists (exit 3).
TEST_F(Cli, SamplePngWritesPictureAndSidecar) {
  const std::string base = "sample --model " + golden("d2_h256.safetensors") + " --n 50 --steps 10 --seed 3 --out " +
                           out("s.npy") + " --png " + out("s.png");
  expect_bad_input(base + " --size 10x10", "--size");
  const Result r = run(base + " --size 64x48");
  if (r.code == 3) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string png = slurp(out("s.png"));
  ASSERT_GE(png.size(), 24u);
  EXPECT_EQ(png.substr(1, 3), "PNG");
  const auto be32 = [&](size_t at) {
    return (uint32_t(uint8_t(png[at])) << 24) | (uint32_t(uint8_t(png[at + 1])) << 16) |
           (uint32_t(uint8_t(png[at + 2])) << 8) | uint32_t(uint8_t(png[at + 3]));
  };
  EXPECT_EQ(be32(16), 64u);  // IHDR width
  EXPECT_EQ(be32(20), 48u);  // IHDR height
  const nlohmann::json j = nlohmann::json::parse(slurp(out("s.json")));
  EXPECT_EQ(j.at("sampler"), "ddim");
  EXPECT_EQ(j.at("steps"), 10);
  EXPECT_EQ(j.at("seed"), 3);
  EXPECT_EQ(j.at("n"), 50);
  std::vector<std::string> entries = m_dir.entries();
  std::sort(entries.begin(), entries.end());
  EXPECT_EQ(entries, (std::vector<std::string>{"s.json", "s.npy", "s.png"}));
}
#endif

TEST_F(Cli, BackendAndUsageExitCodes) {
  const std::string args = "denoise --model " + golden("d2_h256.safetensors") + " --x " + golden("d2_h256_s16_x.npy") +
                           " --t-start " + golden("d2_h256_s16_t_start.npy") + " --steps 16 --out " + out("y.npy") +
                           " --backend cuda";
#ifndef DIFFSCOPE_HAVE_CUDA
  const Result r = run(args);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("--backend cuda"), std::string::npos) << r.err;
  EXPECT_TRUE(m_dir.entries().empty());
#endif
  const Result help = run("--help");
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("denoise"), std::string::npos);
  const Result sub_help = run("sample --help");
  EXPECT_EQ(sub_help.code, 0);
  EXPECT_NE(sub_help.out.find("--trajectory-stride"), std::string::npos);
  EXPECT_EQ(run("frobnicate").code, 2);
  EXPECT_EQ(run("denoise --model x.safetensors").code, 2);  // required options missing
}


// `sample --sampler S --spacing P` on the analytic gaussians8-exact model (fp32 CPU) against the plain
// float64 implementations of tools/solvers_reference.py (tests/data/solvers/golden.json: 16 rows, seed 7).
TEST_F(Cli, SampleSolversAndSpacingsMatchThePapersFloat64) {
  std::ifstream f(test::data_path("solvers/golden.json"));
  const nlohmann::json g = nlohmann::json::parse(f);
  const std::string model = test::repo_root() + "/assets/models/gaussians8-exact.safetensors";
  int runs = 0;
  for (const nlohmann::json& c : g["runs"]) {
    const std::string solver = c["solver"], spacing = c["spacing"];
    const int steps = c["steps"], t_start = c["t_start"];
    SCOPED_TRACE(solver + " " + spacing);
    const std::string x = out(solver + "_" + spacing + ".npy");
    const Result r = run("sample --model '" + model + "' --sampler " + solver + " --spacing " + spacing +
                         " --t-start " + std::to_string(t_start) + " --steps " + std::to_string(steps) +
                         " --n 16 --seed 7 --out '" + x + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    const NpyFloat got = read_npy_float(x, "--out");
    const std::vector<double> want = c["x"];
    ASSERT_EQ(got.data.size(), want.size());
    double err = 0;
    for (size_t i = 0; i < want.size(); ++i) err = std::max(err, std::abs(got.data[i] - want[i]));
    EXPECT_LT(err, 2e-5);  // fp32 of values ~1 over <= 12 steps
    ++runs;
  }
  EXPECT_EQ(runs, 20);
}

// Unknown solver or spacing names, and a spacing on ddpm: exit 2 listing the valid names, nothing written.
TEST_F(Cli, SampleRefusesUnknownSolversAndSpacings) {
  expect_bad_input("sample --model moons --sampler dpm --out '" + out("a.npy") + "'", "--sampler", "heun");
  expect_bad_input("sample --model moons --spacing cosine --out '" + out("a.npy") + "'", "--spacing", "karras");
  expect_bad_input("sample --model moons --sampler ddpm --spacing karras --out '" + out("a.npy") + "'", "--spacing");
}

}  // namespace
}  // namespace diffscope
