// exporter.h — exports (SEMANTICS §6): snapshot PNG rendered offscreen at a chosen size without the UI,
// with a JSON sidecar; the image grid as a PNG at integer scale; the current state and the trajectory as
// .npy; a PNG frame sequence (one frame per UI frame). Names auto-numbered; every file written
// atomically; an unwritable path gives an error message and changes nothing else.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "render/gl_buffers.h"

namespace diffscope::ui {

class App;

struct ExportResult {
  bool ok = false;
  std::string path;   // the main file written
  std::string error;  // why not
};

// dir/base_0001.ext, the first number for which neither .ext nor .json exists. Creates dir; throws
// InvalidInput if it cannot.
std::string next_free_name(const std::string& dir, const std::string& base, const std::string& ext);
// Encodes RGBA rows (top row first) as PNG bytes (stb_image_write); channels 3 or 4. InvalidInput on failure.
std::string encode_png_rgba(const std::vector<uint8_t>& rgba, int w, int h, int channels);
// Encodes RGBA rows (top row first) as PNG (stb_image_write) and writes it atomically; channels 3 or 4.
// Throws InvalidInput naming the path when it cannot be written.
void write_png_rgba(const std::string& path, const std::vector<uint8_t>& rgba, int w, int h, int channels);

class Exporter {
 public:
  ExportResult snapshot(App& app, std::string path = "");
  ExportResult image_grid(App& app, std::string path = "");
  ExportResult state_npy(App& app, std::string path = "");
  ExportResult trajectory_npy(App& app, std::string path = "");
  // Starts writing one PNG per computed kept frame into a new numbered folder; tick() writes one per call.
  ExportResult start_frame_sequence(App& app);
  void tick(App& app);
  bool sequence_active() const { return m_seq_next >= 0; }
  float sequence_progress() const { return m_seq_total ? float(m_seq_next) / m_seq_total : 0.f; }

  // The sidecar of SEMANTICS §6 for what is shown now (model file + SHA-256, sampler, eta, steps, t_start,
  // seed, N, precision, backend, device, timings, frame).
  nlohmann::json sidecar(App& app, const std::string& kind);
  // Hashes the model file as it is when loaded, so the sidecar names the loaded bytes even if the file
  // is replaced or truncated later.
  void remember_model(const std::string& path);

  std::vector<std::string> messages;  // newest last: "wrote ..." / "error: ..."
  // Drops the error and "writing frames" lines (the folder was edited, or a later export succeeded).
  void clear_stale_messages();
  std::string last_path;  // absolute path of the last file written
  std::string last_error;

 private:
  ExportResult finish(ExportResult r);
  // Runs one export: `write` writes the file(s) and returns the main path; an exception becomes the error.
  ExportResult guarded(const std::function<std::string()>& write);
  // `count` trajectory slots from `first` (nothing mapped by CUDA while read). Throws when nothing ran yet.
  std::vector<float> download_slots(App& app, int first, int count);
  std::vector<uint8_t> render_scene(App& app, int slot, int w, int h);
  render::OffscreenTarget m_target;
  std::string m_sha_path, m_sha;  // cached SHA-256 of the model file
  int m_seq_next = -1, m_seq_total = 0;
  std::string m_seq_dir;
};

}  // namespace diffscope::ui
