// restore.cpp — sidecar (SEMANTICS §6) -> model path + settings keys.
#include "ui/restore.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/errors.h"
#include "core/json_path.h"
#include "core/model_paths.h"
#include "core/png_text.h"
#include "ui/app.h"
#include "ui/exporter.h"
#include "ui/settings_keys.h"
#include "ui/sha256.h"

namespace diffscope::ui {

nlohmann::json read_sidecar(const std::string& file, std::string* note) {
  std::string text;
  const std::string ext = std::filesystem::path(file).extension().string();
  if (ext == ".png" || ext == ".PNG") {
    auto t = read_png_text(file, "diffscope", "--restore");
    if (!t) {
      *note += file + " carries no diffscope settings (an older export): opened with the defaults\n";
      return nlohmann::json::object();
    }
    text = *t;
  } else {
    std::ifstream f(file, std::ios::binary);
    if (!f) throw InvalidInput("--restore " + file + ": cannot read");
    std::stringstream s;
    s << f.rdbuf();
    text = s.str();
  }
  try {
    nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object()) throw InvalidInput("not an object");
    return j;
  } catch (const std::exception& e) {
    throw InvalidInput("--restore " + file + ": not a diffscope sidecar (" + e.what() + ")");
  }
}

namespace {

// The model of the sidecar: by path when its SHA-256 matches, else a bundled model with that SHA-256.
std::string find_model(const nlohmann::json& m, std::string* note) {
  std::string file;
  get_path(m, "file", &file);  // the raw bytes of any file name (core/json_path.h)
  const std::string sha = m.contains("sha256") && m["sha256"].is_string() ? m["sha256"].get<std::string>() : "";
  std::error_code ec;
  const bool exists = !file.empty() && std::filesystem::exists(file, ec);
  if (exists && (sha.empty() || sha256_file(file) == sha)) return file;
  for (const auto& [name, path] : bundled_models())
    if (!sha.empty() && sha256_file(path) == sha) {
      *note += "model " + file + (exists ? " has changed" : " is gone") + "; the bundled '" + name +
               "' has its SHA-256 and is opened instead\n";
      return path;
    }
  if (exists) {
    *note += "model " + file + " has changed since the export (SHA-256 " + sha256_file(file) + ", the export has " +
             sha + "): the result may differ\n";
    return file;
  }
  *note += "model " + file + " is gone and no bundled model has its SHA-256 " + sha + ": opened the default\n";
  return "";
}

}  // namespace

RestorePlan plan_restore(const nlohmann::json& j) {
  RestorePlan p;
  if (j.contains("model") && j["model"].is_object()) p.model = find_model(j["model"], &p.note);
  auto put = [&](const char* sidecar_key, const char* setting, const nlohmann::json& from) {
    if (!from.contains(sidecar_key)) return;
    const nlohmann::json& v = from[sidecar_key];
    std::string s;
    if (v.is_string()) s = v.get<std::string>();
    else if (v.is_boolean()) s = v.get<bool>() ? "1" : "0";
    else if (v.is_number_float()) s = nlohmann::json(v).dump();  // shortest text that reads back exactly
    else if (v.is_number()) s = v.dump();
    else {
      p.note += std::string("sidecar key ") + sidecar_key + " is not a value: ignored\n";
      return;
    }
    p.sets.emplace_back(setting, s);
  };
  // Sidecar keys (SEMANTICS §6) -> setting names (settings_keys.h).
  static const std::pair<const char*, const char*> kRun[] = {
      {"N", "n"},       {"n", "n"},                 {"sampler", "sampler"},     {"spacing", "spacing"},     {"eta", "eta"},             {"t_start", "t_start"},
      {"steps", "steps"}, {"seed", "seed"},         {"precision", "precision"}, {"from_data", "from_data"},
      {"steps_per_launch", "spl"}};
  static const std::pair<const char*, const char*> kView[] = {
      {"trail_frames", "trail"}, {"show_data", "data"},           {"show_field", "field"},
      {"field_x0", "field_x0"},  {"point_size", "point_size"},   {"point_alpha", "point_alpha"}};
  for (const auto& [from, to] : kRun) put(from, to, j);
  if (j.contains("view") && j["view"].is_object()) {
    const nlohmann::json& v = j["view"];
    for (const auto& [from, to] : kView) put(from, to, v);
    // A camera the user moved is restored as is; an automatic one is fitted again the same way.
    const bool fixed = v.contains("camera_auto") && v["camera_auto"].is_boolean() && !v["camera_auto"].get<bool>();
    const nlohmann::json cam = v.value("camera", nlohmann::json());
    if (fixed && cam.is_array() && cam.size() == 3 && cam[0].is_number() && cam[1].is_number() && cam[2].is_number()) {
      char c[96];
      std::snprintf(c, sizeof c, "%.17g,%.17g,%.17g", cam[0].get<double>(), cam[1].get<double>(),
                    cam[2].get<double>());
      p.sets.emplace_back("camera", c);
    } else if (v.contains("camera_auto")) {
      p.sets.emplace_back("camera", "auto");
    }
  }
  if (j.contains("size") && j["size"].is_array() && j["size"].size() == 2 && j["size"][0].is_number_integer() &&
      j["size"][1].is_number_integer())
    p.sets.emplace_back("export_size", std::to_string(j["size"][0].get<int>()) + "x" + std::to_string(j["size"][1].get<int>()));
  if (j.contains("frame") && j["frame"].is_number_integer()) p.frame = j["frame"].get<int>();
  return p;
}

bool is_restore_file(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext == ".png" || ext == ".json";
}

bool restore_into_app(App& app, const std::string& file) {
  try {
    std::string note;
    const RestorePlan plan = plan_restore(read_sidecar(file, &note));
    AppSettings next = app.settings;
    for (const auto& [k, v] : plan.sets) apply_setting(next, k, v);  // all or nothing
    app.settings = next;
    app.load_model(plan.model.empty() ? app.session->model().path : plan.model);
    note += plan.note;
    app.exporter->messages.push_back("restored " + file + (note.empty() ? "" : ": " + note));
    return true;
  } catch (const std::exception& e) {
    app.exporter->messages.push_back(std::string("error: ") + e.what());
    return false;
  }
}

}  // namespace diffscope::ui
