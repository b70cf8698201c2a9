// test_splat_draw.cpp — points and trails drawn by the compute splat (SEMANTICS §6 "Drawing points and trails",
// render/splat.h): the accumulation image of a few known points and segments equals the closed form of which pixels
// they hit and what they add (GL's point square and disc, the segment's pixel per column, the fixed-point optical
// depth), the resolve equals its formula (depth-weighted mean colour, transmittance exp(-g D), the exposure g from the
// 99th percentile's power of two), and on a small scene the splat's picture agrees with the GL primitives' within
// the tolerance SEMANTICS states; a pane beyond GL's storage block limit falls back to the primitives; the bench hook
// names the mode, and the app's snapshot equals `sample --config` of its sidecar. CPU only, Mesa GL (EGL) in CI.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "gui_test_util.h"
#include "render/egl_display.h"
#include "render/gl_buffers.h"
#include "render/renderer.h"
#include "render/splat.h"

namespace diffscope {
namespace {

constexpr double kTwoPi = 6.28318;  // shaders/common.glsl's constant

// shaders/common.glsl row_color: the cosine palette at the angle of the row's slot-0 position, in float64.
std::array<double, 3> row_colour(double x0, double y0) {
  const double h = std::atan2(y0, x0) / kTwoPi + 0.5;
  return {0.55 + 0.45 * std::cos(kTwoPi * (h + 0.0)), 0.55 + 0.45 * std::cos(kTwoPi * (h + 0.33)),
          0.55 + 0.45 * std::cos(kTwoPi * (h + 0.67))};
}

double depth_units(double a) { return -std::log(1.0 - std::min(a, 0.999)) * render::SplatDraw::kFixed; }

// A 64 x 32 pane whose camera maps data units to pixels one to one (window = data coordinates).
struct Scene {
  render::EglDisplay display;
  render::GlTrajectoryBuffer traj;
  render::Renderer renderer;
  render::SceneInput in;
  render::Rect pane{0, 0, 64, 32};
  float view[4] = {32.f, 16.f, 1.f / 32.f, 1.f / 16.f};
  explicit Scene(const std::vector<float>& slots, int B, int w = 64, int h = 32) {
    display.set_size(w, h);
    display.bind_target();
    traj.resize(slots.size() * sizeof(float));
    traj.upload(0, slots.size() * sizeof(float), slots.data());
    in.trajectory = &traj;
    in.B = B, in.dim = 2;
  }
  std::vector<uint32_t> accumulate(int slot, int trail) {
    in.slot = slot;
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, traj.gl_buffer());
    renderer.set_projection({0, 0}, {1, 0}, {0, 1});
    render::SplatDraw& s = const_cast<render::SplatDraw&>(renderer.splat());
    s.accumulate(in, pane, view, trail);
    return s.accumulation();
  }
};

// accum index of pixel (x, y), layer l (0 trails, 1 points), channel c.
size_t at(int x, int y, int l, int c) { return 8 * (size_t(y) * 64 + x) + 4 * l + c; }

TEST(SplatDraw, PointsHitGlsPointSquareAndDisc) {
  // Slot 0 (the colours) and slot 1 (drawn): a 2-px square point and a 5-px disc.
  const std::vector<float> slots = {1.f, 0.5f, -0.3f, 2.f, 10.3f, 5.6f, 40.f, 20.f};
  Scene s(slots, 2);
  s.in.point_alpha = 0.6f;
  s.in.point_size = 2.0f;
  std::vector<uint32_t> acc = s.accumulate(1, 0);
  const auto c0 = row_colour(1.0, 0.5);
  // Centres x + 0.5 in [9.3, 11.3) and y + 0.5 in [4.6, 6.6): x 9, 10 and y 5, 6.
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 30; ++x) {
      const bool hit = (x == 9 || x == 10) && (y == 5 || y == 6);
      const double d = hit ? depth_units(0.6) : 0.0;
      ASSERT_NEAR(acc[at(x, y, 1, 3)], d, 1.0) << x << "," << y;
      for (int c = 0; c < 3; ++c) ASSERT_NEAR(acc[at(x, y, 1, c)], d * c0[c], 1.5) << x << "," << y << " channel " << c;
      ASSERT_EQ(acc[at(x, y, 0, 3)], 0u) << "no trails";
    }
  s.in.point_size = 5.0f;  // a disc: centres in [37.5, 42.5) each way, alpha 0.6 (1 - smoothstep(0.6, 1, r^2))
  acc = s.accumulate(1, 0);
  const auto c1 = row_colour(-0.3, 2.0);
  int hits = 0;
  for (int y = 30; y >= 0; --y)
    for (int x = 32; x < 64; ++x) {
      const double dx = (x + 0.5 - 40.0) / 2.5, dy = (y + 0.5 - 20.0) / 2.5, r2 = dx * dx + dy * dy;
      const bool in_square = x >= 37 && x <= 41 && y >= 17 && y <= 21;
      const double t = std::clamp((r2 - 0.6) / 0.4, 0.0, 1.0);
      const double a = in_square && r2 <= 1.0 ? 0.6 * (1.0 - t * t * (3 - 2 * t)) : 0.0;
      const double d = a > 0 ? depth_units(a) : 0.0;
      ASSERT_NEAR(acc[at(x, y, 1, 3)], d, 2.0) << x << "," << y;
      ASSERT_NEAR(acc[at(x, y, 1, 0)], d * c1[0], 2.0) << x << "," << y;
      hits += d > 0;
    }
  EXPECT_EQ(hits, 16) << "the 5 x 5 square's outer centres lie on the disc's edge (alpha 0): 4 x 4 left";
}

