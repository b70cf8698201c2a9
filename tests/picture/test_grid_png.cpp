// test_grid_png.cpp — `diffscope sample --grid ... --png` (picture/grid_png.h, SEMANTICS §10): the picture's size
// and content, the sidecar in the PNG and beside it (kind grid, the spec, every cell's metrics), the spec restored
// from either (`--grid @grid.png`, `@grid.json`: the same cells bit for bit), a size too small for the cells refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "formats/png_text.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

TEST(GridPng, PictureSidecarAndRestore) {
  test::TempDir dir, logs;
  const std::string common = "sample --backend cpu --model moons --n 300 --seed 4 ";
  guitest::Result r = guitest::run_cli(common + "--grid 'rows=sampler:ddim,heun cols=steps:3,8,20' --out '" +
                                           dir.file("x.npy") + "' --png '" + dir.file("g.png") + "' --size 600x400",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const guitest::Png p = guitest::read_png(dir.file("g.png"));
  EXPECT_EQ(p.w, 600);
  EXPECT_EQ(p.h, 400);
  EXPECT_GT(p.distinct_colors(), 50u);  // six scatters, labels, captions
  const std::optional<std::string> text = read_png_text(dir.file("g.png"), "diffscope", "test");
  ASSERT_TRUE(text.has_value());
  EXPECT_EQ(*text, guitest::slurp(dir.file("g.json")));
  const nlohmann::json j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["kind"], "grid");
  EXPECT_EQ(j["grid"]["spec"]["rows"]["values"], nlohmann::json({"ddim", "heun"}));
  EXPECT_EQ(j["grid"]["spec"]["cols"]["values"], nlohmann::json({3, 8, 20}));
  ASSERT_EQ(j["grid"]["cells"].size(), 6u);
  EXPECT_EQ(j["grid"]["cells"][4]["evaluations"], 15);  // heun, 8 steps: 2 N - 1
  EXPECT_NE(j["command_line"].get<std::string>().find("--grid 'rows=sampler:ddim,heun cols=steps:3,8,20'"),
            std::string::npos);
  for (const char* from : {"g.png", "g.json"}) {
    r = guitest::run_cli(common + "--grid @'" + dir.file(from) + "' --out '" + dir.file("again.npy") + "'", logs.path());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(guitest::slurp(dir.file("again.npy")), guitest::slurp(dir.file("x.npy"))) << from;
  }
  r = guitest::run_cli(common + "--grid 'cols=steps:1,2,3,4,5,6,7,8' --out '" + dir.file("y.npy") + "' --png '" +
                           dir.file("y.png") + "' --size 200x100",
                       logs.path());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("valid: at least 32x32 per cell"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("y.npy")));
}

}  // namespace
}  // namespace diffscope
