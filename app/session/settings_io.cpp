// settings_io.cpp — AppSettings <-> JSON (through the settings schema), tolerant reading, atomic writing.
#include "session/settings_io.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "base/errors.h"
#include "formats/json_bounded.h"
#include "platform/atomic_write.h"
#include "session/settings_schema.h"

namespace diffscope {

const char* view_mode_name(ViewMode m) {
  return m == ViewMode::Density ? "density" : m == ViewMode::Both ? "both" : "points";
}

ViewMode parse_view_mode(const std::string& v) {
  for (ViewMode m : {ViewMode::Points, ViewMode::Density, ViewMode::Both})
    if (v == view_mode_name(m)) return m;
  throw InvalidInput("view_mode = '" + v + "' is not valid; valid: points, density, both");
}

const char* draw_mode_name(DrawMode m) { return m == DrawMode::Splat ? "splat" : "primitives"; }

DrawMode parse_draw_mode(const std::string& v) {
  for (DrawMode m : {DrawMode::Primitives, DrawMode::Splat})
    if (v == draw_mode_name(m)) return m;
  throw InvalidInput("draw_mode = '" + v + "' is not valid; valid: primitives, splat");
}

bool SamplingSettings::operator==(const SamplingSettings& o) const { return same_sampling(*this, o); }

// The settings file's form is the schema's (session/settings_schema.h): one row per setting.
nlohmann::json to_json(const AppSettings& s) { return settings_to_json(s); }

AppSettings app_settings_from_json(const nlohmann::json& j, std::string* note) { return settings_from_json(j, note); }

AppSettings load_app_settings(const std::string& path, std::string* note) {
  std::ifstream f(path);
  if (!f) return AppSettings{};
  try {
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    nlohmann::json j = parse_json_bounded(text);
    if (!j.is_object()) throw std::runtime_error("not a JSON object");  // nothing of it is readable: corrupt too
    return app_settings_from_json(j, note);
  } catch (const std::exception& e) {
    f.close();
    // Kept aside before the app writes its defaults over it: PATH.bad, else PATH.bad.2, .3, ... (never replaced).
    std::string bad = path + ".bad";
    std::error_code ec;
    for (int k = 2; std::filesystem::exists(bad, ec) && k <= 100; ++k) bad = path + ".bad." + std::to_string(k);
    const bool kept = !std::filesystem::exists(bad, ec) && (std::filesystem::rename(path, bad, ec), !ec);
    if (note)
      *note += "settings file " + path + " is corrupt (" + e.what() + "); using defaults" +
               (kept ? "; the corrupt file is kept as " + bad : "; it could not be kept aside (" +
                                                                  (ec ? ec.message() : std::string("too many .bad files")) +
                                                                  ") and will be overwritten") +
               "\n";
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
