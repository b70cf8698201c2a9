// exporter.h — exports (SEMANTICS §6): snapshot PNG rendered offscreen at a chosen size without the UI,
// with a JSON sidecar; the image grid as a PNG at integer scale; the current state and the trajectory as
// .npy; a PNG frame sequence (one frame per UI frame). Names auto-numbered; every file written
// atomically; an unwritable path gives an error message and changes nothing else.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "picture/figure.h"
#include "render/gl_buffers.h"
#include "render/renderer.h"
#include "run/compute_path.h"
#include "session/settings_io.h"

namespace diffscope {
class VideoWriter;
class SamplingSession;
}  // namespace diffscope

namespace diffscope {

// The small read-only view of the app that exports read: no App. The renderer draws the
// export (its projection and data are the window's); the compute path is asked to unmap before GL reads and
// evaluates the field for the export's camera.
struct ExportView {
  const SamplingSession* session = nullptr;
  const AppSettings* settings = nullptr;
  render::Renderer* renderer = nullptr;
  const render::GlTrajectoryBuffer* trajectory = nullptr;
  const std::vector<render::LineVertex>* window_field = nullptr;  // put back after an export drew its own
  int shown_frame = 0, shown_slot = 0;
  float ui_scale = 1;         // the window's content scale
  double camera_aspect = 1;   // width/height of the window's 2D pane: the camera was set there
  nlohmann::json timings;     // the window's last figures, for the sidecar
};

// What an export writes; the S key, the Export buttons and the script's `export` all go through Exporter::run.
enum class ExportKind { Snapshot, ImageGrid, State, Trajectory, Frames, Video, Svg, Pdf };
// "snapshot" | "grid" | "state" | "trajectory" | "frames" | "video" | "svg" | "pdf" (the script's names); throws
// InvalidInput.
ExportKind parse_export_kind(const std::string& name);

struct ExportResult {
  bool ok = false;
  std::string path;   // the main file written
  std::string error;  // why not
  bool unavailable = false;  // the error was a missing resource (ResourceUnavailable: no ffmpeg, ...), not bad input
};

// dir/base_0001.ext, the first number for which neither .ext nor .json exists. Creates dir; throws
// InvalidInput if it cannot.
std::string next_free_name(const std::string& dir, const std::string& base, const std::string& ext);
// Encodes RGBA rows (top row first) as PNG bytes (formats/png_write.h, libpng); channels 3 or 4. A non-empty
// `sidecar_json` goes into an iTXt chunk with the keyword `diffscope` (SEMANTICS §6). InvalidInput on failure.
std::string encode_png_rgba(const std::vector<uint8_t>& rgba, int w, int h, int channels,
                            const std::string& sidecar_json = "");
// encode_png_rgba, written atomically.
// Throws InvalidInput naming the path when it cannot be written.
void write_png_rgba(const std::string& path, const std::vector<uint8_t>& rgba, int w, int h, int channels,
                    const std::string& sidecar_json = "");
// A sidecar's text as written to its .json file and into PNGs (2-space indented JSON and a newline).
std::string sidecar_text(const nlohmann::json& j);

// Writes `j` as main_path's sidecar (export_sidecar_path: name.json, a video's name.mp4.json). The sidecar goes
// with the file just written: if it cannot be written, that file is removed too, so an export leaves both or
// neither (nothing half-written).
void write_sidecar(const std::string& main_path, const nlohmann::json& j);

// Throws InvalidInput when there is nothing to export yet, or when the kept frames 0..last_slot include one that
// holds values that are not finite (an overflowed run, SEMANTICS §9: a picture of it would draw none of them; the
// .npy exports are refused by check_output_finite). The message carries the run's error.
void check_frames_exportable(const ExportView& v, int last_slot);

class Exporter {
 public:
  // The one entry point: starts (frames, video) or writes (the rest) an export of `kind` to `path` ("" = the
  // next free name in the export folder). Frame sequences and videos go on in tick().
  ExportResult run(ExportKind kind, const ExportView& v, std::string path = "");
  ExportResult snapshot(const ExportView& v, std::string path = "");
  ExportResult image_grid(const ExportView& v, std::string path = "");
  ExportResult state_npy(const ExportView& v, std::string path = "");
  ExportResult trajectory_npy(const ExportView& v, std::string path = "");
  // The shown frame as a vector figure (picture/figure.h: axes, legend, caption, the noise level per step) at the
  // export size, with a .json sidecar (exporter_figure.cpp).
  ExportResult vector_figure(const ExportView& v, FigureFormat format, std::string path = "");
  // Starts writing one PNG per computed kept frame into the folder `dir` ("" = a new numbered folder in the export
  // folder; an existing `dir` is refused); tick() writes one per call. The frames go into a temporary folder
  // beside it, renamed to `dir` when the last one is written: a failed, cancelled or interrupted sequence leaves
  // nothing (SEMANTICS §9).
  ExportResult start_frame_sequence(const ExportView& v, std::string dir = "");
  ~Exporter();
  void tick(const ExportView& v);
  bool sequence_active() const { return m_seq_next >= 0; }
  float sequence_progress() const { return m_seq_total ? float(m_seq_next) / m_seq_total : 0.f; }

