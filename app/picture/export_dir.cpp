// export_dir.cpp — the default export folder (XDG user dirs, then ~/Pictures, then ~/diffscope-exports).
#include "picture/export_dir.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace diffscope {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The XDG_PICTURES_DIR="$HOME/Pictures" line of user-dirs.dirs (xdg-user-dirs' format), "" when absent.
std::string pictures_from_user_dirs(const std::string& home) {
  const std::string config = env("XDG_CONFIG_HOME").empty() ? home + "/.config" : env("XDG_CONFIG_HOME");
  std::ifstream in(config + "/user-dirs.dirs");
  const std::string key = "XDG_PICTURES_DIR=\"";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key, 0) != 0) continue;
    std::string v = line.substr(key.size());
    v = v.substr(0, v.find('"'));
    if (v.rfind("$HOME", 0) == 0) v = home + v.substr(5);
    return v;
  }
  return "";
}

}  // namespace

std::string default_export_dir() {
  std::error_code ec;
  if (const std::string x = env("XDG_PICTURES_DIR"); !x.empty()) return x + "/diffscope";
  const std::string home = env("HOME");
  if (home.empty()) return "diffscope-exports";
  if (const std::string p = pictures_from_user_dirs(home); !p.empty() && p != home && fs::is_directory(p, ec))
    return p + "/diffscope";
  if (fs::is_directory(home + "/Pictures", ec)) return home + "/Pictures/diffscope";
  return home + "/diffscope-exports";
}

std::string resolve_export_dir(const std::string& setting) {
  return setting.empty() || setting == "diffscope_exports" ? default_export_dir() : setting;
}

}  // namespace diffscope
