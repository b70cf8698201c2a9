// test_plot_view.cpp — the plot's view through the renderer's layout (render/renderer.h, session/view_fit.h): the
// camera fit uses the pane's real aspect for every picture size 16..16384 each way, and the axis grid's loop
// (render/axis_grid.h) is bounded whatever the camera holds. GUI builds only.
#include <gtest/gtest.h>

#ifdef DIFFSCOPE_HAVE_GUI
#include <cmath>
#include <random>
#include <vector>

#include "render/axis_grid.h"
#include "render/renderer.h"
#include "session/view_fit.h"

namespace diffscope {
namespace {

// A model without data of dimension `dim` (the fit then uses the rows it is given).
DiffusionModel bare_model(int dim) {
  DiffusionModel m;
  m.net.dim = dim;
  if (dim == 64) m.metadata["image_shape"] = "8x8";
  return m;
}

// Found by the public bug reports (tests/data/reported/): "tall-png" (`sample --png --size 16x1024` drew the samples
// outside the picture: a width/height below 0.05 was fitted as square).
TEST(ViewFit, EveryPictureSizeShowsEveryKeptPoint) {
  const int sizes[] = {16, 17, 31, 50, 52, 64, 333, 1024, 4096, 16383, 16384};
  for (int dim : {2, 64}) {
    const DiffusionModel m = bare_model(dim);
    std::mt19937 rng(7);
    std::normal_distribution<float> normal(0.f, 2.f);
    std::vector<float> rows(300 * dim);
    for (float& v : rows) v = normal(rng) + 1.5f;
    const Projection p = fit_projection(m, rows.data(), 300);
    for (int w : sizes) {
      for (int h : sizes) {
        SCOPED_TRACE("dim " + std::to_string(dim) + ", " + std::to_string(w) + "x" + std::to_string(h));
        const render::Rect pane = render::Renderer::layout(w, h, image_side(m) > 0, {}).scatter;
        ASSERT_GT(pane.w, 0);
        ASSERT_GT(pane.h, 0);
        const double aspect = double(pane.w) / pane.h;
        const CameraFit c = fit_camera(m, p, aspect, rows.data(), 300);
        const double half_w = c.half_h * aspect;
        // All 300 rows are kept (none is a far outlier), so each must be inside the view.
        for (int i = 0; i < 300; ++i) {
          double q[2] = {0, 0};
          for (int d = 0; d < dim; ++d) {
            q[0] += (rows[i * dim + d] - p.mean[d]) * p.axis0[d];
            q[1] += (rows[i * dim + d] - p.mean[d]) * p.axis1[d];
          }
          ASSERT_LE(std::abs(q[0] - c.cx), half_w) << "row " << i;
          ASSERT_LE(std::abs(q[1] - c.cy), c.half_h) << "row " << i;
        }
      }
    }
  }
}

// Found by the public bug reports (tests/data/reported/): "persisted settings" (cam_x = 1e16 stalled the loop).
TEST(AxisGrid, LoopIsBoundedWhateverTheCamera) {
  // The reported settings: cam_x = 1e16, half-height 3 (step 1): 1e16 + 1 == 1e16, the old loop never ended.
  EXPECT_TRUE(render::grid_lines(1e16 - 4.8, 1e16 + 4.8, render::grid_step(3.0)).empty());
  // Ordinary views: the multiples of the step inside the range (step 1 for half-height 3, 0.5 for 2).
  EXPECT_EQ(render::grid_lines(-2.5, 2.5, render::grid_step(3.0)), (std::vector<double>{-2, -1, 0, 1, 2}));
  EXPECT_EQ(render::grid_step(2.0), 0.5);
  // Non-finite or absurd inputs give no lines, never an endless or huge loop.
  for (double lo : {-HUGE_VAL, std::nan(""), -1e300}) EXPECT_TRUE(render::grid_lines(lo, 1e300, 1e-3).empty());
  EXPECT_TRUE(render::grid_lines(0, 1, 0).empty());
  EXPECT_TRUE(render::grid_lines(0, 1e6, 1).empty());  // more than kMaxGridLines
  EXPECT_EQ(render::grid_lines(0, render::kMaxGridLines - 1, 1).size(), size_t(render::kMaxGridLines));
}

}  // namespace
}  // namespace diffscope
#endif
