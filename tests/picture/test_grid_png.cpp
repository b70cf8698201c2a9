// test_grid_png.cpp — `diffscope sample --grid ... --png` (picture/grid_png.h, SEMANTICS §10): the picture's size
// and content, the sidecar in the PNG and beside it (kind grid, the spec, every cell's metrics), the spec restored
// from either (`--grid @grid.png`, `@grid.json`: the same cells bit for bit), a size too small for the cells refused;
// `--video`: the grid over its timeline.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <utility>

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

// `--video`: one frame per frame of the timeline cell (the longest: 25 steps, 26 frames) at the asked size, a
// sidecar with the spec and the frames' positions 0 .. 1 that restores the same cells; refusals before any run.
TEST(GridPng, VideoHasAFramePerTimelineFrameAndARestorableSidecar) {
  if (std::system("ffmpeg -version >/dev/null 2>&1 && ffprobe -version >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no ffmpeg / ffprobe";
  test::TempDir dir, logs;
  const std::string common = "sample --backend cpu --model moons --n 200 --seed 3 ";
  guitest::Result r = guitest::run_cli(common + "--grid 'rows=sampler:ddim,heun cols=steps:4,10,25' --out '" +
                                           dir.file("x.npy") + "' --video '" + dir.file("g.mp4") + "' --size 480x320",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string probe = logs.file("probe.csv");
  ASSERT_EQ(std::system(("ffprobe -v error -select_streams v:0 -count_frames -show_entries stream=width,height,"
                         "nb_read_frames -of csv=p=0 '" + dir.file("g.mp4") + "' >'" + probe + "' 2>&1").c_str()), 0);
  EXPECT_EQ(guitest::slurp(probe), "480,320,26\n");
  const nlohmann::json j = nlohmann::json::parse(guitest::slurp(dir.file("g.mp4.json")));
  EXPECT_EQ(j["kind"], "grid");
  ASSERT_EQ(j["positions"].size(), 26u);
  EXPECT_EQ(j["positions"][0], 0.0);
  EXPECT_EQ(j["positions"][25], 1.0);
  EXPECT_EQ(j["positions"][5], 0.2);
  r = guitest::run_cli(common + "--grid @'" + dir.file("g.mp4.json") + "' --out '" + dir.file("again.npy") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(guitest::slurp(dir.file("again.npy")), guitest::slurp(dir.file("x.npy")));
  for (const auto& [more, part] : {std::pair<std::string, std::string>{"--video '" + dir.file("h.mp4") +
                                                                           "' --grid-position 0.5",
                                                                       "--grid-position cannot be combined with --video"},
                                   {"--video '" + dir.file("h.avi") + "'", "--video"}}) {
    r = guitest::run_cli(common + "--grid 'cols=steps:4,10' --out '" + dir.file("y.npy") + "' " + more, logs.path());
    EXPECT_EQ(r.code, 2) << more;
    EXPECT_NE(r.err.find(part), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("y.npy")));
  }
}

}  // namespace
}  // namespace diffscope
