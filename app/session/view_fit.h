// view_fit.h — how a model's samples are placed on screen: the 2D projection (identity for dim 2, PCA of
// the data for higher dims) and a camera that fits the data and the unit noise. Plain C++ (Eigen).
#pragma once
#include <vector>

#include "model/model.h"

namespace diffscope {

struct Projection {
  std::vector<float> mean, axis0, axis1;  // each dim floats
  double spread = 1.0;                    // std of the data along axis0 (1 for dim 2 without data)
};

// dim 2: identity. Otherwise the top two principal axes of `rows` (n, dim): the model's data_samples when
// it has them, else the given fallback rows (e.g. the start state).
Projection fit_projection(const DiffusionModel& m, const float* fallback_rows, int n_fallback);

struct CameraFit {
  double cx = 0, cy = 0, half_h = 3.2;
};
// Fits the camera to a pane of width/height `pane_aspect`: the union of the data's projected bounding box,
// +-3.2 around the projected origin (where unit noise starts) and, when given, every finite point of `rows`
// (n_rows, dim: e.g. the newest frame, whose samples can land outside the data) except far outliers (farther
// from the points' median than 3x their 99th percentile radius), with a 10% margin, so both the start and
// the end of a run are in view.
CameraFit fit_camera(const DiffusionModel& m, const Projection& p, double pane_aspect, const float* rows = nullptr,
                     int n_rows = 0);

// The camera for a pane of width/height `to_aspect` that shows at least what `c` shows in a pane of
// `from_aspect` (the window's view in an export of another shape): same centre, the half-height grown until
// the old half-width fits. Degenerate aspects (<= 0, not finite) count as square.
CameraFit fit_view_to_aspect(const CameraFit& c, double from_aspect, double to_aspect);

// Whether the model draws as 8x8-style images (dim a perfect square with image_shape metadata, or 64),
// and the side length (0 when not an image model).
int image_side(const DiffusionModel& m);

}  // namespace diffscope
