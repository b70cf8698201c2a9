// test_info_command.cpp — `diffscope info --model M` end to end: what it prints for a PyTorch-written
// model (tests/data/golden), the JSON form, and exit 2 with one error line for a malformed file.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

struct CliRun {
  int code = -1;
  std::string out, err;
};

CliRun run_cli(const test::TempDir& logs, const std::string& args) {
  const std::string o = logs.file("stdout"), e = logs.file("stderr");
  const std::string cmd = "'" + test::cli_binary() + "' " + args + " >'" + o + "' 2>'" + e + "' </dev/null";
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  auto slurp = [](const std::string& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
  };
  r.out = slurp(o);
  r.err = slurp(e);
  return r;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// d2_h256.safetensors: dim 2, hidden 256, float32 betas of the linear schedule (tools/make_golden.py).
TEST(InfoCommand, DescribesGoldenModel) {
  test::TempDir logs;
  const std::string model = test::data_path("golden/d2_h256.safetensors");
  const CliRun r = run_cli(logs, "info --model '" + model + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "dim:             2\n")) << r.out;
  EXPECT_TRUE(has(r.out, "hidden:          256\n")) << r.out;
  EXPECT_TRUE(has(r.out, "T:               1000\n")) << r.out;
  EXPECT_TRUE(has(r.out, "schedule:        file betas (F32)")) << r.out;
  EXPECT_TRUE(has(r.out, "warnings:        (none)")) << r.out;

  const CliRun j = run_cli(logs, "info --json --model '" + model + "'");
  ASSERT_EQ(j.code, 0) << j.err;
  const nlohmann::json doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc.at("dim"), 2);
  EXPECT_EQ(doc.at("hidden"), 256);
  EXPECT_EQ(doc.at("T"), 1000);
  EXPECT_TRUE(doc.at("warnings").empty());
}

TEST(InfoCommand, ListsIgnoredTensorsAndDataSamples) {
  test::TempDir dir;
  test::StBuilder b = test::eps_net_builder(2, 4);
  b.add_f32("data_samples", {3, 2}, {1, 2, 3, 4, 5, 6}).add("optimizer.step", "I64", {1}, std::string(8, '\0'));
  b.meta("dataset", "moons");
  const std::string path = b.write(dir.file("m.safetensors"));
  const CliRun r = run_cli(dir, "info --model '" + path + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "data_samples:    3\n")) << r.out;
  EXPECT_TRUE(has(r.out, "ignored tensors: \n  optimizer.step: I64 (1,)\n")) << r.out;
  EXPECT_TRUE(has(r.out, "  dataset = moons\n")) << r.out;
  EXPECT_TRUE(has(r.out, "schedule:        default linear")) << r.out;
}

TEST(InfoCommand, MalformedFileExitsTwo) {
  test::TempDir dir;
  const std::string path = dir.file("zip.safetensors");
  test::write_bytes(path, std::string("PK\x03\x04\x14\x00\x00\x00\x08\x00", 10) + std::string(30, '\x01'));
  const CliRun r = run_cli(dir, "info --model '" + path + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("diffscope: error: ", 0), 0u) << r.err;
  EXPECT_TRUE(has(r.err, path + ": header length")) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_EQ(run_cli(dir, "info").code, 2);  // --model is required
}

}  // namespace
}  // namespace diffscope
