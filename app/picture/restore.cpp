// restore.cpp — sidecar (SEMANTICS §6) -> model path + settings keys.
#include "picture/restore.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "formats/json_path.h"
#include "formats/png_text.h"
#include "formats/sha256.h"
#include "formats/sidecar_file.h"
#include "grid/grid_spec.h"
#include "picture/exporter.h"
#include "picture/picture.h"
#include "platform/model_paths.h"
#include "platform/output_files.h"
#include "session/settings_keys.h"
#include "session/settings_schema.h"

namespace diffscope {

namespace {

// The model of the sidecar: by path when its SHA-256 matches, else a bundled model with that SHA-256, else the
// bundled model the sidecar names (`bundled`, another checkout's or version's bytes), with a note.
std::string find_model(const nlohmann::json& m, std::string* note) {
  std::string file;
  get_path(m, "file", &file);  // the raw bytes of any file name (formats/json_path.h)
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

// A grid PNG's sidecar (picture/grid_png.h): the spec shown again (settings grid and grid_show), the model of
// cells without a model axis, n and seed, and the first cell's settings of every axis the grid does not sweep
// (t_start before steps, as steps is clamped by it).
RestorePlan plan_grid_restore(const nlohmann::json& j) {
  const nlohmann::json& g = j["grid"];
  if (!g.is_object() || !g.contains("spec")) throw InvalidInput("restore: the grid sidecar has no grid.spec");
  const GridSpec spec = grid_spec_from_json(g["spec"], "restore: grid.spec");
  RestorePlan p;
  const auto swept = [&](GridAxis a) { return spec.rows.axis == a || spec.cols.axis == a; };
  if (!swept(GridAxis::Model) && g.contains("models") && g["models"].is_array() && !g["models"].empty() &&
      g["models"][0].is_string())
    p.model = resolve_model(g["models"][0].get<std::string>());
  const auto set = [&](const char* key, const nlohmann::json& v) {
    if (!v.is_null()) p.sets.emplace_back(key, v.is_string() ? v.get<std::string>() : v.dump());
  };
  if (g.contains("n")) set("n", g["n"]);
  if (g.contains("seed")) set("seed", g["seed"]);
  if (g.contains("cells") && g["cells"].is_array() && !g["cells"].empty() && g["cells"][0].is_object()) {
    const nlohmann::json& c = g["cells"][0];
    const std::pair<GridAxis, const char*> keys[] = {{GridAxis::Sampler, "sampler"}, {GridAxis::Spacing, "spacing"},
                                                     {GridAxis::Eta, "eta"},         {GridAxis::Precision, "precision"},
                                                     {GridAxis::TStart, "t_start"},  {GridAxis::Steps, "steps"}};
    for (const auto& [axis, key] : keys)
      if (!swept(axis) && c.contains(key) && !(axis == GridAxis::TStart && swept(GridAxis::Model))) set(key, c[key]);
  }
  p.sets.emplace_back("grid", grid_spec_text(spec));
  p.sets.emplace_back("grid_show", "1");
  return p;
}

}  // namespace

RestorePlan plan_restore(const nlohmann::json& j) {
  if (j.is_object() && j.contains("kind") && j["kind"] == "grid") return plan_grid_restore(j);
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

}  // namespace diffscope
