// test_grid_cli.cpp — `diffscope sample --grid` end to end (SEMANTICS §10): refusals exit 2 naming the axis and the
// value with nothing written; the .npy's shape (rows, cols, n, dim); the CSV and JSON metrics' contents against
// closed forms (evaluations per solver) and the spec; a JSON spec file.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli_fixture.h"

namespace diffscope::test {
namespace {

class GridCli : public CliFixture {};

TEST_F(GridCli, RefusesBadSpecsNamingAxisAndValue) {
  const std::string o = " --out '" + out("x.npy") + "' --metrics-csv '" + out("m.csv") + "'";
  expect_refused("sample --model moons --grid 'rows=colour:red'" + o, 2, {"--grid", "'colour'", "valid: sampler"});
  expect_refused("sample --model moons --grid 'rows=steps:5 cols=steps:10'" + o, 2, {"'steps'", "both rows and cols"});
  expect_refused("sample --model moons --grid 'cols=steps:1,2,3,4,5,6,7,8,9'" + o, 2, {"cols=steps", "9 values", "1 to 8"});
  expect_refused("sample --model moons --grid 'rows=sampler:ddim,dpm'" + o, 2, {"rows=sampler", "'dpm'", "heun"});
  // A value the single run refuses: the run plan's message, naming the cell.
  expect_refused("sample --model moons --grid 'rows=sampler:ddim cols=steps:10,5000'" + o, 2,
                 {"--grid: cell rows sampler=ddim, cols steps=5000", "--steps = 5000", "[1, 1000]"});
  expect_refused("sample --model moons --grid 'cols=t_start:999,1000'" + o, 2, {"cols t_start=1000", "--t-start", "[0, 999]"});
  expect_refused("sample --model moons --grid 'cols=precision:fp32,bf16'" + o, 2, {"cols precision=bf16", "cuda"});
  expect_refused("sample --model moons --grid 'cols=model:moons,nosuchmodel'" + o, 2, {"cols model=nosuchmodel"});
  expect_refused("sample --model moons --grid 'cols=steps:5' --trajectory '" + out("t.npy") + "'" + o, 2,
                 {"--trajectory cannot be combined with --grid"});
  expect_refused("sample --model moons --grid 'cols=steps:5' --point-size 4" + o, 2, {"--point-size cannot be combined with --grid"});
  expect_refused("sample --model moons --grid 'cols=steps:5' --svg '" + out("g.svg") + "'" + o, 2,
                 {"--svg cannot be combined with --grid"});
  expect_refused("sample --model moons --grid 'cols=steps:5' --figure 1" + o, 2, {"--figure cannot be combined with --grid"});
  expect_refused("sample --model moons --grid ''" + o, 2, {"--grid", "names no axis"});
  expect_refused("sample --model moons --grid 'cols=steps:5' --view-mode density" + o, 2,
                 {"--view-mode cannot be combined with --grid"});
  expect_refused("sample --grid 'cols=steps:5'" + o, 2, {"--model is required"});
  expect_refused("sample --model moons --grid 'cols=steps:5' --grid-position 1.5" + o, 2, {"--grid-position", "1.5", "[0, 1]"});
}

TEST_F(GridCli, WritesCellsAndMetrics) {
  const std::string spec = out("spec.json");
  std::ofstream(spec) << R"({"rows": {"axis": "sampler", "values": ["ddim", "heun"]}, "cols": {"axis": "steps", "values": [4, 9, 16]}})";
  const CliResult r = run("sample --model moons --n 40 --seed 3 --grid @'" + spec + "' --out '" + out("x.npy") +
                          "' --metrics-csv '" + out("m.csv") + "' --metrics-json '" + out("m.json") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "(2, 3, 40, 2)")) << r.err;
  const std::string npy = slurp(out("x.npy"));
  EXPECT_NE(npy.find("'shape': (2, 3, 40, 2)"), std::string::npos);
  EXPECT_EQ(npy.size(), 128u + 2 * 3 * 40 * 2 * 4);
  // CSV: a header and one line per cell, row-major; evaluations: ddim N, heun 2N - 1 (its last step is Euler).
  std::ifstream csv(out("m.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("row,col,row_value,col_value,model,sampler,spacing,steps,t_start,eta,precision,evaluations,", 0), 0u);
  const int evals[2][3] = {{4, 9, 16}, {7, 17, 31}};
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(std::getline(csv, line));
    std::vector<std::string> f;
    std::stringstream ss(line);
    for (std::string x; std::getline(ss, x, ',');) f.push_back(x);
    ASSERT_GE(f.size(), 17u) << line;
    EXPECT_EQ(f[0], std::to_string(i / 3));
    EXPECT_EQ(f[1], std::to_string(i % 3));
    EXPECT_EQ(f[2], i < 3 ? "ddim" : "heun");
    EXPECT_EQ(f[7], std::to_string(std::vector<int>{4, 9, 16}[i % 3]));
    EXPECT_EQ(f[11], std::to_string(evals[i / 3][i % 3]));
    EXPECT_EQ(f[15], "40");  // energy_n: min(n, 1024, 1000)
    EXPECT_EQ(f[16], "");    // exact_ode_rms: moons is a network
  }
  EXPECT_FALSE(std::getline(csv, line));
  const nlohmann::json j = nlohmann::json::parse(slurp(out("m.json")));
  EXPECT_EQ(j["spec"], nlohmann::json::parse(slurp(spec)));
  EXPECT_EQ(j["cells"].size(), 6u);
  EXPECT_EQ(j["cells"][5]["evaluations"], 31);
  EXPECT_EQ(j["cells"][5]["displacement"], 0.0);  // the row's reference: its most steps
  EXPECT_EQ(j["cells"][3]["ref_col"], 2);
  EXPECT_TRUE(j["cells"][0]["exact_ode_rms"].is_null());
  EXPECT_EQ(j["cells"][2]["frame"], 16);  // the final samples
  // At timeline position 0 every cell holds its start state: the same noise in every cell.
  const CliResult p = run("sample --model moons --n 40 --seed 3 --grid @'" + spec + "' --grid-position 0 --out '" +
                          out("x0.npy") + "' --metrics-json '" + out("m0.json") + "'");
  ASSERT_EQ(p.code, 0) << p.err;
  const std::string x0 = slurp(out("x0.npy"));
  const size_t cell = 40 * 2 * 4;
  for (int c = 1; c < 6; ++c) EXPECT_EQ(x0.compare(128 + c * cell, cell, x0, 128, cell), 0) << c;
  const nlohmann::json j0 = nlohmann::json::parse(slurp(out("m0.json")));
  EXPECT_EQ(j0["cells"][5]["frame"], 0);
  EXPECT_EQ(j0["position"]["align"], "noise");
}

}  // namespace
}  // namespace diffscope::test
