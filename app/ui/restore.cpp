// restore.cpp — sidecar (SEMANTICS §6) -> model path + settings keys.
#include "ui/restore.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.h"
#include "core/json_path.h"
#include "core/model_paths.h"
#include "core/output_files.h"
#include "core/png_text.h"
#include "ui/app.h"
#include "ui/exporter.h"
#include "core/settings_schema.h"
#include "core/sidecar_file.h"
#include "ui/picture.h"
#include "ui/settings_keys.h"
#include "ui/sha256.h"

namespace diffscope::ui {

namespace {

// The model of the sidecar: by path when its SHA-256 matches, else a bundled model with that SHA-256, else the
// bundled model the sidecar names (`bundled`, another checkout's or version's bytes), with a note.
std::string find_model(const nlohmann::json& m, std::string* note) {
  std::string file;
  get_path(m, "file", &file);  // the raw bytes of any file name (core/json_path.h)
  const std::string sha = m.contains("sha256") && m["sha256"].is_string() ? m["sha256"].get<std::string>() : "";
  const std::string bundled = m.contains("bundled") && m["bundled"].is_string() ? m["bundled"].get<std::string>() : "";
  std::error_code ec;
  const bool exists = !file.empty() && std::filesystem::exists(file, ec);
  if (exists && (sha.empty() || sha256_file(file) == sha)) return file;
  const std::string what = "model " + (file.empty() ? std::string("(no file named)") : file);
  for (const auto& [name, path] : bundled_models())
    if (!sha.empty() && sha256_file(path) == sha) {
      *note += what + (exists ? " has changed" : " is gone") + "; the bundled '" + name +
               "' has its SHA-256 and is opened instead\n";
      return path;
    }
  const std::string had = sha.empty() ? "the export has no SHA-256" : "the export has SHA-256 " + sha;
  if (exists) {
    *note += what + " has changed since the export (SHA-256 " + sha256_file(file) + ", " + had +
             "): the result may differ\n";
    return file;
  }
  if (!bundled.empty()) {
    for (const auto& [name, path] : bundled_models())
      if (name == bundled) {
        *note += what + " is gone; opened the bundled '" + name + "', whose bytes differ from the export's (" + had +
                 ", this one " + sha256_file(path) + "): the result may differ\n";
        return path;
      }
  }
  *note += what + " is gone and no bundled model has its bytes (" + had + "): opened the default\n";
  return "";
}

}  // namespace

RestorePlan plan_restore(const nlohmann::json& j) {
  RestorePlan p;
  if (j.contains("model") && j["model"].is_object()) p.model = find_model(j["model"], &p.note);
  // Every setting the sidecar holds, by the settings schema's keys (older sidecars' names are its aliases), in
  // the schema's order (a camera before cam_auto). The backend stays this machine's choice.
  const nlohmann::json flat = sidecar_settings(j);
  for (const auto& [k, f] : settings_in_json(flat)) {
    if (f->key == std::string("backend") || f->key == std::string("export_dir")) continue;
    try {
      p.sets.emplace_back(f->key, setting_text(flat[k]));
    } catch (const InvalidInput&) {
      p.note += "sidecar key " + k + " is not a value: ignored\n";
    }
  }
  if (j.contains("frame") && j["frame"].is_number_integer()) p.frame = j["frame"].get<int>();
  if (flat.contains("camera_aspect") && flat["camera_aspect"].is_number()) {
    const double a = flat["camera_aspect"].get<double>();
    if (std::isfinite(a) && a > 0 && a < 1e4) p.camera_aspect = a;  // else the window's pane (a hostile file)
  }
  if (!j.contains("format")) p.note += "an older sidecar (no format): what it lacks keeps its default\n";
  return p;
}

bool is_restore_file(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".png" || ext == ".json" || is_video_path(path);  // a video: through its sidecar (read_sidecar)
}

bool restore_into_app(App& app, const std::string& file) {
  try {
    std::string note;
    const RestorePlan plan = plan_restore(read_sidecar(file, &note, "--restore"));
    AppSettings next = app.settings;
    for (const auto& [k, v] : plan.sets) apply_setting(next, k, v);  // all or nothing
    app.settings = next;
    app.load_model(plan.model.empty() ? app.session->model().path : plan.model, false);  // the sidecar's t_start
    app.show_frame_when_computed(plan.frame);
    app.keep_camera_aspect(plan.camera_aspect);
    note += plan.note;
    app.exporter->messages.push_back("restored " + file + (note.empty() ? "" : ": " + note));
    return true;
  } catch (const std::exception& e) {
    app.exporter->messages.push_back(std::string("error: ") + e.what());
    return false;
  }
}

}  // namespace diffscope::ui
