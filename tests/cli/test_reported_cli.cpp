// test_reported_cli.cpp — issue 11: inputs from public bug reports (tests/data/reported/, README in
// shared/cases/reported) through the diffscope binary. Each test states the expected behaviour of its kind:
// exit code, what the message names, and that nothing is left at an output path (SEMANTICS §9).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../core/io_test_util.h"
#include "../test_paths.h"
#include "formats/json_path.h"
#include "formats/npy.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out, err;
  double seconds = 0;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string reported(const std::string& rel) { return test::data_path("reported/" + rel); }
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

class Reported : public ::testing::Test {
 protected:
  test::TempDir m_dir, m_logs;

  // Runs `diffscope <args>` (args shell-quoted by the caller); `prefix` runs first in the same shell.
  Result run(const std::string& args, const std::string& prefix = "") {
    Result r;
    const std::string o = m_logs.file("stdout"), e = m_logs.file("stderr");
    const std::string cmd = prefix + " '" + test::cli_binary() + "' " + args + " >'" + o + "' 2>'" + e + "' </dev/null";
    const auto t0 = std::chrono::steady_clock::now();
    const int status = std::system(cmd.c_str());
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(o);
    r.err = slurp(e);
    return r;
  }
  std::string out(const std::string& name) const { return m_dir.file(name); }
  // Exit `code`, every `parts` in the message, and the output folder empty.
  void expect_refused(const std::string& args, int code, const std::vector<std::string>& parts) {
    SCOPED_TRACE(args);
    const Result r = run(args);
    EXPECT_EQ(r.code, code) << r.err;
    for (const std::string& p : parts) EXPECT_TRUE(has(r.err, p)) << "missing '" << p << "' in: " << r.err;
    EXPECT_TRUE(m_dir.entries().empty()) << "something was written";
  }
};

// dup-key: duplicate keys are forbidden by the format; both files used to load with the last value winning
// (denoise gave -0.0100005).
TEST_F(Reported, DuplicateKeysRefusedNamingTensorAndKey) {
  const std::string npys = " --x '" + reported("dup-key/x0.npy") + "' --t-start '" + reported("dup-key/t0.npy") +
                           "' --steps 1 --out '" + out("d.npy") + "'";
  expect_refused("info --model '" + reported("dup-key/dup_offsets.safetensors") + "'", 2,
                 {"tensor 'eps_net.4.bias': key 'data_offsets' appears twice"});
  expect_refused("denoise --model '" + reported("dup-key/dup_offsets.safetensors") + "'" + npys, 2,
                 {"tensor 'eps_net.4.bias': key 'data_offsets' appears twice"});
  expect_refused("denoise --model '" + reported("dup-key/dup_toplevel.safetensors") + "'" + npys, 2,
                 {"header names tensor 'eps_net.4.bias' twice"});
}

// schedule-underflow: every sampler used to write all-NaN samples with exit 0.
TEST_F(Reported, UnderflowingScheduleRefusedForEverySampler) {
  const std::string under = reported("schedule-underflow/underflow_betas.safetensors");
  for (const char* sampler : {"ddim", "ddpm", "ddpm-mean"})
    expect_refused("sample --model '" + under + "' --sampler " + sampler + " --steps 10 --t-start 119 --n 8 --out '" +
                       out("s.npy") + "' --trajectory '" + out("t.npy") + "'",
                   2, {std::string("sampler ") + sampler, "underflows to 0 in float64 from t = 107", "t_start <= 24"});
  expect_refused("sample --model '" + reported("schedule-underflow/lin_T20000.safetensors") +
                     "' --sampler ddim --steps 10 --t-start 19999 --n 8 --out '" + out("s.npy") + "'",
                 2, {"sampler ddim", "overflow float32 from t = ", "t_start <= "});
  // denoise (the t-indexed ddpm-mean table) with a row starting at 119.
  test::TempDir in;
  test::write_npy_i64(in.file("t.npy"), {119});
  expect_refused("denoise --model '" + under + "' --x '" + reported("schedule-underflow/x1.npy") + "' --t-start '" +
                     in.file("t.npy") + "' --steps 120 --out '" + out("d.npy") + "'",
                 2, {"sampler ddpm-mean", "from t = 107", "t_start <= 24"});
  // info says from which t runs are refused instead of printing alphas_cumprod[T-1] = 0 without a word.
  const Result r = run("info --model '" + under + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "overflows float32 from t = 25")) << r.out;
  EXPECT_TRUE(has(r.out, "alphas_cumprod underflows to 0 in float64 from t = 107")) << r.out;
  EXPECT_TRUE(has(r.out, "runs that visit t >= 25 are refused")) << r.out;
}

