// test_grid_view.cpp — the comparison grid in the headless app on the CPU backend (Mesa EGL): a cell of the grid
// equals the `sample` run of its settings bit for bit (sampler x steps, eta x t_start, spacing x precision); a
// click on a cell runs its settings in the single view; the grid's script commands refuse bad input naming the axis
// and the value; a grid PNG's sidecar brings the grid back.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "formats/npy.h"
#include "gui_test_util.h"
#include "io_test_util.h"

namespace diffscope {
namespace {

class GridView : public guitest::AppFixture {
 protected:
  static constexpr int kN = 600;
  std::string prefix() const {
    return "model " + guitest::model_2d() + "\nset n " + std::to_string(kN) + "\nset trail_frames 0\nwait_complete 5000\n";
  }
  // `sample` of one cell's settings on the CPU backend: its final samples.
  NpyFloat single_run(const std::string& flags) {
    const std::string out = file("single.npy");
    const guitest::Result s = guitest::run_cli("sample --model '" + guitest::model_2d() + "' --backend cpu --n " +
                                                   std::to_string(kN) + " " + flags + " --out '" + out + "'",
                                               logs.path());
    EXPECT_EQ(s.code, 0) << s.err;
    return read_npy_float(out, "single");
  }
  // Cell (r, c) of a grid_export's (rows, cols, n, 2) array equals `single` bit for bit.
  static void expect_cell(const NpyFloat& grid, int r, int c, const NpyFloat& single, const std::string& what) {
    ASSERT_EQ(grid.shape.size(), 4u);
    const size_t cell = static_cast<size_t>(kN) * 2;
    ASSERT_EQ(single.data.size(), cell) << what;
    const float* g = grid.data.data() + (static_cast<size_t>(r) * grid.shape[1] + c) * cell;
    EXPECT_EQ(std::memcmp(g, single.data.data(), cell * sizeof(float)), 0) << what;
  }
};

TEST_F(GridView, ACellEqualsTheSingleRunOfItsSettingsBitForBit) {
  const guitest::Result r = run_gui(prefix() + "grid rows=sampler:ddim,heun,dpmpp-2m cols=steps:4,9,25\nframes 2\n"
                                    "grid_export " + file("a.npy") + "\n"
                                    "grid rows=eta:0,0.5,1 cols=t_start:400,999\nframes 2\ngrid_export " + file("b.npy") +
                                    "\ngrid rows=spacing:leading,trailing cols=steps:7,30\nframes 2\n"
                                    "grid_export " + file("c.npy") + "\n");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const NpyFloat a = read_npy_float(file("a.npy"), "a"), b = read_npy_float(file("b.npy"), "b"),
                 c = read_npy_float(file("c.npy"), "c");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3, 3, kN, 2}));
  EXPECT_EQ(b.shape, (std::vector<int64_t>{3, 2, kN, 2}));
  expect_cell(a, 0, 0, single_run("--sampler ddim --steps 4"), "ddim 4");
  expect_cell(a, 1, 2, single_run("--sampler heun --steps 25"), "heun 25");
  expect_cell(a, 2, 1, single_run("--sampler dpmpp-2m --steps 9"), "dpmpp-2m 9");
  expect_cell(b, 1, 0, single_run("--sampler ddim --steps 100 --eta 0.5 --t-start 400"), "eta 0.5 t_start 400");
  expect_cell(b, 2, 1, single_run("--sampler ddim --steps 100 --eta 1 --t-start 999"), "eta 1 t_start 999");
  expect_cell(c, 1, 0, single_run("--sampler ddim --steps 7 --spacing trailing"), "trailing 7");
  // The metrics beside it: one cell per value pair, the evaluations of each solver.
  const nlohmann::json m = sidecar(file("a.json"));
  ASSERT_EQ(m["cells"].size(), 9u);
  EXPECT_EQ(m["cells"][4]["sampler"], "heun");
  EXPECT_EQ(m["cells"][4]["steps"], 9);
}

TEST_F(GridView, AClickOnACellRunsItsSettingsInTheSingleView) {
  const guitest::Result r = run_gui(prefix() + "grid rows=sampler:ddim,heun cols=steps:6,15\nframes 2\n"
                                    "grid_export " + file("g.npy") + "\ngrid_click 1 0\nwait_complete 5000\n"
                                    "export state " + file("state.npy") + "\n");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "the single view runs cell (1, 0): sampler=heun steps=6")) << r.out;
  expect_cell(read_npy_float(file("g.npy"), "g"), 1, 0, read_npy_float(file("state.npy"), "state"), "clicked cell");
  // A model axis: the clicked cell's model with its own default t_start (a flow list's index 0), after t_start 500.
  const guitest::Result m = run_gui(prefix() + "set t_start 500\ngrid rows=model:moons,moons_flow cols=steps:6,15\n"
                                    "wait_complete 5000\ngrid_export " + file("m.npy") + "\ngrid_click 1 1\nwait_complete 5000\n"
                                    "export state " + file("m_state.npy") + "\n");
  ASSERT_EQ(m.code, 0) << m.out << m.err;
  expect_cell(read_npy_float(file("m.npy"), "m"), 1, 1, read_npy_float(file("m_state.npy"), "m_state"), "flow cell");
}

TEST_F(GridView, BadGridInputIsRefusedNamingTheAxisAndTheValue) {
  guitest::Result r = run_gui(prefix() + "grid rows=sampler:ddim,eulr\n");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.out + r.err, "rows=sampler value 'eulr' is not valid")) << r.out << r.err;
  r = run_gui(prefix() + "grid rows=spacing:leading cols=steps:5,2000\n");  // the run plan's refusal of a cell
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.out, "steps=2000")) << r.out;
  r = run_gui(prefix() + "grid_metric speed\n");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.out + r.err, "speed")) << r.out << r.err;
  r = run_gui(prefix() + "grid cols=steps:5,10\nframes 1\ngrid_click 0 2\n");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.out, "grid_click ROW COL = 0 2 is not a cell; valid: ROW in [0, 0], COL in [0, 1]")) << r.out;
}

TEST_F(GridView, AGridPngBringsTheGridBack) {
  const guitest::Result s = guitest::run_cli(
      "sample --model '" + guitest::model_2d() + "' --backend cpu --n 300 --seed 7 --grid 'rows=sampler:ddim,heun "
      "cols=steps:5,12' --out '" + file("cli.npy") + "' --png '" + file("g.png") + "' --size 400x300",
      logs.path());
  ASSERT_EQ(s.code, 0) << s.err;
  const guitest::Result r = run_gui("restore " + file("g.png") + "\nwait_complete 5000\ngrid_export " + file("back.npy") + "\n");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json m = sidecar(file("back.json"));
  EXPECT_EQ(m["spec"], sidecar(file("g.json"))["grid"]["spec"]);
  EXPECT_EQ(m["seed"], 7);
  // The same cells as the CLI's, bit for bit.
  const NpyFloat a = read_npy_float(file("cli.npy"), "cli"), b = read_npy_float(file("back.npy"), "back");
  EXPECT_EQ(a.shape, b.shape);
  EXPECT_TRUE(a.data == b.data);
}

}  // namespace
}  // namespace diffscope
