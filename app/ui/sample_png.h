// sample_png.h — `diffscope sample ... --png out.png [--size WxH]`: the GUI's view of a finished run
// (points of the last frame, trails over the kept frames, the data overlay; for image models the image grid
// beside the PCA projection) rendered headless through EGL into a PNG with its JSON sidecar (SEMANTICS §6).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/model.h"

namespace diffscope::ui {

struct SamplePng {
  const DiffusionModel* model = nullptr;
  int B = 0;
  // Kept frames in order, (n_frames, B, dim); the last one is drawn (n_frames >= 1).
  const float* frames = nullptr;
  int n_frames = 0;
  std::string png;              // output path
  int width = 1024, height = 1024;
  nlohmann::json run;           // what reproduces the run: sampler, eta, steps, t_start, seed, N, precision,
                                // backend, device, timings (merged into the sidecar beside the model checksum)
};

// Parses "WxH" (each in [16, 16384]); throws InvalidInput naming `arg`.
void parse_png_size(const std::string& arg, const std::string& value, int* w, int* h);

// The encoded PNG and the text of its JSON sidecar (png_sidecar_path(req.png)), for the caller to write with
// its other outputs (core/atomic_write.h AtomicFileSet: all files or none).
struct SamplePngFiles {
  std::string png, sidecar;
};

// Renders the picture and builds its sidecar (paths written losslessly, core/json_path.h). Writes nothing.
// Throws ResourceUnavailable when no headless GL 4.3 context exists.
SamplePngFiles render_sample_png(const SamplePng& req);

}  // namespace diffscope::ui