// No non-finite output with exit 0: finite coefficients can still overflow during a run. An eps-network with
// weights of 1e30 (finite) gives eps = silu(1e30 silu(1e30 x)) = inf in float32 for x = 1.
TEST_F(Reported, OverflowDuringTheRunIsRefusedAndNothingWritten) {
  test::TempDir in;
  test::StBuilder net;
  net.add_f32("eps_net.0.weight", {1, 2}, {1e30f, 0.f}).add_f32("eps_net.0.bias", {1}, {0.f})
      .add_f32("eps_net.2.weight", {1, 1}, {1e30f}).add_f32("eps_net.2.bias", {1}, {0.f})
      .add_f32("eps_net.4.weight", {1, 1}, {1.f}).add_f32("eps_net.4.bias", {1}, {0.f});
  test::write_bytes(in.file("big.safetensors"), net.build());
  write_npy_float(in.file("x.npy"), {2, 1}, std::vector<float>{-1.f, 1.f}.data(), "x");
  test::write_npy_i64(in.file("t.npy"), {3, 3});
  expect_refused("denoise --model '" + in.file("big.safetensors") + "' --x '" + in.file("x.npy") + "' --t-start '" +
                     in.file("t.npy") + "' --steps 1 --out '" + out("d.npy") + "' --trajectory '" + out("t.npy") + "'",
                 2, {"--out: row 1, column 0 = ", "is not finite", "nothing was written"});
  // mlp3: row 0 (x = 1) gives 1e30, row 1 (x = 1e30) gives 1e60 = inf in float32.
  test::StBuilder w;
  w.add_f32("fc1.weight", {1, 1}, {1e30f}).add_f32("fc2.weight", {1, 1}, {1.f}).add_f32("fc3.weight", {1, 1}, {1.f});
  test::write_bytes(in.file("w.safetensors"), w.build());
  write_npy_float(in.file("x.npy"), {2, 1}, std::vector<float>{1.f, 1e30f}.data(), "x");
  expect_refused("mlp3 --weights '" + in.file("w.safetensors") + "' --x '" + in.file("x.npy") + "' --out '" +
                     out("y.npy") + "'",
                 2, {"--out: row 1, column 0 = inf is not finite"});
}

// output-collisions: one output used to overwrite another silently.
TEST_F(Reported, CollidingOutputsRefusedBeforeAnyWork) {
  const std::string model = reported("huge-trajectory/zero_d1_h4.safetensors");
  const std::string in = " --x '" + reported("huge-trajectory/x1d1.npy") + "' --t-start '" +
                         reported("huge-trajectory/t5.npy") + "' --steps 6";
  expect_refused("denoise --model '" + model + "'" + in + " --out '" + out("a.npy") + "' --trajectory '" +
                     m_dir.path() + "/./a.npy'",
                 2, {"--out '" + out("a.npy") + "' and --trajectory", "are the same file"});
  // A symlink to an existing file and the file itself.
  test::TempDir other;
  test::write_bytes(other.file("real.npy"), "old");
  fs::create_symlink(other.file("real.npy"), out("link.npy"));
  const Result r = run("denoise --model '" + model + "'" + in + " --out '" + other.file("real.npy") +
                       "' --trajectory '" + out("link.npy") + "'");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "are the same file")) << r.err;
  EXPECT_EQ(slurp(other.file("real.npy")), "old");
  fs::remove(out("link.npy"));
