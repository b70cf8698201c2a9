// test_view_fit.cpp — session/view_fit.h: the camera fit fills a pane of any aspect with the data and the unit
// noise (expected bounds by hand from the data's extent), widens for the newest frame and ignores far outliers.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "session/view_fit.h"

namespace diffscope {
namespace {

// A 2D model with data points spread along x only: (-10, 0) .. (10, 0).
DiffusionModel wide_data_model() {
  DiffusionModel m;
  m.net.dim = 2;
  for (int i = 0; i <= 20; ++i) m.data_samples.insert(m.data_samples.end(), {float(i - 10), 0.f});
  m.n_data = 21;
  return m;
}

TEST(ViewFit, FitsTheDataInPanesOfAnyAspect) {
  const DiffusionModel m = wide_data_model();
  const Projection p = fit_projection(m, nullptr, 0);
  for (const double aspect : {0.5, 0.7, 1.0, 2.0}) {
    const CameraFit c = fit_camera(m, p, aspect);
    // Visible: cx +- half_h * aspect by cy +- half_h. Data x in [-10, 10]; unit noise +-3.2 in y.
    EXPECT_NEAR(c.cx, 0.0, 1e-9);
    EXPECT_GE(c.half_h * aspect, 10.0) << "aspect " << aspect;
    EXPECT_GE(c.half_h, 3.2) << "aspect " << aspect;
    // Fitted, not just covered: the tighter axis has a 10% margin only.
    EXPECT_NEAR(std::min(c.half_h * aspect / 10.0, c.half_h / 3.2), 1.1, 1e-9) << "aspect " << aspect;
  }
}

TEST(ViewFit, NewestFrameWidensTheFitButStraySamplesDoNot) {
  const DiffusionModel m = wide_data_model();
  const Projection p = fit_projection(m, nullptr, 0);
  std::vector<float> rows;
  for (int i = 0; i < 1000; ++i) rows.insert(rows.end(), {0.f, float(i % 2 ? 20 : -20)});  // samples at y = +-20
  rows[1] = 1e6f;  // one stray sample, beyond the 99th percentile
  const CameraFit c = fit_camera(m, p, 1.0, rows.data(), 1000);
  EXPECT_NEAR(c.half_h, 1.1 * 20, 1e-6) << "the samples at +-20 in view, the stray one ignored";
}

// The fit holds every point of the frame, not only the central 98% (digits8x8 with 4096 samples spilled past
// the pane's edges): 2% of the samples at y = 25, within 3x the 99th percentile radius, are all in view.
TEST(ViewFit, NewestFrameFitsEveryPointButFarOutliers) {
  const DiffusionModel m = wide_data_model();
  const Projection p = fit_projection(m, nullptr, 0);
  std::vector<float> rows;
  for (int i = 0; i < 1000; ++i) rows.insert(rows.end(), {0.f, i < 20 ? 25.f : float(i % 20) - 10.f});
  const CameraFit c = fit_camera(m, p, 1.0, rows.data(), 1000);
  EXPECT_GE(c.cy + c.half_h, 25.0 * 1.0) << "the top 2% of samples in view";
  EXPECT_LE(c.cy + c.half_h, 25.0 + 0.1 * (25.0 + 10.0)) << "with a small margin only";
}

// Found by the public bug reports (tests/data/reported/): "tall-png".
TEST(ViewFit, ExportOfAnotherShapeShowsTheWindowsView) {
  const CameraFit win{1.0, -2.0, 3.0};
  for (double to : {1.0 / 1024, 0.05, 1.0, 1.6, 1024.0}) {
    const CameraFit e = fit_view_to_aspect(win, 1.6, to);
    EXPECT_EQ(e.cx, 1.0);
    EXPECT_EQ(e.cy, -2.0);
    EXPECT_GE(e.half_h, 3.0);                        // the window's height fits
    EXPECT_GE(e.half_h * to, 3.0 * 1.6 * (1 - 1e-12));  // and its width
  }
}

}  // namespace
}  // namespace diffscope
