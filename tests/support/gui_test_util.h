// gui_test_util.h — helpers of the GUI tests: run the diffscope binary, read PNGs and sidecars, pick a model.
#pragma once
#include <gtest/gtest.h>
#include <stb_image.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope::guitest {

struct Result {
  int code = -1;
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// Runs `env diffscope args` with stdout/stderr captured in `logs`.
inline Result run_cli(const std::string& args, const std::string& logs, const std::string& env = "") {
  Result r;
  const std::string o = logs + "/stdout", e = logs + "/stderr";
  const std::string cmd = env + " '" + test::cli_binary() + "' " + args + " >'" + o + "' 2>'" + e + "' </dev/null";
  const int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(o);
  r.err = slurp(e);
  return r;
}

// A dim-2 model: the bundled moons when present, else the golden random-weight model (always in the repo).
inline std::string model_2d() {
  const std::string moons = test::repo_root() + "/assets/models/moons.safetensors";
  if (std::filesystem::exists(moons)) return moons;
  return test::data_path("golden/d2_h256.safetensors");
}

struct Png {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  // Number of distinct colors and the fraction of pixels unlike the top-left (background) pixel.
  size_t distinct_colors() const {
    std::set<uint32_t> c;
    for (size_t i = 0; i + 2 < rgb.size(); i += 3) c.insert(rgb[i] << 16 | rgb[i + 1] << 8 | rgb[i + 2]);
    return c.size();
  }
  double non_background() const {
    size_t n = 0;
    for (size_t i = 0; i + 2 < rgb.size(); i += 3)
      n += rgb[i] != rgb[0] || rgb[i + 1] != rgb[1] || rgb[i + 2] != rgb[2];
    return rgb.empty() ? 0 : double(n) / (rgb.size() / 3);
  }
};

inline Png read_png(const std::string& path) {
  Png p;
  int ch = 0;
  unsigned char* d = stbi_load(path.c_str(), &p.w, &p.h, &ch, 3);
  if (d) {
    p.rgb.assign(d, d + size_t(p.w) * p.h * 3);
    stbi_image_free(d);
  }
  return p;
}

// A fixture for runs of the headless app: a folder for the files of the test (`dir`) and one for the logs.
class AppFixture : public ::testing::Test {
 protected:
  test::TempDir dir, logs;

  static bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
  std::string file(const std::string& name) const { return dir.file(name); }
  void write(const std::string& name, const std::string& text) { std::ofstream(file(name)) << text; }
  // Writes `text` to s.txt in `dir` and returns its path.
  std::string script(const std::string& text) {
    write("s.txt", text);
    return file("s.txt");
  }
  // Runs `script` (written to script.txt) in the headless app on the CPU backend at 640x480, without persistence.
  Result run_gui(const std::string& text, const std::string& args = "") {
    write("script.txt", text);
    Result r = run_cli("gui --headless --backend cpu --no-persist --size 640x480 " + args + " --script '" +
                           file("script.txt") + "'",
                       logs.path());
    if (r.code == 3 && r.err.find("EGL") != std::string::npos) ADD_FAILURE() << "no headless GL context: " << r.err;
    return r;
  }
  static nlohmann::json sidecar(const std::string& path) { return nlohmann::json::parse(slurp(path)); }
  // Names in `folder` (not recursive), sorted.
  static std::vector<std::string> names(const std::string& folder) {
    std::vector<std::string> v;
    for (const auto& e : std::filesystem::directory_iterator(folder)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
};

}  // namespace diffscope::guitest
