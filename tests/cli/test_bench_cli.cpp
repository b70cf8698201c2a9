// test_bench_cli.cpp — `diffscope bench --quick` end to end on the CPU rows (every build has them): `--only`
// selects every row by its workload name, and columns that do not apply to a CPU row (the GPU ceiling's %,
// the floor) print "—" in the table and null in the JSON instead of a made-up 0.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/text_table.h"
#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

std::string run_bench(const test::TempDir& logs, const std::string& args, int* code) {
  const std::string o = logs.file("stdout");
  const std::string cmd = "'" + test::cli_binary() + "' bench --quick " + args + " >'" + o + "' 2>/dev/null </dev/null";
  const int status = std::system(cmd.c_str());
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(o);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int count(const std::string& s, const std::string& part) {
  int n = 0;
  for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
  return n;
}

// The table's lines of CPU rows (a CUDA build with a device prints GPU rows of the same workloads too).
std::vector<std::string> cpu_lines(const std::string& table) {
  std::vector<std::string> out;
  std::istringstream in(table);
  for (std::string line; std::getline(in, line);)
    if (line.find(" cpu ") != std::string::npos) out.push_back(line);
  return out;
}

TEST(BenchCli, OnlyFiltersTheCpuRows) {
  test::TempDir logs;
  int code = -1;
  const std::string all = run_bench(logs, "", &code);
  ASSERT_EQ(code, 0) << all;
  const auto rows = cpu_lines(all);
  ASSERT_EQ(rows.size(), 7u) << all;  // denoise, mlp3 and the five solver rows
  EXPECT_EQ(count(rows[0] + rows[1], "denoise B=8"), 1) << all;
  EXPECT_EQ(count(rows[0] + rows[1], "mlp3 B=16"), 1) << all;
  EXPECT_EQ(count(all, "solver "), 5) << all;
  const std::string mlp = run_bench(logs, "--only mlp3", &code);
  ASSERT_EQ(code, 0) << mlp;
  EXPECT_EQ(count(mlp, "denoise B="), 0) << "--only mlp3 printed a denoise row:\n" << mlp;
  ASSERT_EQ(cpu_lines(mlp).size(), 1u) << mlp;
  EXPECT_NE(cpu_lines(mlp)[0].find("mlp3 B=16"), std::string::npos) << mlp;
}

// `--only` that matches no workload is a usage error (exit 2, SEMANTICS §9), not an empty table: the message
// names the value and lists the workload names, and ends with a newline.
TEST(BenchCli, OnlyMatchingNothingIsAnError) {
  test::TempDir logs;
  const std::string err = logs.file("stderr");
  const std::string cmd = "'" + test::cli_binary() + "' bench --quick --only nosuchthing >/dev/null 2>'" + err + "' </dev/null";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
  std::ifstream f(err);
  std::stringstream s;
  s << f.rdbuf();
  const std::string msg = s.str();
  EXPECT_NE(msg.find("diffscope: error: --only = nosuchthing matches no workload; valid names contain: "),
            std::string::npos) << msg;
  EXPECT_NE(msg.find("denoise B=8"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mlp3 B=16"), std::string::npos) << msg;
  ASSERT_FALSE(msg.empty());
  EXPECT_EQ(msg.back(), '\n') << msg;
}

TEST(BenchCli, CpuRowsHaveNoCeilingOrFloor) {
  test::TempDir logs;
  int code = -1;
  const std::string table = run_bench(logs, "--only mlp3", &code);
  ASSERT_EQ(code, 0) << table;
  ASSERT_EQ(cpu_lines(table).size(), 1u) << table;
  const std::string line = cpu_lines(table)[0];
  EXPECT_EQ(line.find('%'), std::string::npos) << "a CPU row has no % of a GPU ceiling: " << line;
  EXPECT_GE(count(line, "\u2014"), 2) << "%ceil and floor_us print a dash: " << line;

  const nlohmann::json j = nlohmann::json::parse(run_bench(logs, "--only mlp3 --json", &code));
  int cpu_rows = 0;
  for (const auto& r : j["rows"]) {
    if (r["impl"] != "cpu") continue;
    ++cpu_rows;
    EXPECT_TRUE(r["ceiling"].is_null()) << r.dump();
    EXPECT_TRUE(r["floor_us"].is_null()) << r.dump();
    EXPECT_TRUE(r["rel_err"].is_number()) << "the error vs float64 is measured on the CPU too: " << r.dump();
  }
  EXPECT_EQ(cpu_rows, 1) << j.dump();
}

// The text table's columns are as wide as their widest cell (a newcomer saw the columns shift after GPU rows whose
// path, "cublas+elementwise", and workload, 45 characters, were wider than the fixed widths); "—" counts one column.
TEST(BenchCli, TextTableColumnsFitTheirWidestCell) {
  cli::TextTable t{{"workload", "path", "median_us", "%ceil"}, {false, false, true, true}, {}};
  t.rows.push_back({"solver dpmpp-2m-sde B=65536 dim=2 H=256 N=100", "cublas+elementwise", "318.5", "\u2014"});
  t.rows.push_back({"mlp3", "Eigen", "11.1", "42.0%"});
  EXPECT_EQ(t.str(),
            "workload                                       path                median_us  %ceil\n"
            "solver dpmpp-2m-sde B=65536 dim=2 H=256 N=100  cublas+elementwise      318.5      \u2014\n"
            "mlp3                                           Eigen                    11.1  42.0%\n");
  EXPECT_EQ(cli::display_width("\u2014"), 1u);
}

// In the bench's own table every row's median ends where the header's "median_us" ends.
TEST(BenchCli, TableNumbersEndUnderTheirHeader) {
  test::TempDir logs;
  int code = -1;
  const std::string table = run_bench(logs, "--only solver", &code);
  ASSERT_EQ(code, 0) << table;
  std::istringstream in(table);
  std::string header;
  std::getline(in, header);
  const size_t end = header.find("median_us") + std::string("median_us").size();
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("solver ", 0) != 0) continue;
    ++rows;
    ASSERT_GT(line.size(), end) << line;
    EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(line[end - 1])) && line[end] == ' ') << header << "\n" << line;
  }
  EXPECT_GT(rows, 0) << table;
}