#ifdef DIFFSCOPE_HAVE_GUI
  // The PNG's sidecar is a derived output: run.png writes run.json.
  const std::string s = "sample --model '" + model + "' --n 4 --steps 3 --t-start 5";
  expect_refused(s + " --out '" + out("run.json") + "' --png '" + out("run.png") + "'", 2,
                 {"--out '" + out("run.json") + "' and the sidecar of --png '" + out("run.json") + "'"});
  expect_refused(s + " --out '" + out("a.npy") + "' --png '" + out("a.npy") + "'", 2,
                 {"--out '" + out("a.npy") + "' and --png '" + out("a.npy") + "'"});
  expect_refused(s + " --out '" + out("x.npy") + "' --png '" + out("b.json") + "'", 2,
                 {"--png '" + out("b.json") + "' and the sidecar of --png"});
  expect_refused(s + " --out '" + out("x.npy") + "' --trajectory '" + out("x.json") + "' --png '" + out("x.png") + "'",
                 2, {"--trajectory '" + out("x.json") + "' and the sidecar of --png"});
#endif
}

// huge-trajectory: S + 1 used to overflow int after 30 s and 9 GB, leaving --out behind. Under a 3 GB
// address-space limit the 8.6 GB trajectory is refused before any work (exit 3), fast, and nothing written.
TEST_F(Reported, TrajectoryThatCannotBeAllocatedRefusedBeforeAnyWork) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "an ASan build cannot start under `ulimit -v` (its shadow memory reserves terabytes of address "
                  "space); the default build runs this test";
#endif
  const std::string args = "denoise --model '" + reported("huge-trajectory/zero_d1_h4.safetensors") + "' --x '" +
                           reported("huge-trajectory/x1d1.npy") + "' --t-start '" +
                           reported("huge-trajectory/t5.npy") + "' --steps 2147483647 --out '" + out("d.npy") +
                           "' --trajectory '" + out("dt.npy") + "'";
  const Result r = run(args, "ulimit -v 3000000;");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_TRUE(has(r.err, "--trajectory")) << r.err;
  EXPECT_TRUE(has(r.err, "8.589")) << r.err;  // 2^31 frames x 4 bytes = 8.589934592 GB
  EXPECT_LT(r.seconds, 20.0);
  EXPECT_TRUE(m_dir.entries().empty());
}