TEST(SplatDraw, TrailSegmentHitsOnePixelPerColumnWithItsFadingAlpha) {
  // Row 0 goes from (5, 25.25) (slot 0) to (25, 30.25) (slot 1); row 1 sits still (a zero-length segment: nothing).
  const std::vector<float> slots = {5.f, 25.25f, 50.f, 3.f, 25.f, 30.25f, 50.f, 3.f};
  Scene s(slots, 2);
  s.in.point_alpha = 0.5f;  // trails: alpha 0.8 x 0.5 = 0.4 at slot 1, (1 - 1)^2 = 0 at slot 0
  s.in.point_size = 1.0f;
  const std::vector<uint32_t> acc = s.accumulate(1, 1);
  const auto c = row_colour(5.0, 25.25);
  std::vector<double> want(64 * 32, 0.0);
  // Going from x = 25 down to x = 5: the columns whose centre k + 0.5 lies in (5, 25], each at its centre's row.
  for (int k = 5; k <= 24; ++k) {
    const double t = (25.0 - (k + 0.5)) / 20.0, y = 30.25 - 5.0 * t;
    want[size_t(std::floor(y)) * 64 + k] = depth_units(0.4 * (1.0 - t));
  }
  for (int y = 0; y < 32; ++y)
    for (int x = 0; x < 64; ++x) {
      ASSERT_NEAR(acc[at(x, y, 0, 3)], want[size_t(y) * 64 + x], 1.0) << x << "," << y;
      ASSERT_NEAR(acc[at(x, y, 0, 1)], want[size_t(y) * 64 + x] * c[1], 1.5) << x << "," << y;
    }
}

