// settings_io.cpp — AppSettings <-> JSON (through the settings schema), tolerant reading, atomic writing.
#include "core/settings_io.h"

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "core/json_bounded.h"
#include "core/atomic_write.h"
#include "core/settings_schema.h"

namespace diffscope {

bool SamplingSettings::operator==(const SamplingSettings& o) const { return same_sampling(*this, o); }

// The settings file's form is the schema's (core/settings_schema.h): one row per setting.
nlohmann::json to_json(const AppSettings& s) { return settings_to_json(s); }

AppSettings app_settings_from_json(const nlohmann::json& j, std::string* note) { return settings_from_json(j, note); }

AppSettings load_app_settings(const std::string& path, std::string* note) {
  std::ifstream f(path);
  if (!f) return AppSettings{};
  try {
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    nlohmann::json j = parse_json_bounded(text);
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
