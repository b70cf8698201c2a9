// test_grid_spec.cpp — the comparison grid's spec (grid/grid_spec.h): the text and JSON forms, their round trip,
// and every refusal naming the dimension, the axis and the value with what is valid.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <string>

#include "base/errors.h"
#include "grid/grid_spec.h"
#include "io_test_util.h"

namespace diffscope {
namespace {

// The message of the InvalidInput that parse_grid_spec throws for `text` ("" when it parses).
std::string refusal(const std::string& text) {
  try {
    parse_grid_spec(text, "--grid");
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

void expect_refused(const std::string& text, const std::vector<std::string>& parts) {
  SCOPED_TRACE(text);
  const std::string m = refusal(text);
  ASSERT_FALSE(m.empty()) << "accepted";
  EXPECT_EQ(m.rfind("--grid", 0), 0u) << m;
  for (const std::string& p : parts) EXPECT_NE(m.find(p), std::string::npos) << "missing '" << p << "' in: " << m;
}

TEST(GridSpec, ParsesRowsAndCols) {
  const GridSpec s = parse_grid_spec("rows=sampler:ddim,heun,dpmpp-2m cols=steps:5,10,20,50", "--grid");
  EXPECT_EQ(s.rows.axis, GridAxis::Sampler);
  EXPECT_EQ(s.rows.values, (std::vector<std::string>{"ddim", "heun", "dpmpp-2m"}));
  EXPECT_EQ(s.cols.axis, GridAxis::Steps);
  EXPECT_EQ(s.cols.values, (std::vector<std::string>{"5", "10", "20", "50"}));
  EXPECT_EQ(s.n_rows(), 3);
  EXPECT_EQ(s.n_cols(), 4);
}

TEST(GridSpec, OneDimensionIsOneCellWide) {
  const GridSpec s = parse_grid_spec("cols=eta:0,0.5,1", "--grid");
  EXPECT_EQ(s.rows.axis, GridAxis::None);
  EXPECT_EQ(s.n_rows(), 1);
  EXPECT_EQ(s.n_cols(), 3);
}

TEST(GridSpec, TextAndJsonRoundTrip) {
  const GridSpec s = parse_grid_spec("rows=model:moons,moons_v cols=t_start:999,500", "--grid");
  EXPECT_EQ(grid_spec_text(s), "rows=model:moons,moons_v cols=t_start:999,500");
  const nlohmann::json j = grid_spec_json(s);
  EXPECT_EQ(j["cols"]["values"][1], 500);  // numbers as JSON numbers
  EXPECT_EQ(grid_spec_from_json(j, "spec"), s);
  const GridSpec e = parse_grid_spec("rows=eta:0,0.25 cols=spacing:leading,karras", "--grid");
  EXPECT_EQ(grid_spec_from_json(grid_spec_json(e), "spec"), e);
}

TEST(GridSpec, ReadsAJsonFile) {
  test::TempDir dir;
  std::ofstream(dir.file("spec.json"))
      << R"({"rows": {"axis": "sampler", "values": ["ddim", "heun"]}, "cols": {"axis": "steps", "values": [5, 10]}})";
  const GridSpec s = parse_grid_spec("@" + dir.file("spec.json"), "--grid");
  EXPECT_EQ(s, parse_grid_spec("rows=sampler:ddim,heun cols=steps:5,10", "--grid"));
  std::ofstream(dir.file("bad.json")) << R"({"rows": {"axis": "colour", "values": [1]}})";
  const std::string m = refusal("@" + dir.file("bad.json"));
  EXPECT_NE(m.find("colour"), std::string::npos) << m;
  const std::string missing = refusal("@" + dir.file("missing.json"));  // names the path it could not read
  EXPECT_NE(missing.find(dir.file("missing.json")), std::string::npos) << missing;
  std::ofstream(dir.file("deep.json")) << std::string(200, '[');  // the bounded reader's depth limit
  EXPECT_NE(refusal("@" + dir.file("deep.json")), "");
}

// The guidance_scale axis (SEMANTICS §10, §12): reals, JSON numbers, and each cell's request takes its w.
TEST(GridSpec, GuidanceScaleAxis) {
  const GridSpec s = parse_grid_spec("cols=guidance_scale:0,1,2.5,-1", "--grid");
  EXPECT_EQ(s.cols.axis, GridAxis::GuidanceScale);
  EXPECT_EQ(grid_spec_json(s)["cols"]["values"], nlohmann::json({0.0, 1.0, 2.5, -1.0}));
  EXPECT_EQ(grid_spec_from_json(grid_spec_json(s), "spec"), s);
  SampleRequest r;
  std::string model;
  apply_grid_value(r, model, GridAxis::GuidanceScale, "2.5");
  EXPECT_EQ(r.guidance.scale, 2.5);
}

TEST(GridSpec, RefusesNamingAxisAndValue) {
  expect_refused("rows=colour:red,blue", {"rows axis 'colour'", "valid: sampler, steps, spacing, eta, precision, model, t_start"});
  expect_refused("rows=sampler:ddim cols=sampler:heun", {"'sampler'", "both rows and cols"});
  expect_refused("rows=steps:1,2,3,4,5,6,7,8,9", {"rows=steps", "9 values", "valid: 1 to 8"});
  expect_refused("rows=sampler:ddim,foo", {"rows=sampler", "'foo'", "ddim, ddpm"});
  expect_refused("cols=steps:10,0", {"cols=steps", "'0'", "[1, t_start + 1]"});
  expect_refused("cols=steps:ten", {"cols=steps", "'ten'"});
  expect_refused("cols=eta:0.5,1.5", {"cols=eta", "'1.5'", "[0, 1]"});
  expect_refused("cols=t_start:-1", {"cols=t_start", "'-1'", "[0, T - 1]"});
  expect_refused("cols=guidance_scale:0,101", {"cols=guidance_scale", "'101'", "[-20, 100]"});
  expect_refused("cols=guidance_scale:nan", {"cols=guidance_scale", "'nan'"});
  expect_refused("cols=spacing:linear", {"cols=spacing", "'linear'", "leading"});
  expect_refused("cols=precision:fp64", {"cols=precision", "'fp64'", "fp32, tf32, bf16"});
  expect_refused("cols=model:", {"cols=model", "no values"});
  expect_refused("rows=sampler:ddim rows=steps:5", {"rows is given twice"});
  expect_refused("layers=steps:5", {"'layers=steps:5'", "rows=AXIS"});
  expect_refused("", {"names no axis"});
  expect_refused("cols=steps:5,10,5", {"cols=steps", "value '5' is given twice", "valid: distinct values"});
  expect_refused("rows=eta:0.5,0.50", {"rows=eta", "value '0.50' is given twice (as '0.5')"});
  expect_refused("rows=sampler:heun,ddim,heun", {"rows=sampler", "'heun' is given twice"});
}

// 20,000 specs built from the grammar's pieces, values valid and not, and stray separators (a fixed seed): each parses or throws InvalidInput,
// and a parsed one holds 1 to 8 values per named axis, two different axes, and reads back the same from its text
// and from its JSON.
TEST(GridSpec, RandomSpecsParseOrRefuseAndRoundTrip) {
  const std::vector<std::string> axes = {"sampler", "steps", "spacing", "eta", "precision", "model", "t_start", "x", ""};
  const std::vector<std::string> values = {"ddim", "heun", "karras", "fp32", "bf16", "0", "0.5", "1", "7", "999",
                                           "-1", "1e9", "moons", "", "1.5", "nan", "\xff", "a b", "=", ":"};
  const std::vector<std::string> stray = {"", "", "", "", " ", ",", "=", ":", "rows=", "  "};
  std::mt19937 rng(29);
  auto pick = [&](const std::vector<std::string>& v) { return v[rng() % v.size()]; };
  auto line = [&](const std::string& dim) {
    std::string t = dim + "=" + pick(axes) + ":" + pick(stray);
    const int n = static_cast<int>(rng() % 10);
    for (int k = 0; k < n; ++k) t += (k ? "," : "") + pick(values);
    return t;
  };
  int parsed = 0;
  for (int i = 0; i < 20000; ++i) {
    const int form = static_cast<int>(rng() % 4);  // rows, cols, both, both the other way round
    std::string text = form == 0 ? line("rows") : form == 1 ? line("cols") : form == 2 ? line("rows") + " " + line("cols")
                                                                                        : line("cols") + " " + line("rows");
    text += pick(stray);
    GridSpec s;
    try {
      s = parse_grid_spec(text, "--grid");
    } catch (const InvalidInput&) {
      continue;
    }
    ++parsed;
    SCOPED_TRACE(text);
    EXPECT_NE(s.rows.axis, s.cols.axis);
    for (const GridLine* l : {&s.rows, &s.cols}) {
      if (l->axis == GridAxis::None) continue;
      EXPECT_GE(l->values.size(), 1u);
      EXPECT_LE(l->values.size(), 8u);
    }
    EXPECT_EQ(parse_grid_spec(grid_spec_text(s), "--grid"), s);
    EXPECT_EQ(grid_spec_from_json(grid_spec_json(s), "spec"), s);
  }
  EXPECT_GT(parsed, 100);  // the grammar is reached
}

}  // namespace
}  // namespace diffscope
