// window_fit.cpp — fit_window (window_fit.h).
#include "render/window_fit.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "formats/json_bounded.h"
#include "platform/atomic_write.h"

namespace diffscope::render {

WindowRect fit_window(int want_w, int want_h, float scale, const WindowRect& area) {
  const double s = scale > 0 && std::isfinite(scale) ? scale : 1.0;
  WindowRect r{-1, -1, std::max(1, want_w), std::max(1, want_h)};
  if (area.w <= 0 || area.h <= 0 || (r.w * s <= area.w && r.h * s <= area.h)) return r;
  auto fit = [s](int want, int avail) { return want * s <= avail ? want : std::max(1, int(0.9 * avail / s)); };
  r.w = fit(r.w, area.w);
  r.h = fit(r.h, area.h);
  r.x = area.x + std::max(0, (area.w - int(std::lround(r.w * s))) / 2);
  r.y = area.y + std::max(0, (area.h - int(std::lround(r.h * s))) / 2);
  return r;
}

WindowRect place_saved_window(const WindowRect& saved, float scale, const WindowRect& area) {
  WindowRect r = fit_window(saved.w, saved.h, scale, area);
  if (area.w <= 0 || area.h <= 0) return {saved.x, saved.y, r.w, r.h};
  if (r.x >= 0) return r;  // shrunk: centred
  const double s = scale > 0 && std::isfinite(scale) ? scale : 1.0;
  const bool inside = saved.x >= area.x && saved.y >= area.y && saved.x + r.w * s <= double(area.x) + area.w &&
                      saved.y + r.h * s <= double(area.y) + area.h;
  r.x = inside ? saved.x : area.x + (area.w - int(std::lround(r.w * s))) / 2;
  r.y = inside ? saved.y : area.y + (area.h - int(std::lround(r.h * s))) / 2;
  return r;
}

std::optional<WindowRect> load_window_rect(const std::string& path) {
  std::ifstream f(path);
  if (!f) return std::nullopt;
  try {
    const nlohmann::json j = parse_json_bounded(std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()));
    auto get = [&j](const char* k, int lo, int hi, int* out) {
      if (!j.is_object() || !j.contains(k) || !j[k].is_number_integer()) return false;
      const int64_t v = j[k].get<int64_t>();
      if (v < lo || v > hi) return false;
      *out = int(v);
      return true;
    };
    WindowRect r;
    if (get("x", -100000, 100000, &r.x) && get("y", -100000, 100000, &r.y) && get("w", 200, 16384, &r.w) &&
        get("h", 200, 16384, &r.h))
      return r;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

bool save_window_rect(const std::string& path, const WindowRect& r) {
  try {
    write_file_atomic(path, nlohmann::json{{"x", r.x}, {"y", r.y}, {"w", r.w}, {"h", r.h}}.dump() + "\n", "window");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace diffscope::render
