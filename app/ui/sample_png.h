// sample_png.h — `diffscope sample ... --png out.png [--size WxH]`: the GUI's view of a finished run
// (points of the last frame, trails over the kept frames, the data overlay; for image models the image grid
// beside the PCA projection) rendered headless through EGL into a PNG with its JSON sidecar (SEMANTICS §6);
// `--video run.mp4` renders every kept frame the same way into a video (core/video_writer.h).
#pragma once
#include <cstdint>
#include <memory>
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
  std::vector<int> frame_numbers;  // the step of each kept frame (for the video's sidecar); may be empty
  std::string png;              // output path
  int width = 1024, height = 1024;
  bool png_text = true;         // PNGs carry the sidecar in an iTXt chunk `diffscope` (SEMANTICS §6)
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

// The headless renderer behind --png and --video: one EGL context, the frames uploaded once, the projection
// and camera fitted on the last frame (so every frame of a video shares the PNG's view). render(slot) draws
// kept frame `slot` with its trail (up to 12 earlier kept frames) at `w`x`h` and returns RGBA rows, top first.
class RunRenderer {
 public:
  explicit RunRenderer(const SamplePng& r);  // throws ResourceUnavailable without a GL 4.3 context
  ~RunRenderer();
  std::vector<uint8_t> render(int slot, int w, int h);
  const std::string& device() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

struct SampleVideo {
  std::string path;              // .mp4, .gif or .webp
  double fps = 30;
  bool lossless = false;         // see VideoOptions::lossless
  int first = 0, last = -1;      // kept-frame range, inclusive (last < 0: the last kept frame)
};

// Renders kept frames [first, last] of `r` at r.width x r.height (made even for MP4) and encodes them with
// ffmpeg, atomically, with a sidecar <stem>.json. Without ffmpeg: writes the frames as PNGs into a new
// folder <stem>_frames_NNNN beside the video instead and throws ResourceUnavailable naming it.
// Returns the number of frames encoded.
int render_sample_video(const SamplePng& r, const SampleVideo& v);

}  // namespace diffscope::ui
