// view_fit.h — how a model's samples are placed on screen: the 2D projection (identity for dim 2, PCA of
// the data for higher dims) and a camera that fits the data and the unit noise. Plain C++ (Eigen).
#pragma once
#include <vector>

#include "core/model.h"

namespace diffscope::ui {

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
// The data's bounding box (projected) with room for unit noise: at least +-3.2 around the center.
CameraFit fit_camera(const DiffusionModel& m, const Projection& p);

// Whether the model draws as 8x8-style images (dim a perfect square with image_shape metadata, or 64),
// and the side length (0 when not an image model).
int image_side(const DiffusionModel& m);

}  // namespace diffscope::ui