  // Video of the trajectory from the first frame to the shown one through ffmpeg (exporter_video.cpp;
  // formats/video_writer.h): one frame rendered and piped per tick(), at the export size (made even for MP4).
  // Without ffmpeg: the message says so and a PNG frame sequence of the same frames is written instead.
  struct VideoSettings {
    int format = 0;  // 0 .mp4 (H.264), 1 .gif, 2 .webp
    int fps = 30;    // [1, 240]
    bool lossless = false;
    bool yuv420 = false;  // MP4: yuv420p, which every player plays (VideoOptions::yuv420)
  } video;
  ExportResult start_video(const ExportView& v, std::string path = "");
  bool video_active() const { return m_video != nullptr; }
  float video_progress() const { return m_vid_total ? float(m_vid_next) / m_vid_total : 0.f; }
  void cancel_video();  // stops ffmpeg; nothing is left at the path

  // The sidecar of SEMANTICS §6 for what is shown now (picture/picture.h build_sidecar) at the export size.
  nlohmann::json sidecar(const ExportView& v, const std::string& kind, const std::string& path = "");
  // The `diffscope sample ...` line that reproduces an export (picture/command_line.h): the run's settings, its
  // scheduler config, the shown frame (--frame) and the export's own file as that line's output — --out for a
  // "state", --png for a "snapshot" (with --out beside it), --trajectory for a "trajectory", --video of frames 0 to
  // the shown one for a "video" (`video_options`: its --fps and format options) — with the view's picture
  // options for the picture kinds (snapshot, video, image_grid, frame_sequence). kind "" (Copy command line): the
  // run up to the shown frame, --out x.npy. Needs a model.
  static std::string command_line(const ExportView& v, const std::string& kind = "", const std::string& path = "",
                                  const std::string& video_options = "");
  // Hashes the model file as it is when loaded, so the sidecar names the loaded bytes even if the file
  // is replaced or truncated later.
  void remember_model(const std::string& path);

  bool embed_sidecar = true;  // PNG exports carry the sidecar in an iTXt chunk `diffscope`
  std::vector<std::string> messages;  // newest last: "wrote ..." / "error: ..."
  // Drops the error and "writing frames" lines (the folder was edited, or a later export succeeded).
  void clear_stale_messages();
  std::string last_path;  // absolute path of the last file written
  std::string last_error;
  bool last_error_unavailable = false;  // last_error came from a missing resource (ExportResult::unavailable)

 private:
  void abandon_sequence();  // removes an unfinished sequence's temporary folder
  ExportResult finish(ExportResult r);
  std::string png_text(const nlohmann::json& j) const;  // sidecar_text(j), or "" with embed_sidecar off
  // Runs one export: `write` writes the file(s) and returns the main path; an exception becomes the error.
  ExportResult guarded(const std::function<std::string()>& write);
  // `count` trajectory slots from `first` (nothing mapped by CUDA while read). Throws when nothing ran yet.
  std::vector<float> download_slots(const ExportView& v, int first, int count);
  // Kept slot `slot` at w x h without the UI: the camera widened for the picture (picture_camera), the field
  // built for that camera and pane (picture/picture.h).
  std::vector<uint8_t> render_scene(const ExportView& v, int slot, int w, int h);
  // The figure of kept slot `slot` at the export size: the plot rendered by render_scene; with `vector` the marks
  // in data units where figure_uses_vector_marks allows (exporter_figure.cpp).
  Figure build_figure(const ExportView& v, int slot, bool vector);
  // The shown slot at w x h: the view, or with the setting `figure` its figure's pixels.
  std::vector<uint8_t> render_picture(const ExportView& v, int slot, int w, int h);
  render::OffscreenTarget m_target;
  std::vector<render::LineVertex> m_last_field;  // the field lines render_scene drew last (data units)
  std::string m_sha_path, m_sha;  // cached SHA-256 of the model file
  int m_seq_next = -1, m_seq_total = 0;
  std::string m_seq_dir, m_seq_final;  // the temporary folder being written, the folder it becomes
  nlohmann::json m_seq_sidecar;
  void tick_video(const ExportView& v);
  std::shared_ptr<VideoWriter> m_video;  // shared_ptr: VideoWriter is incomplete here
  int m_vid_next = 0, m_vid_total = 0, m_vid_w = 0, m_vid_h = 0;
  std::string m_vid_path;
  nlohmann::json m_vid_sidecar;
};

}  // namespace diffscope
