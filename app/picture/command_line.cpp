// command_line.cpp — settings to a shell command line.
#include "picture/command_line.h"

#include <algorithm>
#include <cstdio>

#include "platform/model_paths.h"

namespace diffscope {

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./:=+-") == std::string::npos;
  if (plain) return text;
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string sample_command_line(const SamplingSettings& s, const std::string& model, const std::string& backend,
                                const std::string& out, const std::string& more) {
  char eta[40];
  std::snprintf(eta, sizeof eta, "%.17g", s.eta);
  const std::string bundled = bundled_name_of(model);  // a name every checkout and install finds
  std::string c = "diffscope sample --model " + shell_quote(bundled.empty() ? absolute_path(model) : bundled) + " --n " + std::to_string(s.n_samples) +
                  " --sampler " + sampler_name(s.sampler) + " --eta " + eta + " --steps " + std::to_string(s.steps) +
                  " --t-start " + std::to_string(s.t_start) + " --seed " + std::to_string(s.seed);
  if (s.spacing != Spacing::Default && s.sampler != Sampler::Ddpm && s.sampler != Sampler::DdpmMean)
    c += std::string(" --spacing ") + spacing_name(s.spacing);
  if (s.from_data) c += " --from-data";
  return c + " --backend " + backend + " --precision " + precision_name(s.precision) + " --out " + shell_quote(out) + more;
}

std::string setting_flag(const std::string& key) {
  std::string f = "--" + key;
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

bool is_picture_setting(const SettingField& f) {
  if (!f.parse) return false;
  if (f.section == SettingSection::Sampling) return f.key == std::string("memory_budget_mb");
  return f.pixel || f.key == std::string("camera") || f.key == std::string("export_size");
}

std::string picture_command_options(const AppSettings& pic, bool camera_given, double camera_aspect, double ui_scale) {
  std::string c;
  auto add = [&](const std::string& flag, const std::string& value) { c += " " + flag + " " + shell_quote(value); };
  auto num = [](double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return std::string(b);
  };
  add("--size", std::to_string(pic.export_width) + "x" + std::to_string(pic.export_height));
  if (camera_aspect != 0) add("--camera-aspect", num(camera_aspect));
  if (ui_scale != 1) add("--ui-scale", num(ui_scale));
  const AppSettings defaults;
  for (const SettingField& f : setting_fields()) {
    if (!is_picture_setting(f) || !f.get) continue;
    const std::string key = f.key;
    if (key == "cam_x" || key == "cam_y" || key == "cam_half_h" || key == "export_width" || key == "export_height")
      continue;
    const nlohmann::json v = f.get(pic);
    if (v != f.get(defaults)) add(setting_flag(key), setting_text(v));
  }
  if (camera_given) add("--camera", num(pic.view.cam_x) + "," + num(pic.view.cam_y) + "," + num(pic.view.cam_half_h));
  return c;
}

}  // namespace diffscope
