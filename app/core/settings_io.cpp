// settings_io.cpp — AppSettings <-> JSON, tolerant reading, atomic writing.
#include "core/settings_io.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "core/atomic_write.h"
#include "core/json_path.h"
#include "core/ranges.h"

namespace diffscope {

bool SamplingSettings::operator==(const SamplingSettings& o) const {
  return model_path == o.model_path && n_samples == o.n_samples && sampler == o.sampler && spacing == o.spacing &&
         eta == o.eta &&
         steps == o.steps && t_start == o.t_start && steps_per_launch == o.steps_per_launch && seed == o.seed &&
         precision == o.precision && backend == o.backend && from_data == o.from_data &&
         memory_budget_mb == o.memory_budget_mb;
}

nlohmann::json to_json(const AppSettings& s) {
  const SamplingSettings& a = s.sampling;
  const ViewSettings& v = s.view;
  nlohmann::json j;
  j["sampling"] = {{"n_samples", a.n_samples},
                   {"sampler", sampler_name(a.sampler)}, {"spacing", spacing_name(a.spacing)}, {"eta", a.eta}, {"steps", a.steps},
                   {"t_start", a.t_start}, {"steps_per_launch", a.steps_per_launch}, {"seed", a.seed},
                   {"precision", precision_name(a.precision)}, {"backend", a.backend},
                   {"from_data", a.from_data}, {"memory_budget_mb", a.memory_budget_mb}};
  put_path(j["sampling"], "model_path", a.model_path);  // any file name, losslessly (SEMANTICS §6)
  j["view"] = {{"trail_frames", v.trail_frames}, {"show_data", v.show_data}, {"show_field", v.show_field},
               {"field_x0", v.field_x0}, {"field_grid", v.field_grid}, {"point_size", v.point_size},
               {"point_alpha", v.point_alpha}, {"vsync", v.vsync}, {"follow_newest", v.follow_newest},
               {"play_speed", v.play_speed}, {"loop_resimulate", v.loop_resimulate},
               {"steps_per_frame", v.steps_per_frame}, {"image_grid_cols", v.image_grid_cols},
               {"show_ui", v.show_ui}, {"cam_x", v.cam_x}, {"cam_y", v.cam_y}, {"cam_half_h", v.cam_half_h},
               {"cam_auto", v.cam_auto}};
  j["export"] = {{"width", s.export_width}, {"height", s.export_height}, {"image_grid_scale", s.image_grid_scale}};
  put_path(j["export"], "dir", s.export_dir);
  return j;
}

namespace {
template <class T>
void read(const nlohmann::json& j, const char* key, T& out, std::string* note) {
  if (!j.is_object() || !j.contains(key)) return;
  try {
    out = j.at(key).get<T>();
  } catch (const std::exception&) {
    if (note) *note += std::string("settings: ignored ill-typed field '") + key + "'\n";
  }
}

// A numeric setting, clamped into its core/ranges.h persisted range (section.key). Read as a double first so
// that 1e16 for an int, or an out-of-range integer, is clamped instead of wrapping; a value that is not a
// finite number keeps the default. Each change adds a line to `note`.
template <class T>
void read_clamped(const nlohmann::json& j, const char* section, const char* key, T& out, std::string* note) {
  if (!j.is_object() || !j.contains(key)) return;
  const std::string name = std::string(section) + "." + key;
  const PersistedRange* r = find_persisted_range(name);
  const nlohmann::json& v = j.at(key);
  if (!r || !v.is_number() || !std::isfinite(v.get<double>())) {
    if (note) *note += std::string("settings: ignored ill-typed field '") + key + "' (valid: a number)\n";
    return;
  }
  const double d = v.get<double>();
  const double c = std::min(std::max(d, r->lo), r->hi);
  if (c != d && note) {
    std::ostringstream m;
    m << "settings: " << name << " = " << d << " clamped to " << c << " (valid: [" << r->lo << ", " << r->hi << "])\n";
    *note += m.str();
  }
  if constexpr (std::is_integral_v<T>)
    out = static_cast<T>(std::llround(c));
  else
    out = static_cast<T>(c);
}

void read_path(const nlohmann::json& j, const char* key, std::string& out, std::string* note) {
  if (!j.is_object() || !j.contains(key)) return;
  if (!get_path(j, key, &out) && note) *note += std::string("settings: ignored ill-typed field '") + key + "'\n";
}
}  // namespace

AppSettings app_settings_from_json(const nlohmann::json& j, std::string* note) {
  AppSettings s;
  if (!j.is_object()) {
    if (note) *note += "settings: not a JSON object; using defaults\n";
    return s;
  }
  if (j.contains("sampling")) {
    const auto& a = j["sampling"];
    SamplingSettings& o = s.sampling;
    read_path(a, "model_path", o.model_path, note);
    read_clamped(a, "sampling", "n_samples", o.n_samples, note);
    read_clamped(a, "sampling", "eta", o.eta, note);
    read_clamped(a, "sampling", "steps", o.steps, note);
    read_clamped(a, "sampling", "t_start", o.t_start, note);
    read_clamped(a, "sampling", "steps_per_launch", o.steps_per_launch, note);
    read(a, "seed", o.seed, note);  // every uint64 is a valid seed
    read(a, "backend", o.backend, note);
    if (o.backend != "auto" && o.backend != "cpu" && o.backend != "cuda") {
      if (note) *note += "settings: sampling.backend = '" + o.backend + "' ignored (valid: auto, cpu, cuda)\n";
      o.backend = SamplingSettings{}.backend;
    }
    read(a, "from_data", o.from_data, note);
    read_clamped(a, "sampling", "memory_budget_mb", o.memory_budget_mb, note);
    try {
      if (a.contains("sampler")) o.sampler = parse_sampler(a["sampler"].get<std::string>());
      if (a.contains("spacing")) o.spacing = parse_spacing(a["spacing"].get<std::string>());
      if (a.contains("precision")) o.precision = parse_precision(a["precision"].get<std::string>());
    } catch (const std::exception& e) {
      if (note) *note += std::string("settings: ") + e.what() + "\n";
    }
  }
  if (j.contains("view")) {
    const auto& v = j["view"];
    ViewSettings& o = s.view;
    read_clamped(v, "view", "trail_frames", o.trail_frames, note);
    read(v, "show_data", o.show_data, note);
    read(v, "show_field", o.show_field, note);
    read(v, "field_x0", o.field_x0, note);
    read_clamped(v, "view", "field_grid", o.field_grid, note);
    read_clamped(v, "view", "point_size", o.point_size, note);
    read_clamped(v, "view", "point_alpha", o.point_alpha, note);
    read(v, "vsync", o.vsync, note);
    read(v, "follow_newest", o.follow_newest, note);
    read_clamped(v, "view", "play_speed", o.play_speed, note);
    read(v, "loop_resimulate", o.loop_resimulate, note);
    read_clamped(v, "view", "steps_per_frame", o.steps_per_frame, note);
    read_clamped(v, "view", "image_grid_cols", o.image_grid_cols, note);
    read(v, "show_ui", o.show_ui, note);
    read_clamped(v, "view", "cam_x", o.cam_x, note);
    read_clamped(v, "view", "cam_y", o.cam_y, note);
    read_clamped(v, "view", "cam_half_h", o.cam_half_h, note);
    read(v, "cam_auto", o.cam_auto, note);
  }
  if (j.contains("export")) {
    const auto& e = j["export"];
    read_path(e, "dir", s.export_dir, note);
    read_clamped(e, "export", "width", s.export_width, note);
    read_clamped(e, "export", "height", s.export_height, note);
    read_clamped(e, "export", "image_grid_scale", s.image_grid_scale, note);
  }
  return s;
}

AppSettings load_app_settings(const std::string& path, std::string* note) {
  std::ifstream f(path);
  if (!f) return AppSettings{};
  try {
    nlohmann::json j = nlohmann::json::parse(f);
    return app_settings_from_json(j, note);
  } catch (const std::exception& e) {
    if (note) *note += "settings file " + path + " is corrupt (" + e.what() + "); using defaults\n";
    return AppSettings{};
  }
}

bool save_app_settings(const std::string& path, const AppSettings& s, std::string* error) {
  try {  // to_json encodes paths losslessly, so dump() cannot meet invalid UTF-8
    write_file_atomic(path, to_json(s).dump(2) + "\n", "settings");
    return true;
  } catch (const std::exception& e) {
    if (error) *error = e.what();
    return false;
  }
}

std::string default_config_dir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/diffscope";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/diffscope";
  return ".diffscope";
}

}  // namespace diffscope
