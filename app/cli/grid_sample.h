// grid_sample.h — `diffscope sample --grid SPEC`: the comparison grid headless (SEMANTICS §10): every cell planned
// by the run plan from the sample command's other flags, run on the backend, measured, and written as .npy
// (rows, cols, n, dim), metrics CSV / JSON, a labelled grid PNG with its sidecar and the grid as a video (GUI builds).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "run/run_plan.h"

namespace diffscope::cli {

struct GridSampleArgs {
  std::string spec;        // --grid's text or @FILE
  std::string model;       // --model ("" only with a model axis)
  std::string backend = "cpu";
  SampleRequest base;      // the sample command's flags as a request
  std::string out, png, size = "1024x1024", metrics_csv, metrics_json;
  bool png_text = true;
  std::optional<double> position;  // --grid-position, in [0, 1]
  std::string align = "noise";     // --grid-align: noise | step
  std::string video;                 // --video: the grid over its timeline (GUI builds; picture/grid_png.h)
  double fps = 30;
  bool video_lossless = false, video_yuv420 = false;
  std::vector<std::string> refused;  // flags given that a grid run cannot honour (refused, exit 2)
};

// Checks everything first (exit 2 naming the flag, the cell, the axis and the value), runs, and writes every
// output or none.
void run_grid_sample(const GridSampleArgs& args);

}  // namespace diffscope::cli
