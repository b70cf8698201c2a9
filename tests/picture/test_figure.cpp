// test_figure.cpp — the export option `figure` and the vector figures (SEMANTICS §6 "Figures"): off, the PNG is
// byte for byte the one written without the option; on, the view sits inside a white page (axes, legend, caption)
// and the sidecar records it, and its --config reproduces the same bytes; --svg / --pdf refuse a wrong name or a
// page too small with exit 2, writing nothing; a vector figure's sidecar runs as --config; the headless app's
// `export svg` / `export pdf` and `set figure 1`.
// The SVG and PDF are read by independent readers in tests/picture/test_figure_files.py.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

struct FigureRun : guitest::AppFixture {
  // `sample` of the 2D model, 300 samples, 12 steps, seed 5, at 480x360 with `extra` options.
  guitest::Result sample(const std::string& extra) {
    return guitest::run_cli("sample --backend cpu --model '" + guitest::model_2d() +
                                "' --n 300 --steps 12 --seed 5 --size 480x360 --out '" + file("x.npy") + "' " + extra,
                            logs.path());
  }
};

TEST_F(FigureRun, OffLeavesThePngBytesAsWithoutTheOption) {
  ASSERT_EQ(sample("--no-png-text --png '" + file("absent.png") + "'").code, 0);
  const guitest::Result r = sample("--no-png-text --figure 0 --png '" + file("off.png") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string absent = guitest::slurp(file("absent.png")), off = guitest::slurp(file("off.png"));
  ASSERT_FALSE(absent.empty());
  EXPECT_TRUE(absent == off) << "figure off changed the PNG";
  EXPECT_EQ(sidecar(file("off.json"))["figure"], false);
  EXPECT_EQ(sidecar(file("absent.json"))["figure"], false);
}

TEST_F(FigureRun, OnDrawsAPageAroundTheViewAndTheSidecarRestoresIt) {
  const guitest::Result r = sample("--no-png-text --figure 1 --png '" + file("fig.png") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const guitest::Png fig = guitest::read_png(file("fig.png"));
  ASSERT_EQ(fig.w, 480);
  ASSERT_EQ(fig.h, 360);
  // The page's corner is white; the plot's middle has the view's background (0.055, 0.06, 0.075 -> 14, 15, 19).
  EXPECT_EQ(fig.rgb[0], 255);
  EXPECT_EQ(fig.rgb[1], 255);
  EXPECT_EQ(fig.rgb[2], 255);
  EXPECT_GT(fig.distinct_colors(), 50u);  // points, axes, anti-aliased text
  EXPECT_GT(fig.non_background(), 0.3);   // the plot covers much of the page
  const nlohmann::json j = sidecar(file("fig.json"));
  EXPECT_EQ(j["figure"], true);
  EXPECT_NE(j["command_line"].get<std::string>().find("--figure 1"), std::string::npos) << j["command_line"];
  // The sidecar as --config: the option restored, the same picture.
  const guitest::Result again = guitest::run_cli(
      "sample --config '" + file("fig.json") + "' --out '" + file("y.npy") + "' --no-png-text --png '" + file("again.png") + "'",
      logs.path());
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(sidecar(file("again.json"))["figure"], true);
  EXPECT_TRUE(guitest::slurp(file("again.png")) == guitest::slurp(file("fig.png"))) << "the restored figure differs";
}

// The legend row (above the plot: the page's top 12 rows at 480x360, font 8 px) names what the view draws: the
// samples' hue bar with the points, viridis's bar with the density view, both with both.
TEST_F(FigureRun, LegendShowsTheDensityPaletteInTheDensityView) {
  // A colour near `want` (within 12 levels each) among the legend row's pixels.
  const auto has_colour = [](const guitest::Png& p, int r, int g, int b) {
    for (int y = 0; y < 12; ++y)
      for (int x = 0; x < p.w; ++x) {
        const unsigned char* q = &p.rgb[3 * (size_t(y) * p.w + x)];
        if (std::abs(q[0] - r) <= 12 && std::abs(q[1] - g) <= 12 && std::abs(q[2] - b) <= 12) return true;
      }
    return false;
  };
  for (const char* mode : {"points", "density", "both"}) {
    const guitest::Result r = sample(std::string("--figure 1 --view-mode ") + mode + " --png '" + file("f.png") + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    const guitest::Png p = guitest::read_png(file("f.png"));
    const bool points = std::string(mode) != "density", density = std::string(mode) != "points";
    // The hue bar's middle, angle 0: common.glsl palette(0.5) = (0.1, 0.767, 0.767); viridis's middle (entry 128):
    // (33, 145, 140).
    EXPECT_EQ(has_colour(p, 26, 196, 196), points) << mode;
    EXPECT_EQ(has_colour(p, 33, 145, 140), density) << mode;
  }
}

TEST_F(FigureRun, BadNamesAndTooSmallPagesWriteNothing) {
  guitest::Result r = sample("--svg '" + file("f.png") + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--svg = " + file("f.png")), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("valid: a name ending in .svg or .pdf"), std::string::npos) << r.err;
  r = sample("--pdf '" + file("f.svgz") + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--pdf = "), std::string::npos) << r.err;
  r = sample("--svg '" + file("f.pdf") + "'");  // the other format's name: refused, never written as that format
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--svg = " + file("f.pdf") + ": the file is written as svg; valid: a name ending in .svg"),
            std::string::npos) << r.err;
  r = guitest::run_cli("sample --backend cpu --model '" + guitest::model_2d() + "' --n 10 --steps 2 --size 64x64 --out '" +
                           file("x.npy") + "' --pdf '" + file("f.pdf") + "'",
                       logs.path());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("64x64 leaves no room"), std::string::npos) << r.err;
  EXPECT_EQ(names(dir.path()), std::vector<std::string>{}) << "a refused run left files";
}

// A vector figure's sidecar (name.svg.json) runs as --config: no unknown key, the same samples.
TEST_F(FigureRun, VectorFigureSidecarRunsAsConfig) {
  ASSERT_EQ(sample("--svg '" + file("a.svg") + "'").code, 0);
  const guitest::Result r =
      guitest::run_cli("sample --config '" + file("a.svg.json") + "' --out '" + file("y.npy") + "'", logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("unknown keys"), std::string::npos) << r.err;
  EXPECT_TRUE(guitest::slurp(file("x.npy")) == guitest::slurp(file("y.npy")));
  EXPECT_EQ(sidecar(file("a.svg.json"))["svg"], "a.svg");
}

// A vector figure's sidecar records the camera the figure was fitted with, as the PNG's does: its --config draws the
// figure PNG of the same run byte for byte (it drew a zoomed plot when it kept the camera before the fit).
TEST_F(FigureRun, VectorFigureSidecarKeepsTheFittedCamera) {
  ASSERT_EQ(sample("--no-png-text --figure 1 --png '" + file("a.png") + "'").code, 0);
  ASSERT_EQ(sample("--pdf '" + file("a.pdf") + "'").code, 0);
  const nlohmann::json png = sidecar(file("a.json")), pdf = sidecar(file("a.pdf.json"));
  for (const char* key : {"cam_x", "cam_y", "cam_half_h"}) EXPECT_EQ(pdf["view"][key], png["view"][key]) << key;
  const guitest::Result r = guitest::run_cli("sample --config '" + file("a.pdf.json") + "' --out '" + file("y.npy") +
                                                 "' --no-png-text --figure 1 --png '" + file("b.png") + "'",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(guitest::slurp(file("b.png")) == guitest::slurp(file("a.png"))) << "the vector sidecar's camera differs";
}

TEST_F(FigureRun, HeadlessAppExportsSvgPdfAndTheFigureSnapshot) {
  const guitest::Result r = run_gui("model " + guitest::model_2d() + "\nset n 200\nset steps 10\nwait_complete\n"
                                    "set export_size 600x450\nexport svg " + file("a.svg") + "\nexport pdf " +
                                    file("a.pdf") + "\nset figure 1\nexport snapshot " + file("s.png") + "\n");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const std::string svg = guitest::slurp(file("a.svg"));
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<title>"), std::string::npos);
  EXPECT_EQ(guitest::slurp(file("a.pdf")).rfind("%PDF-", 0), 0u);
  EXPECT_EQ(sidecar(file("a.svg.json"))["kind"], "figure");
  const std::string line = sidecar(file("a.svg.json"))["command_line"].get<std::string>();
  EXPECT_NE(line.find("--svg " + file("a.svg")), std::string::npos) << line;
  EXPECT_NE(line.find("--size 600x450"), std::string::npos) << line;
  EXPECT_EQ(sidecar(file("s.json"))["figure"], true);
  const guitest::Png s = guitest::read_png(file("s.png"));
  EXPECT_EQ(s.w, 600);
  EXPECT_EQ(s.rgb[0], 255);  // the figure's white page
}

}  // namespace
}  // namespace diffscope
