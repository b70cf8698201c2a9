// test_density_view.cpp — the density view (SEMANTICS §6 "The density view"): the GL histogram
// (shaders/density_bin.comp through render::Renderer::bin_density, read back here only) equals the CPU one
// (diffusion/density.h histogram_2d) bin for bin, and both equal numpy's histogram2d of the exported state
// (`sample --out`) with the same float32 edges, points exactly on edges included; view_mode and its rows persist
// in the sidecar and restore; density pictures show the samples. CPU backend, Mesa GL (EGL) in CI.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffusion/density.h"
#include "formats/npy.h"
#include "gui_test_util.h"
#include "render/egl_display.h"
#include "render/gl_buffers.h"
#include "render/renderer.h"

namespace diffscope {
namespace {

// The exported state of 65,536 moons samples (5 ddim steps, CPU), plus points exactly on edges of `g`: every
// x edge on a row through the middle, the last edges, and points just outside.
std::vector<float> state_with_edge_points(const test::TempDir& dir, const HistogramGrid& g) {
  const guitest::Result r = guitest::run_cli("sample --model '" + guitest::model_2d() +
                                                 "' --n 65536 --steps 5 --seed 3 --backend cpu --out '" +
                                                 dir.file("state.npy") + "'",
                                             dir.path());
  EXPECT_EQ(r.code, 0) << r.err;
  NpyFloat s = read_npy_float(dir.file("state.npy"), "state");
  EXPECT_EQ(s.shape, (std::vector<int64_t>{65536, 2}));
  const std::vector<float> ex = histogram_edges(g.x0, g.x1, g.nx), ey = histogram_edges(g.y0, g.y1, g.ny);
  for (int k = 0; k <= g.nx; ++k) s.data.insert(s.data.end(), {ex[k], ey[g.ny / 2]});
  for (int k = 0; k <= g.ny; ++k) s.data.insert(s.data.end(), {ex[g.nx / 3], ey[k]});
  s.data.insert(s.data.end(), {ex[g.nx], ey[g.ny], ex[0], ey[0], std::nextafter(ex[0], -1e9f), ey[1],
                               ex[1], std::nextafter(ey[g.ny], 1e9f)});
  return s.data;
}

// numpy's histogram2d of `pts` over the same float32 edges (float64 in numpy), transposed to (ny, nx).
std::vector<double> numpy_histogram(const test::TempDir& dir, const std::vector<float>& pts, const HistogramGrid& g) {
  const std::vector<float> ex = histogram_edges(g.x0, g.x1, g.nx), ey = histogram_edges(g.y0, g.y1, g.ny);
  write_npy_float(dir.file("pts.npy"), {int64_t(pts.size() / 2), 2}, pts.data(), "pts");
  write_npy_float(dir.file("ex.npy"), {int64_t(ex.size())}, ex.data(), "ex");
  write_npy_float(dir.file("ey.npy"), {int64_t(ey.size())}, ey.data(), "ey");
  const std::string py =
      "import numpy as np, sys; d = sys.argv[1]; p = np.load(d + '/pts.npy').astype(np.float64); "
      "H, _, _ = np.histogram2d(p[:, 0], p[:, 1], bins=[np.load(d + '/ex.npy').astype(np.float64), "
      "np.load(d + '/ey.npy').astype(np.float64)]); np.save(d + '/np_counts.npy', np.ascontiguousarray(H.T))";
  const std::string cmd = std::string(DIFFSCOPE_NUMPY_PYTHON) + " -c \"" + py + "\" '" + dir.path() + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  return read_npy_double(dir.file("np_counts.npy"), "numpy").data;
}

TEST(DensityView, GlHistogramEqualsCpuAndNumpyHistogram2d) {
  test::TempDir dir;
  // A rectangle through the moons (some samples outside it), bins of unequal width and height.
  HistogramGrid g;
  g.x0 = -1.3, g.x1 = 2.1, g.y0 = -0.7, g.y1 = 1.15, g.nx = 97, g.ny = 61;
  const std::vector<float> pts = state_with_edge_points(dir, g);
  const int B = int(pts.size() / 2);

  const std::vector<uint32_t> cpu = histogram_2d(pts.data(), B, g);
  const std::vector<double> ref = numpy_histogram(dir, pts, g);
  ASSERT_EQ(ref.size(), cpu.size());
  size_t total = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    ASSERT_EQ(double(cpu[i]), ref[i]) << "bin " << i % g.nx << ", " << i / g.nx << ": CPU vs numpy";
    total += cpu[i];
  }
  EXPECT_GT(total, 30000u);
  EXPECT_LT(total, size_t(B)) << "some samples lie outside the rectangle";

