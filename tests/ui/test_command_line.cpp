// test_command_line.cpp — "Copy command line": the `diffscope sample ...` line in a GUI export's
// sidecar reproduces the exported state .npy bit for bit (CPU backend in CI), and shell quoting survives odd paths.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "formats/npy.h"
#include "gui_test_util.h"
#include "picture/command_line.h"

namespace diffscope {
namespace {

// The app's sampler and spacing pickers (`set sampler`, `set spacing`) run the same step table as the CLI's
// --sampler/--spacing (whose float64 path tools/solvers_reference.py checks), and the sidecar and its command line
// carry the spacing (a restored karras run used to come back with the default spacing).
TEST(CommandLine, GuiSolverAndSpacingMatchTheCliBitForBit) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("s.txt")) << "set sampler dpmpp-2m\nset spacing karras\nset n 300\nset steps 20\nset seed 5\n"
                                      "wait_complete 5000\nexpect frame == 20\nexport state "
                                   << dir.file("state.npy") << "\n";
  guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 800x500 --model '" +
                                           guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(guitest::slurp(dir.file("state.json")));
  EXPECT_EQ(j["spacing"].get<std::string>(), "karras");
  EXPECT_NE(j["command_line"].get<std::string>().find("--spacing karras"), std::string::npos);
  r = guitest::run_cli("sample --backend cpu --model '" + guitest::model_2d() +
                           "' --sampler dpmpp-2m --spacing karras --n 300 --steps 20 --t-start 999 --seed 5 --out '" +
                           dir.file("cli.npy") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const NpyFloat a = read_npy_float(dir.file("state.npy"), "gui"), b = read_npy_float(dir.file("cli.npy"), "cli");
  ASSERT_EQ(a.shape, b.shape);
  EXPECT_EQ(0, std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)));
}

// Runs the sidecar's command line (`diffscope sample ... --out STATE ...`, STATE the export's own file, written again)
// and expects the same bytes, bit for bit.
void expect_command_line_reproduces_state(const std::string& command_line, const test::TempDir& dir,
                                          const test::TempDir& logs) {
  const std::string head = "diffscope ";
  ASSERT_EQ(command_line.rfind(head, 0), 0u) << command_line;
  ASSERT_NE(command_line.find(" --out " + dir.file("state.npy")), std::string::npos) << command_line;
  const NpyFloat a = read_npy_float(dir.file("state.npy"), "gui");
  std::filesystem::remove(dir.file("state.npy"));
  const guitest::Result r = guitest::run_cli(command_line.substr(head.size()), logs.path());
  ASSERT_EQ(r.code, 0) << command_line << "\n" << r.err;
  const NpyFloat b = read_npy_float(dir.file("state.npy"), "cli");
  ASSERT_EQ(a.shape, b.shape);
  EXPECT_EQ(0, std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float)));
}

TEST(CommandLine, GuiRunsCommandLineReproducesItsStateBitForBit) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("s.txt")) << "set n 500\nset t_start 700\nset steps 30\nset eta 0.3\nset seed 11\n"
                                      "wait_complete 5000\nexpect frame == 30\nexport state "
                                   << dir.file("state.npy") << "\n";
  guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 1024x700 --model '" +
                                           guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(guitest::slurp(dir.file("state.json")));
  const std::string line = j["command_line"].get<std::string>();
  EXPECT_NE(line.find("--eta 0.29999999999999999"), std::string::npos) << line;  // 0.3 read back exactly
  expect_command_line_reproduces_state(line, dir, logs);
}

// A scheduler_config.json applied in the app (script `scheduler_config`, as the model section's field) is in the
// sidecar and its command line, which reproduces the state bit for bit: the analytic model's cosine betas and the
// config's leading spacing with steps_offset 1 (SEMANTICS §3).
TEST(CommandLine, GuiSchedulerConfigIsInTheCommandLineAndReproducesTheState) {
  const std::string model = test::repo_root() + "/assets/models/gaussians8-exact.safetensors";
  test::TempDir dir, logs;
  std::ofstream(dir.file("cfg.json")) << R"({"beta_schedule": "squaredcos_cap_v2", "timestep_spacing": "leading",
                                             "steps_offset": 1, "clip_sample": false})";
  std::ofstream(dir.file("s.txt")) << "scheduler_config " << dir.file("cfg.json") << "\nset sampler dpmpp-2m\nset n 200\n"
                                      "set steps 10\nset seed 3\nwait_complete 5000\nexpect frame == 10\nexport state "
                                   << dir.file("state.npy") << "\n";
  guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 800x500 --model '" + model +
                                           "' --script '" + dir.file("s.txt") + "'",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(guitest::slurp(dir.file("state.json")));
  EXPECT_EQ(j["spacing"].get<std::string>(), "leading");
  EXPECT_EQ(j["scheduler_config"].get<std::string>(), dir.file("cfg.json"));
  const std::string line = j["command_line"].get<std::string>();
  EXPECT_NE(line.find("--scheduler-config " + dir.file("cfg.json")), std::string::npos) << line;
  expect_command_line_reproduces_state(line, dir, logs);
  // Without the config the same settings give another state (the file's linear betas, steps_offset 0).
  r = guitest::run_cli("sample --backend cpu --model '" + model + "' --sampler dpmpp-2m --spacing leading --n 200 "
                       "--steps 10 --seed 3 --out '" + dir.file("plain.npy") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const NpyFloat a = read_npy_float(dir.file("state.npy"), "gui"), c = read_npy_float(dir.file("plain.npy"), "plain");
  ASSERT_EQ(a.shape, c.shape);
  EXPECT_NE(0, std::memcmp(a.data.data(), c.data.data(), a.data.size() * sizeof(float)));
}

TEST(CommandLine, ShellQuoting) {
  EXPECT_EQ(shell_quote("assets/models/moons.safetensors"), "assets/models/moons.safetensors");
  EXPECT_EQ(shell_quote("my model.safetensors"), "'my model.safetensors'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
}

}  // namespace
}  // namespace diffscope