// The same S = 2^31 - 1 without a trajectory: the row freezes after its step at t = 0, so the run is short.
// eps = 0 (all weights zero) leaves x <- x / sqrt(alpha_t) for t = 5..0: x / sqrt(abar[5]) with the default
// linear betas (1e-4 + (0.02 - 1e-4) t / 999).
TEST_F(Reported, HugeStepCountWithoutTrajectoryFinishes) {
  const Result r = run("denoise --model '" + reported("huge-trajectory/zero_d1_h4.safetensors") + "' --x '" +
                       reported("huge-trajectory/x1d1.npy") + "' --t-start '" + reported("huge-trajectory/t5.npy") +
                       "' --steps 2147483647 --out '" + out("d.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  double abar = 1;
  for (int t = 0; t <= 5; ++t) abar *= 1.0 - (1e-4 + (0.02 - 1e-4) * t / 999.0);
  const NpyFloat d = read_npy_float(out("d.npy"), "d");
  ASSERT_EQ(d.data.size(), 1u);
  EXPECT_NEAR(d.data[0], 1.0 / std::sqrt(abar), 1e-5);
}

// sidecar-paths (the JSON side): a model path with a Latin-1 byte used to make every JSON writer throw
// ("invalid UTF-8 byte", exit 1). info --json now writes it losslessly.
TEST_F(Reported, NonUtf8ModelPathInJson) {
  test::TempDir in;
  const std::string model = in.file("mo\xE9ns.safetensors");
  fs::copy_file(reported("huge-trajectory/zero_d1_h4.safetensors"), model);
  const Result r = run("info --json --model '" + model + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::string back;
  ASSERT_TRUE(get_path(j, "model", &back));
  EXPECT_EQ(back, model);
  EXPECT_EQ(j["model"].get<std::string>(), in.path() + "/mo\\xE9ns.safetensors");
}

// prediction-type: a 2-16-16-2 network saved with __metadata__ prediction_type v_prediction, sample, flow or a
// made-up value sampled as an eps model with exit 0, and info warned nothing. Every CLI path now refuses it
// naming the key and the value and what is supported: sample, denoise, a sidecar naming it (--config), and info,
// which still shows the file and says it cannot be sampled.
TEST_F(Reported, ModelMetadataThatChangesTheMathsIsRefusedOnEveryCliPath) {
  const std::string npys = " --x '" + reported("new-dtypes/x.npy") + "' --t-start '" + reported("new-dtypes/t.npy") +
                           "' --steps 3 --out '" + out("d.npy") + "'";
  for (const std::string value : {"v_prediction", "sample", "flow", "velocity-ish"}) {
    const std::string file = value == "velocity-ish" ? "unknown" : value;
    const std::string model = reported("prediction-type/" + file + ".safetensors");
    const std::vector<std::string> parts = {"__metadata__ 'prediction_type' = '" + value + "'", "supported: epsilon"};
    expect_refused("sample --model '" + model + "' --n 8 --steps 5 --out '" + out("x.npy") + "'", 2, parts);
    expect_refused("denoise --model '" + model + "'" + npys, 2, parts);
    test::TempDir in;
    std::ofstream(in.file("side.json")) << nlohmann::json{{"format", 2}, {"model", {{"file", model}}}, {"n", 8},
                                                          {"steps", 5}}.dump();
    expect_refused("sample --config '" + in.file("side.json") + "' --out '" + out("x.npy") + "'", 2, parts);
    const Result r = run("info --model '" + model + "'");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_TRUE(has(r.out, "  prediction_type = " + value + "\n")) << r.out;
    EXPECT_TRUE(has(r.out, "problems:        cannot be sampled\n  " + parts[0])) << r.out;
    EXPECT_TRUE(has(r.err, model + " cannot be sampled: " + parts[0])) << r.err;
  }
  const Result ok = run("sample --model '" + reported("prediction-type/epsilon.safetensors") + "' --n 8 --steps 5 --out '" +
                        out("x.npy") + "'");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// t-not-1000: a model of T = 500 said "--t-start = 999 is out of range" though no --t-start was typed. The
// default t_start is T - 1 of the model (the same run as --t-start 499, bit for bit), and where the schedule refuses
// T - 1 (120 betas of 0.999: sigma overflows float32 from t = 25) the last usable t, with a note.
TEST_F(Reported, DefaultTStartIsTheModelsLastUsableTimestep) {
  const std::string t500 = reported("t-not-1000/t500.safetensors");
  Result r = run("sample --model '" + t500 + "' --n 8 --steps 5 --out '" + out("a.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has(r.err, "--t-start")) << r.err;
  r = run("sample --model '" + t500 + "' --n 8 --steps 5 --t-start 499 --out '" + out("b.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_npy_float(out("a.npy"), "a").data, read_npy_float(out("b.npy"), "b").data);
  r = run("sample --model '" + t500 + "' --n 8 --steps 5 --t-start 999 --out '" + out("c.npy") + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "--t-start = 999 is out of range; valid: [0, 499]")) << r.err;  // typed: named

  const std::string under = reported("schedule-underflow/underflow_betas.safetensors");
  r = run("sample --model '" + under + "' --n 8 --out '" + out("d.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "note: t_start defaults to 24, not T - 1 = 119")) << r.err;
  EXPECT_FALSE(has(r.err, "--t-start")) << r.err;
  r = run("sample --model '" + under + "' --n 8 --t-start 24 --steps 25 --out '" + out("e.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_npy_float(out("d.npy"), "d").data, read_npy_float(out("e.npy"), "e").data);
}

// A model file (or any file that is not JSON text) given as an export printed nlohmann's parse error with the raw
// byte it stopped at. One line now says what the file is, without its bytes.
TEST_F(Reported, FileThatIsNotAnExportSaysWhatItIs) {
  test::TempDir in;
  const std::string model = in.file("x.safetensors");
  fs::copy_file(reported("t-not-1000/t500.safetensors"), model);
  fs::copy_file(reported("new-dtypes/x.npy"), in.file("a.npy"));
  test::write_bytes(in.file("blob.json"), std::string("\x01\x02\xff\xfe binary", 10));
  test::write_bytes(in.file("latin1.json"), "{\"model\": \"mod\xe8le\"}");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {model, model + " is a model, not an export (open it with --model)"},
      {in.file("a.npy"), in.file("a.npy") + " is a NumPy array, not an export"},
      {in.file("blob.json"), in.file("blob.json") + ": not a diffscope sidecar (binary data, not JSON text)"},
      {in.file("latin1.json"), in.file("latin1.json") + ": not a diffscope sidecar (not UTF-8 text, which JSON is)"}};
  for (const auto& [file, part] : cases) {
    expect_refused("sample --config '" + file + "' --out '" + out("x.npy") + "'", 2, {"--config " + part});
    const Result r = run("sample --config '" + file + "' --out '" + out("x.npy") + "'");
    EXPECT_FALSE(has(r.err, "json.exception")) << r.err;
    EXPECT_FALSE(has(r.err, "last read")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (unsigned char c : r.err) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << r.err;
  }
}

// info on a file missing one tensor failed outright; it now prints what it can read (metadata, tensors, schedule)
// and the problem, exit 2 (text and JSON).
TEST_F(Reported, InfoShowsWhatItCanOfAFileMissingATensor) {
  test::TempDir in;
  test::StBuilder b = test::eps_net_builder(2, 8);
  b.header().erase("eps_net.4.bias");
  b.add("step", "I64", {1}, std::string(8, '\0')).meta("dataset", "moons");
  const std::string model = b.write(in.file("m.safetensors"));
  Result r = run("info --model '" + model + "'");
  EXPECT_EQ(r.code, 2);
  for (const char* part : {"dim:             2\n", "hidden:          8\n", "T:               1000\n",
                           "schedule:        default linear", "  dataset = moons\n", "  step: I64 (1,)\n",
                           "problems:        cannot be sampled\n  missing tensor 'eps_net.4.bias' (expected shape (2,) = (dim,))\n"})
    EXPECT_TRUE(has(r.out, part)) << part << " in " << r.out;
  EXPECT_TRUE(has(r.err, "cannot be sampled: missing tensor 'eps_net.4.bias'")) << r.err;
  r = run("info --json --model '" + model + "'");
  EXPECT_EQ(r.code, 2);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dim"], 2);
  EXPECT_EQ(j["T"], 1000);
  EXPECT_EQ(j["t_start_max_usable"], 999);
  ASSERT_EQ(j["problems"].size(), 1u);
  EXPECT_EQ(j["problems"][0], "missing tensor 'eps_net.4.bias' (expected shape (2,) = (dim,))");
}

// new-dtypes: an unused tensor of F4, F6_E2M3/F6_E3M2, C64 or F8_E4M3FNUZ/F8_E5M2FNUZ made the whole file refused
// ("unknown dtype 'F4'"). It is ignored (SEMANTICS §6), listed by info with its dtype, and denoise gives plain's
// result bit for bit.
TEST_F(Reported, UnusedTensorsOfNewDtypesAreIgnored) {
  const std::string args = " --x '" + reported("new-dtypes/x.npy") + "' --t-start '" + reported("new-dtypes/t.npy") +
                           "' --steps 3 --out '";
  Result r = run("denoise --model '" + reported("new-dtypes/plain.safetensors") + "'" + args + out("plain.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<float> plain = read_npy_float(out("plain.npy"), "plain").data;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"extra_f4", "  packed_fp4: F4 (2, 8)\n"},
      {"extra_f6", "  mx_fp6a: F6_E2M3 (4, 4)\n  mx_fp6b: F6_E3M2 (4, 4)\n"},
      {"extra_c64", "  complex: C64 (3,)\n"},
      {"extra_fnuz", "  q1: F8_E4M3FNUZ (4,)\n  q2: F8_E5M2FNUZ (4,)\n"}};
  for (const auto& [name, listed] : files) {
    const std::string model = reported("new-dtypes/" + name + ".safetensors");
    r = run("info --model '" + model + "'");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "ignored tensors: \n" + listed)) << r.out;
    r = run("denoise --model '" + model + "'" + args + out(name + ".npy") + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_npy_float(out(name + ".npy"), name).data, plain) << name;
  }
}

}  // namespace
}  // namespace diffscope