  render::EglDisplay display;
  display.set_size(64, 64);
  display.bind_target();
  render::GlTrajectoryBuffer traj;
  traj.resize(pts.size() * sizeof(float));
  traj.upload(0, pts.size() * sizeof(float), pts.data());
  render::Renderer renderer;
  render::SceneInput in;
  in.trajectory = &traj;
  in.B = B, in.dim = 2, in.slot = 0;
  renderer.bin_density(in, g);
  const std::vector<uint32_t> gl = renderer.density_counts();
  ASSERT_EQ(gl.size(), cpu.size());
  for (size_t i = 0; i < cpu.size(); ++i) ASSERT_EQ(gl[i], cpu[i]) << "bin " << i % g.nx << ", " << i / g.nx << ": GL vs CPU";
  uint32_t top = 0;
  for (uint32_t c : cpu) top = std::max(top, c);
  for (int i = 0; i < 100 && renderer.density_max() == 0; ++i) glFinish();
  EXPECT_EQ(renderer.density_max(), top) << "the colour bar's largest count";
}

// Scripts (tests/ui/scripts style): `set view_mode density` etc. reach the sidecar, and --restore brings them back.
TEST(DensityView, ViewModePersistsInTheSidecarAndRestores) {
  test::TempDir dir, logs;
  const std::string script = dir.file("s.txt");
  std::ofstream(script) << "set n 2000\nset steps 10\nset view_mode density\nset density_scale linear\n"
                           "set density_bin_px 5\nset density_contours 0\nset export_size 200x160\nwait_complete 5000\n"
                           "export snapshot " + dir.file("d.png") + "\n";
  guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 640x480 --model '" +
                                           guitest::model_2d() + "' --script '" + script + "'",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(guitest::slurp(dir.file("d.json")));
  EXPECT_EQ(j["view"]["view_mode"], "density");
  EXPECT_EQ(j["view"]["density_scale"], "linear");
  EXPECT_EQ(j["view"]["density_bin_px"], 5);
  EXPECT_EQ(j["view"]["density_contours"], false);
  EXPECT_GT(guitest::read_png(dir.file("d.png")).distinct_colors(), 8u) << "the histogram drew";

  // Restored, the app shows the same view: its own export writes the same rows.
  std::ofstream(dir.file("r.txt")) << "wait_complete 5000\nexport snapshot " + dir.file("r.png") + "\n";
  r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 640x480 --restore '" + dir.file("d.png") +
                           "' --script '" + dir.file("r.txt") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json k = nlohmann::json::parse(guitest::slurp(dir.file("r.json")));
  for (const char* key : {"view_mode", "density_scale", "density_bin_px", "density_contours"})
    EXPECT_EQ(k["view"][key], j["view"][key]) << key;

  // A bad value is refused with the valid names, and exits 2.
  std::ofstream(dir.file("b.txt")) << "set view_mode heat\n";
  r = guitest::run_cli("gui --headless --backend cpu --no-persist --model '" + guitest::model_2d() + "' --script '" +
                           dir.file("b.txt") + "'",
                       logs.path());
  EXPECT_NE(r.code, 0);
  EXPECT_NE((r.out + r.err).find("valid: points, density, both"), std::string::npos) << r.out << r.err;
}

// Exported density pictures carry the colour bar's numbers (picture/colour_bar_text.h): the app's snapshot and
// `sample --config` of its sidecar are the same pixels, and with the linear scale there is label text left of the bar
// at its top (the largest count), middle (half) and bottom (0), and none a quarter of the way up or down.
TEST(DensityView, ExportedPicturesLabelTheColourBar) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("s.txt")) << "set n 3000\nset steps 10\nset view_mode density\nset density_scale linear\n"
                                      "set export_size 480x320\nwait_complete 5000\nexport snapshot " + dir.file("g.png") + "\n";
  guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 640x480 --model '" +
                                           guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  r = guitest::run_cli("sample --config '" + dir.file("g.png") + "' --out '" + dir.file("c.npy") + "' --png '" +
                           dir.file("c.png") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const guitest::Png g = guitest::read_png(dir.file("g.png")), c = guitest::read_png(dir.file("c.png"));
  EXPECT_TRUE(g.rgb == c.rgb) << "the snapshot and sample --config differ";
  const render::Rect bar = render::Renderer::colour_bar_rect(render::Renderer::layout(480, 320, false, {}).scatter);
  // Light grey text pixels (the labels' ink, 200, 206, 220, anti-aliased) in rows [y - 3, y + 3] (top-down), within
  // 40 px left of the bar.
  const auto ink_near = [&](double t) {
    const int y = int(std::lround(320 - bar.y - t * bar.h));
    int n = 0;
    for (int row = std::max(0, y - 3); row <= std::min(319, y + 3); ++row)
      for (int x = std::max(0, bar.x - 40); x < bar.x - 5; ++x) {
        const unsigned char* q = &c.rgb[3 * (size_t(row) * 480 + x)];
        n += q[0] > 120 && q[1] > 120 && q[2] > 120;
      }
    return n;
  };
  EXPECT_GT(ink_near(1.0), 0) << "the largest count";
  EXPECT_GT(ink_near(0.5), 0) << "half of it";
  EXPECT_GT(ink_near(0.0), 0) << "0";
  EXPECT_EQ(ink_near(0.25), 0);
  EXPECT_EQ(ink_near(0.75), 0);
}

// The D key cycles points -> density -> both, but never while a text field has the keyboard.
TEST(DensityView, DKeyCyclesTheViewModeButNotWhileTyping) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("s.txt")) << "set n 64\nset steps 10\nset export_size 120x90\nwait_complete 2000\n"
                                      "click model_path D\nkey D\nframes 2\n"
                                      "mouse 900 300\nmouse 900 300 down\nmouse 900 300 up\nkey D\nframes 2\n"
                                      "export snapshot " + dir.file("a.png") + "\nkey D\nkey D\nframes 2\n"
                                      "export snapshot " + dir.file("b.png") + "\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 1280x800 --model '" +
                                                 guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(guitest::slurp(dir.file("a.json")))["view"]["view_mode"], "density")
      << "one D in the view; the D typed into the model field and the one pressed there are the field's";
  EXPECT_EQ(nlohmann::json::parse(guitest::slurp(dir.file("b.json")))["view"]["view_mode"], "points");
}

}  // namespace
}  // namespace diffscope