// `bench --diag` without a CUDA device says so and exits 3 (before, it printed nothing and exited 0).
// One row per solver, timed per network evaluation, each with its ratio to ddim in the note and
// its error against the float64 run of the same table (fp32 on the CPU: far below 1e-5).
TEST(BenchCli, SolverRowsPerEvaluationWithTheirRatioToDdim) {
  test::TempDir logs;
  int code = -1;
  const nlohmann::json j = nlohmann::json::parse(run_bench(logs, "--only solver --json", &code));
  ASSERT_EQ(code, 0);
  std::vector<std::string> names;
  for (const auto& r : j["rows"]) {
    if (r["impl"] != "cpu") continue;  // a device adds the fused rows
    names.push_back(r["workload"]);
    EXPECT_GT(r["median_us"].get<double>(), 0.0);
    EXPECT_LT(r["rel_err"].get<double>(), 1e-5) << r.dump();
    EXPECT_NE(r["note"].get<std::string>().find("x ddim per evaluation"), std::string::npos) << r.dump();
    EXPECT_NE(r["note"].get<std::string>().find("per network evaluation"), std::string::npos) << r.dump();
  }
  const std::vector<std::string> want = {"solver ddim B=256 dim=2 H=256 N=20", "solver dpmpp-2m B=256 dim=2 H=256 N=20",
                                         "solver dpmpp-2m-sde B=256 dim=2 H=256 N=20",
                                         "solver euler-ancestral B=256 dim=2 H=256 N=20",
                                         "solver heun B=256 dim=2 H=256 N=20"};
  EXPECT_EQ(names, want);
  for (const auto& r : j["rows"])  // heun's 20 steps are 39 evaluations
    if (r["workload"] == want[4]) EXPECT_NE(r["note"].get<std::string>().find("its 39 evaluations"), std::string::npos);
}

TEST(BenchCli, DiagWithoutADeviceSaysWhy) {
  test::TempDir logs;
  const std::string e = logs.file("stderr");
  const std::string cmd = "'" + test::cli_binary() + "' bench --diag >/dev/null 2>'" + e + "' </dev/null";
  const int status = std::system(cmd.c_str());
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0) GTEST_SKIP() << "a CUDA device ran the diagnostics";
  std::ifstream f(e);
  std::stringstream err;
  err << f.rdbuf();
  EXPECT_EQ(code, 3);
  EXPECT_NE(err.str().find("--diag"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("CUDA device"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace diffscope