// The resolve over a cleared pane: pixel = mean (1 - T) + background T per layer, points over trails.
TEST(SplatDraw, ResolveIsTheToneMapFormula) {
  // Three rows of different colours on one pixel (13, 7), one alone on (40, 20); 1-px points, alpha 0.6.
  const std::vector<float> slots = {1.f, 0.f, 0.f, 1.f, -1.f, -0.2f, 1.f, 1.f,
                                    13.2f, 7.7f, 13.9f, 7.1f, 13.5f, 7.5f, 40.5f, 20.5f};
  Scene s(slots, 4);
  s.in.point_alpha = 0.6f, s.in.point_size = 1.0f;
  const std::vector<uint32_t> acc = s.accumulate(1, 0);
  glClearColor(0.2f, 0.4f, 0.6f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  glViewport(0, 0, 64, 32);
  const_cast<render::SplatDraw&>(s.renderer.splat()).resolve(s.pane);
  const render::Pixels px = s.display.read_rgba();
  // Depths: one pixel of 3 x -ln 0.4 (bin of 11,259 units: [8192, 16384)), one of 1 x (3753: [2048, 4096)). The
  // 99th percentile of two pixels is the deeper: D99 = 16384 / 4096 = 4, so g = min(1, 4 / 4) = 1.
  const double g = 1.0;
  const double bg[3] = {0.2, 0.4, 0.6};
  for (const auto& [x, y, rows] : std::vector<std::tuple<int, int, std::vector<int>>>{{13, 7, {0, 1, 2}}, {40, 20, {3}}}) {
    double D = 0, sum[3] = {0, 0, 0};
    for (int r : rows) {
      const auto c = row_colour(slots[2 * r], slots[2 * r + 1]);
      const double d = depth_units(0.6) / render::SplatDraw::kFixed;
      D += d;
      for (int k = 0; k < 3; ++k) sum[k] += d * c[k];
    }
    const double T = std::exp(-g * D);
    for (int k = 0; k < 3; ++k) {
      const double want = 255.0 * (sum[k] / D * (1 - T) + bg[k] * T);
      const int got = px.rgba[4 * (size_t(31 - y) * 64 + x) + k];
      EXPECT_NEAR(got, want, 1.0) << x << "," << y << " channel " << k;
    }
    EXPECT_NEAR(acc[at(x, y, 1, 3)], D * render::SplatDraw::kFixed, 3.0);
  }
  EXPECT_EQ(px.rgba[4 * (size_t(31 - 3) * 64 + 3)], uint8_t(std::lround(0.2 * 255))) << "an empty pixel is left alone";
}

// The exposure above the knee: 200 rows on one pixel, depth 200 x 0.916 = 183 (bin [128, 256)): g = 4 / 256, and a
// single point elsewhere is drawn with that g too.
TEST(SplatDraw, ExposureScalesDepthsAboveTheKnee) {
  std::vector<float> slots;
  for (int r = 0; r < 201; ++r) slots.insert(slots.end(), {1.f, 0.f});
  for (int r = 0; r < 200; ++r) slots.insert(slots.end(), {20.5f, 10.5f});
  slots.insert(slots.end(), {50.5f, 5.5f});
  Scene s(slots, 201);
  s.in.point_alpha = 0.6f, s.in.point_size = 1.0f;
  s.accumulate(1, 0);
  glClearColor(0.f, 0.f, 0.f, 1.f);
  glClear(GL_COLOR_BUFFER_BIT);
  const_cast<render::SplatDraw&>(s.renderer.splat()).resolve(s.pane);
  const render::Pixels px = s.display.read_rgba();
  const auto c = row_colour(1.0, 0.0);
  const double g = 4.0 / 256.0, d1 = std::round(depth_units(0.6)) / render::SplatDraw::kFixed;
  for (const auto& [x, y, D] : std::vector<std::tuple<int, int, double>>{{20, 10, 200 * d1}, {50, 5, d1}})
    for (int k = 0; k < 3; ++k)
      EXPECT_NEAR(px.rgba[4 * (size_t(31 - y) * 64 + x) + k], 255.0 * c[k] * (1 - std::exp(-g * D)), 1.0)
          << x << "," << y << " channel " << k;
}

// The accumulation image's size: 8 uint32 a pixel, and a pane beyond GL's storage block limit does not fit.
TEST(SplatDraw, ImageBytesAndTheStorageLimit) {
  render::EglDisplay display;
  display.set_size(16, 16);
  EXPECT_EQ(render::SplatDraw::image_bytes(1600, 1000), size_t(1600) * 1000 * 32);
  EXPECT_TRUE(render::SplatDraw::fits(1600, 1000));
  const size_t limit = render::max_storage_block_bytes();
  const int side = int(std::sqrt(double(limit) / 32.0)) + 2;  // just over the limit
  EXPECT_FALSE(render::SplatDraw::fits(side, side)) << "limit " << limit;
  EXPECT_TRUE(render::SplatDraw::fits(side - 4, side - 4)) << "limit " << limit;
}

// A small scene (1,000 random walks, 5 slots, trails 4, 256 x 256) in both draw modes: within SEMANTICS' tolerance.
TEST(SplatDraw, AgreesWithPrimitivesOnASmallScene) {
  const int B = 1000, slots_n = 5;
  std::mt19937 rng(7);
  std::normal_distribution<float> n01;
  std::vector<float> slots(size_t(slots_n) * B * 2);
  for (int r = 0; r < B; ++r) {
    float x = 2.5f * n01(rng), y = 2.5f * n01(rng);
    for (int t = 0; t < slots_n; ++t) {
      slots[(size_t(t) * B + r) * 2] = x, slots[(size_t(t) * B + r) * 2 + 1] = y;
      x = 0.95f * x + 0.1f * n01(rng), y = 0.95f * y + 0.1f * n01(rng);
    }
  }
  Scene s(slots, B, 256, 256);
  s.in.slot = 4, s.in.trail_slots = 4, s.in.point_size = 3.0f, s.in.point_alpha = 0.6f;
  s.in.show_data = false, s.in.show_axes = false;
  s.in.cam = {0, 0, 4.0};
  std::vector<uint8_t> shot[2];
  for (int mode = 0; mode < 2; ++mode) {
    s.in.splat = mode == 1;
    s.renderer.draw_scene(s.in, 256, 256);
    shot[mode] = s.display.read_rgba().rgba;
  }
  double sum = 0;
  size_t over8 = 0, covered = 0;
  for (size_t p = 0; p < shot[0].size() / 4; ++p) {
    int dmax = 0;
    for (int k = 0; k < 3; ++k) dmax = std::max(dmax, std::abs(int(shot[0][4 * p + k]) - int(shot[1][4 * p + k])));
    sum += dmax, over8 += dmax > 8;
    covered += shot[0][4 * p] != shot[0][0] || shot[0][4 * p + 1] != shot[0][1];
  }
  const double pixels = double(shot[0].size() / 4);
  EXPECT_GT(covered / pixels, 0.2) << "the scene covers the pane";
  EXPECT_LE(sum / pixels, 1.0) << "mean difference, 8-bit levels";
  EXPECT_LE(over8 / pixels, 0.01) << "pixels more than 8 levels apart";
  std::printf("splat vs primitives: mean %.3f levels, %.4f of the pixels > 8 levels, covered %.3f\n", sum / pixels,
              over8 / pixels, covered / pixels);
}

// The bench hook (bench/scale/gui_draw_modes.txt): a script's `measure` names the draw mode and gives the GL draw
// time in its line and its JSON; the picture in each mode shows the samples.
TEST(DrawModeScript, MeasureReportsTheDrawModeAndItsDrawTime) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("s.txt")) << "set n 500\nset steps 8\nset trail 4\nwait_complete 5000\n"
                                      "set draw_mode primitives\nmeasure 2\nset draw_mode splat\nmeasure 2\n"
                                      "screenshot " + dir.file("splat.png") + "\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 480x320 --model '" +
                                                 guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::vector<nlohmann::json> lines;
  for (size_t at = r.out.find("measure_json: "); at != std::string::npos; at = r.out.find("measure_json: ", at + 1))
    lines.push_back(nlohmann::json::parse(r.out.substr(at + 14, r.out.find('\n', at) - at - 14)));
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_EQ(lines[0]["draw_mode"], "primitives");
  EXPECT_EQ(lines[1]["draw_mode"], "splat");
  for (const auto& j : lines) EXPECT_GE(j["gl_draw_ms"].get<double>(), 0.0);
  EXPECT_NE(r.out.find("trail=4 draw=splat;"), std::string::npos) << r.out;
  EXPECT_GT(guitest::read_png(dir.file("splat.png")).distinct_colors(), 50u) << "the splat drew the samples";
}

// The splat's picture is the same in the app's snapshot and in `sample --config` of its sidecar (draw_mode is a
// picture setting the sidecar carries), picked particles' highlights included.
TEST(DrawModeScript, SplatSnapshotEqualsSamplePngOfItsSidecar) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("s.txt")) << "set n 3000\nset steps 10\nset trail 4\nset draw_mode splat\n"
                                      "set export_size 320x240\nwait_complete 5000\npin 5\n"
                                      "export snapshot " + dir.file("g.png") + "\n";
  guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 640x480 --model '" +
                                           guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json g = nlohmann::json::parse(guitest::slurp(dir.file("g.json")));
  EXPECT_EQ(g["view"]["draw_mode"], "splat");
  r = guitest::run_cli("sample --config '" + dir.file("g.png") + "' --out '" + dir.file("c.npy") + "' --png '" +
                           dir.file("c.png") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const guitest::Png a = guitest::read_png(dir.file("g.png")), b = guitest::read_png(dir.file("c.png"));
  EXPECT_GT(a.distinct_colors(), 50u);
  EXPECT_TRUE(a.rgb == b.rgb) << "the snapshot and sample --config differ";
}

}  // namespace
}  // namespace diffscope
