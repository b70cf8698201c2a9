// settings_io.cpp — AppSettings <-> JSON, tolerant reading, atomic writing.
#include "core/settings_io.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace diffscope {

bool SamplingSettings::operator==(const SamplingSettings& o) const {
  return model_path == o.model_path && n_samples == o.n_samples && sampler == o.sampler && eta == o.eta &&
         steps == o.steps && t_start == o.t_start && steps_per_launch == o.steps_per_launch && seed == o.seed &&
         precision == o.precision && backend == o.backend && from_data == o.from_data &&
         memory_budget_mb == o.memory_budget_mb;
}

nlohmann::json to_json(const AppSettings& s) {
  const SamplingSettings& a = s.sampling;
  const ViewSettings& v = s.view;
  nlohmann::json j;
  j["sampling"] = {{"model_path", a.model_path}, {"n_samples", a.n_samples},
                   {"sampler", sampler_name(a.sampler)}, {"eta", a.eta}, {"steps", a.steps},
                   {"t_start", a.t_start}, {"steps_per_launch", a.steps_per_launch}, {"seed", a.seed},
                   {"precision", precision_name(a.precision)}, {"backend", a.backend},
                   {"from_data", a.from_data}, {"memory_budget_mb", a.memory_budget_mb}};
  j["view"] = {{"trail_frames", v.trail_frames}, {"show_data", v.show_data}, {"show_field", v.show_field},
               {"field_x0", v.field_x0}, {"field_grid", v.field_grid}, {"point_size", v.point_size},
               {"point_alpha", v.point_alpha}, {"vsync", v.vsync}, {"follow_newest", v.follow_newest},
               {"play_speed", v.play_speed}, {"loop_resimulate", v.loop_resimulate},
               {"steps_per_frame", v.steps_per_frame}, {"image_grid_cols", v.image_grid_cols},
               {"show_ui", v.show_ui}, {"cam_x", v.cam_x}, {"cam_y", v.cam_y}, {"cam_half_h", v.cam_half_h},
               {"cam_auto", v.cam_auto}};
  j["export"] = {{"dir", s.export_dir}, {"width", s.export_width}, {"height", s.export_height},
                 {"image_grid_scale", s.image_grid_scale}};
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
    read(a, "model_path", o.model_path, note);
    read(a, "n_samples", o.n_samples, note);
    read(a, "eta", o.eta, note);
    read(a, "steps", o.steps, note);
    read(a, "t_start", o.t_start, note);
    read(a, "steps_per_launch", o.steps_per_launch, note);
    read(a, "seed", o.seed, note);
    read(a, "backend", o.backend, note);
    read(a, "from_data", o.from_data, note);
    read(a, "memory_budget_mb", o.memory_budget_mb, note);
    std::string name;
    try {
      if (a.contains("sampler")) o.sampler = parse_sampler(a["sampler"].get<std::string>());
      if (a.contains("precision")) o.precision = parse_precision(a["precision"].get<std::string>());
    } catch (const std::exception& e) {
      if (note) *note += std::string("settings: ") + e.what() + "\n";
    }
  }
  if (j.contains("view")) {
    const auto& v = j["view"];
    ViewSettings& o = s.view;
    read(v, "trail_frames", o.trail_frames, note);
    read(v, "show_data", o.show_data, note);
    read(v, "show_field", o.show_field, note);
    read(v, "field_x0", o.field_x0, note);
    read(v, "field_grid", o.field_grid, note);
    read(v, "point_size", o.point_size, note);
    read(v, "point_alpha", o.point_alpha, note);
    read(v, "vsync", o.vsync, note);
    read(v, "follow_newest", o.follow_newest, note);
    read(v, "play_speed", o.play_speed, note);
    read(v, "loop_resimulate", o.loop_resimulate, note);
    read(v, "steps_per_frame", o.steps_per_frame, note);
    read(v, "image_grid_cols", o.image_grid_cols, note);
    read(v, "show_ui", o.show_ui, note);
    read(v, "cam_x", o.cam_x, note);
    read(v, "cam_y", o.cam_y, note);
    read(v, "cam_half_h", o.cam_half_h, note);
    read(v, "cam_auto", o.cam_auto, note);
  }
  if (j.contains("export")) {
    const auto& e = j["export"];
    read(e, "dir", s.export_dir, note);
    read(e, "width", s.export_width, note);
    read(e, "height", s.export_height, note);
    read(e, "image_grid_scale", s.image_grid_scale, note);
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
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) {
      if (error) *error = "cannot write " + tmp;
      return false;
    }
    f << to_json(s).dump(2) << "\n";
    if (!f) {
      if (error) *error = "cannot write " + tmp;
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    if (error) *error = "cannot rename " + tmp + " to " + path;
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

std::string default_config_dir() {
  if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return std::string(x) + "/diffscope";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.config/diffscope";
  return ".diffscope";
}

}  // namespace diffscope
