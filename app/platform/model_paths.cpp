// model_paths.cpp — repository roots, bundled models and the model name -> path resolver.
#include "platform/model_paths.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "base/errors.h"

namespace fs = std::filesystem;

namespace diffscope {

namespace {
std::string& extra_root() {
  static std::string root;
  return root;
}
}  // namespace

void set_extra_root(const std::string& root) { extra_root() = root; }

std::vector<std::string> candidate_roots() {
  std::vector<std::string> out;
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    if (p.empty() || !fs::is_directory(p, ec)) return;
    const std::string s = fs::weakly_canonical(p, ec).string();
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  };
  if (const char* r = std::getenv("DIFFSCOPE_ROOT"); r && *r) add(r);
  add(extra_root());
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n > 0) {
    buf[n] = 0;
    const fs::path exe_dir = fs::path(buf).parent_path();
    add(exe_dir.parent_path() / "share" / "diffscope");  // installed: <prefix>/bin/diffscope -> <prefix>/share/diffscope
    add(exe_dir.parent_path().parent_path());  // build/bin/diffscope -> repo
    add(exe_dir.parent_path());
    add(exe_dir);
  }
  std::error_code ec;
  add(fs::current_path(ec));
  add(fs::current_path(ec).parent_path());
  return out;
}

std::string find_repo_file(const std::string& rel) {
  std::error_code ec;
  for (const auto& r : candidate_roots())
    if (fs::exists(fs::path(r) / rel, ec)) return (fs::path(r) / rel).string();
  return "";
}

std::vector<std::pair<std::string, std::string>> bundled_models() {
  std::vector<std::pair<std::string, std::string>> out;
  std::error_code ec;
  for (const auto& r : candidate_roots()) {
    const fs::path dir = fs::path(r) / "assets" / "models";
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".safetensors") out.emplace_back(e.path().stem().string(), e.path().string());
    if (!out.empty()) break;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string absolute_path(const std::string& path) {
  if (path.empty()) return path;
  std::error_code ec;
  const std::filesystem::path a = std::filesystem::absolute(path, ec);
  return ec ? path : a.string();
}

std::string bundled_name_of(const std::string& path) {
  std::error_code ec;
  for (const auto& [name, p] : bundled_models())
    if (fs::equivalent(p, path, ec)) return name;
  return "";
}

std::string resolve_model(const std::string& name_or_path) {
  std::error_code ec;
  if (name_or_path.find('/') != std::string::npos || fs::exists(name_or_path, ec)) return name_or_path;
  for (const auto& [name, path] : bundled_models())
    if (name == name_or_path) return path;
  const std::string f = find_repo_file("assets/models/" + name_or_path + ".safetensors");
  return f.empty() ? name_or_path : f;
}

std::string resolve_model_arg(const std::string& arg, const std::string& name_or_path) {
  const std::string path = resolve_model(name_or_path);
  const std::string ext = ".safetensors";
  const bool has_ext = name_or_path.size() >= ext.size() &&
                       name_or_path.compare(name_or_path.size() - ext.size(), ext.size(), ext) == 0;
  std::error_code ec;
  if (path != name_or_path || name_or_path.empty() || name_or_path.find('/') != std::string::npos || has_ext ||
      fs::exists(name_or_path, ec))
    return path;  // a bundled model, or a path the loader opens (and reports)
  std::string names;
  for (const auto& [name, p] : bundled_models()) names += (names.empty() ? "" : ", ") + name;
  throw InvalidInput(arg + " = " + name_or_path + ": no such file and no bundled model of that name; bundled: " +
                     (names.empty() ? "(none found: set DIFFSCOPE_ROOT to the repository)" : names));
}

}  // namespace diffscope
