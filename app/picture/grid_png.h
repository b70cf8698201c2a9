// grid_png.h — the comparison grid as one PNG (SEMANTICS §10): each cell's final samples drawn as the GUI draws a
// run's last frame (picture/sample_png.h RunRenderer, one headless GL context for the whole grid), the row and
// column values in the margins, a metric in every cell, and a sidecar carrying the grid spec (restorable with
// `sample --grid @grid.png`) and every cell's metrics.
#pragma once
#include <string>

#include "grid/grid_metrics.h"
#include "grid/grid_run.h"

namespace diffscope {

struct GridPng {
  const GridPlan* plan = nullptr;
  const GridResult* result = nullptr;
  int width = 1024, height = 1024;  // the whole picture, margins included
  std::string png;                  // output path (for the sidecar's record)
  bool png_text = true;             // the sidecar also in an iTXt chunk `diffscope`
  std::string backend, command_line;
};

struct GridPngFiles {
  std::string png, sidecar;
};

// The caption of a cell: its evaluations and, for an analytic model with an ODE solver, the RMS error against the
// exact ODE, else the energy distance to the held-out data ("10 evals  ODE err 0.0123", "10 evals  E 0.0031"; the
// picture adds the energy's noise floor below it: "data vs data 0.0053").
std::string grid_cell_caption(const GridCellMetrics& m);

// Renders the grid and builds its sidecar; writes nothing. Throws ResourceUnavailable without a headless GL 4.3
// context, InvalidInput for a size whose cells would be smaller than 32 x 32 pixels.
GridPngFiles render_grid_png(const GridPng& req);

}  // namespace diffscope
