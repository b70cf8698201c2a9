// grid_png.h — the comparison grid as one PNG (SEMANTICS §10): each cell's final samples drawn as the GUI draws a
// run's last frame (picture/sample_png.h RunRenderer, one headless GL context for the whole grid), the row and
// column values in the margins, a metric in every cell, and a sidecar carrying the grid spec (restorable with
// `sample --grid @grid.png`) and every cell's metrics.
#pragma once
#include <string>
#include <vector>

#include "grid/grid_live.h"
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

// The caption of a cell, one or two lines: its network evaluations (NFE) and the energy distance to the held-out
// data ("10 NFE  E 0.0031"), then for an analytic model with an ODE solver the RMS error against the exact ODE
// ("ODE err 0.012"), else the energy's noise floor, data against data ("floor 0.0053").
std::vector<std::string> grid_cell_caption(const GridCellMetrics& m);

// Where the cells go in a w x h picture: the row labels' margin (left), the column labels' (top), each cell's size.
// Throws InvalidInput naming --size when a cell would be smaller than 32 x 32 pixels (checked before any run).
struct GridLayout {
  int left = 0, top = 0, cw = 0, ch = 0;
};
GridLayout grid_png_layout(const GridSpec& spec, int w, int h);

// The grid as a video (SEMANTICS §10): frame k shows each cell's state at timeline position u_k = k / (K - 1)
// (GridLive::state_at, aligned as `align`), drawn as the PNG draws the final samples, the captions the final
// metrics; K = the timeline cell's steps + 1, fewer (evenly spaced) when K x cells x n x dim exceeds 64 Mi floats.
// Writes the video (formats/video_writer.h: atomically) and returns its sidecar's text (the PNG's, with the video's
// name, fps and the frames' positions). Throws as render_grid_png, and VideoWriter's errors (no ffmpeg:
// ResourceUnavailable).
struct GridVideo {
  std::string path;
  double fps = 30;
  bool lossless = false, yuv420 = false;
  GridAlign align = GridAlign::NoiseLevel;
};
std::string write_grid_video(const GridLive& live, const GridPng& picture, const GridVideo& video);

// Renders the grid and builds its sidecar; writes nothing. Throws ResourceUnavailable without a headless GL 4.3
// context, InvalidInput as grid_png_layout.
GridPngFiles render_grid_png(const GridPng& req);

}  // namespace diffscope
