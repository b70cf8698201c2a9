// sample_png.h — `diffscope sample ... --png out.png [--size WxH]`: the GUI's view of a finished run
// (points of the last frame, trails over the kept frames, the data overlay; for image models the image grid
// beside the PCA projection) rendered headless through EGL into a PNG with its JSON sidecar (SEMANTICS §6);
// `--video run.mp4` renders every kept frame the same way into a video (formats/video_writer.h).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffusion/step_table.h"
#include "model/model.h"
#include "picture/figure.h"
#include "session/settings_io.h"

namespace diffscope {

struct SamplePng {
  const DiffusionModel* model = nullptr;
  int B = 0;
  // Kept frames in order, (n_frames, B, dim) (n_frames >= 1).
  const float* frames = nullptr;
  int n_frames = 0;
  std::vector<int> frame_numbers;  // the step of each kept frame (frames 0, s, 2s, ... and N)
  std::vector<int> step_t;         // the step table's timesteps (the field is drawn at the shown frame's)
  const StepTable* table = nullptr;  // the run's table: the sidecar's family keys (picture/picture.h)
  std::string png;                 // output path
  // What the picture shows, as the GUI draws it (picture/picture.h): the view settings, the export size
  // (export_width x export_height) and the run's sampling settings (for the sidecar).
  AppSettings settings;
  bool camera_given = false;       // settings.view's camera is used; else fitted as the GUI does on model load
  double camera_aspect = 0;        // the pane the camera was set in (0: the picture's own pane)
  float ui_scale = 1;              // point sizes in pixels are point_size * ui_scale
  int frame = -1;                  // the frame drawn (the last kept one at or before it); -1: the last
  int trajectory_stride = 1;
  std::string backend, device, command_line;
  bool png_text = true;            // PNGs carry the sidecar in an iTXt chunk `diffscope` (SEMANTICS §6)
  nlohmann::json extra = nlohmann::json::object();  // merged into the sidecar: steps_offset, timings, noise, ...
  // The field at points (pts, n, t, x0, out), where the run's backend computes it (DenoiserBackend::eps_field);
  // empty: the CPU (diffusion/field_eval.h).
  std::function<void(const float* pts, int n, int t, bool x0, float* out)> field;
  int width() const { return settings.export_width; }
  int height() const { return settings.export_height; }
  int shown_slot() const;          // the kept slot of `frame`
};

// Parses "WxH" (each in [16, 16384]); throws InvalidInput naming `arg` (session/settings_schema.h parse_size_wxh).
void parse_png_size(const std::string& arg, const std::string& value, int* w, int* h);

// The encoded PNG and the text of its JSON sidecar (png_sidecar_path(req.png)), for the caller to write with
// its other outputs (platform/atomic_write.h AtomicFileSet: all files or none).
struct SamplePngFiles {
  std::string png, sidecar;
};

// Renders the picture and builds its sidecar (paths written losslessly, formats/json_path.h). Writes nothing.
// Throws ResourceUnavailable when no headless GL 4.3 context exists.
SamplePngFiles render_sample_png(const SamplePng& req);

// The run as a vector figure (SVG or PDF, picture/figure.h) at the export size, with its sidecar; an SVG carries the
// sidecar's JSON in its <metadata> too, a PDF the command line as its subject. `path` is the file it goes to; `arg` names it in messages
// (--svg, --pdf). Writes nothing; throws ResourceUnavailable without GL 4.3 or cairo.
struct SampleFigureFiles {
  std::string figure, sidecar;  // the document, and its sidecar's text (for video_sidecar_path(path): name.svg.json)
};
SampleFigureFiles render_sample_figure(const SamplePng& req, FigureFormat format, const std::string& path,
                                       const std::string& arg);

// The headless renderer behind --png and --video: one EGL context, the frames uploaded once, the projection
// fitted as the GUI fits it. render(slot) draws kept frame `slot` as the GUI's export would (picture/picture.h:
// the same scene, camera, trails and field) at `w`x`h` and returns RGBA rows, top first.
class RunRenderer {
 public:
  explicit RunRenderer(const SamplePng& r);  // throws ResourceUnavailable without a GL 4.3 context
  ~RunRenderer();
  std::vector<uint8_t> render(int slot, int w, int h);
  const std::string& device() const;
  // The figure of kept slot `slot` at the export size (picture/figure.h): the plot rendered at its rectangle, the
  // camera, labels, legend, caption and the run's noise level per step; with `vector`, the marks in data units
  // where figure_uses_vector_marks allows. Throws ResourceUnavailable without cairo.
  Figure figure(int slot, bool vector);

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

struct SampleVideo {
  std::string path;              // .mp4, .gif or .webp
  double fps = 30;
  bool lossless = false;         // see VideoOptions::lossless
  bool yuv420 = false;           // see VideoOptions::yuv420
  int first = 0, last = -1;      // kept-frame range, inclusive (last < 0: the last kept frame)
  std::function<void(int done)> on_frame;  // called after each frame sent to ffmpeg (progress); may be empty
};

// Renders kept frames [first, last] of `r` at r.width x r.height (made even for MP4) and encodes them with
// ffmpeg, atomically, with a sidecar <name>.json (video_sidecar_path: run.mp4 -> run.mp4.json). Without ffmpeg:
// writes the frames as PNGs into a new folder <stem>_frames_NNNN beside the video instead and throws
// ResourceUnavailable naming it.
// Returns the number of frames encoded.
int render_sample_video(const SamplePng& r, const SampleVideo& v);

}  // namespace diffscope
