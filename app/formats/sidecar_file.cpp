// sidecar_file.cpp — see sidecar_file.h.
#include "formats/sidecar_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/errors.h"
#include "formats/json_bounded.h"
#include "formats/json_path.h"
#include "formats/png_text.h"
#include "platform/output_files.h"

namespace diffscope {
namespace {

// "" for text that may be JSON; else the rest of a one-line message saying what the file is instead (a model, a
// NumPy array, a PNG under another name, other binary data), without echoing its bytes.
std::string not_json_kind(const std::string& text) {
  const auto* b = reinterpret_cast<const unsigned char*>(text.data());
  if (text.size() >= 9) {  // safetensors: 8-byte little-endian header length, then the JSON header
    uint64_t n = 0;
    for (int i = 7; i >= 0; --i) n = (n << 8) | b[i];
    if (b[8] == '{' && n >= 2 && n <= text.size() - 8)
      return " is a model, not an export (open it with --model)";
  }
  if (text.rfind("\x93NUMPY", 0) == 0) return " is a NumPy array, not an export; valid: an export's .png or .json sidecar";
  if (text.rfind("\x89PNG\r\n\x1a\n", 0) == 0)
    return " is a PNG without the .png extension; valid: name it .png, or give its .json sidecar";
  for (unsigned char c : text)
    if (c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r'))
      return ": not a diffscope sidecar (binary data, not JSON text); valid: an export's .png or .json sidecar";
  if (!is_valid_utf8(text))
    return ": not a diffscope sidecar (not UTF-8 text, which JSON is); valid: an export's .png or .json sidecar";
  return "";
}

// Every sidecar diffscope wrote, from the first format on, names at least one of these.
bool has_a_sidecar_key(const nlohmann::json& j) {
  for (const char* k : {"format", "model", "sampler", "steps", "t_start", "seed"})
    if (j.contains(k)) return true;
  return j.contains("kind") && j["kind"] == "grid" && j.contains("grid");  // a grid PNG's (picture/grid_png.h)
}

}  // namespace

nlohmann::json read_sidecar(const std::string& file, std::string* note, const std::string& arg) {
  std::string text;
  const std::string ext = std::filesystem::path(file).extension().string();
  if (ext == ".png" || ext == ".PNG") {
    auto t = read_png_text(file, "diffscope", arg);
    if (!t) {  // written with --no-png-text (or before the chunk existed): its .json sidecar beside it, if any
      const std::string json = png_sidecar_path(file);
      std::error_code ec;
      if (!std::filesystem::is_regular_file(json, ec))
        throw InvalidInput(arg + " " + file + ": carries no diffscope settings and has no sidecar " + json +
                           " beside it; valid: a PNG exported by diffscope, or an export's .json sidecar");
      *note += file + " carries no diffscope settings: read from its sidecar " + json + "\n";
      return read_sidecar(json, note, arg);
    }
    text = *t;
  } else if (is_video_path(file)) {  // a video: its sidecar name.mp4.json (or name.json, before 2026-12-02)
    std::string json = video_sidecar_path(file);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(json, ec) && std::filesystem::is_regular_file(png_sidecar_path(file), ec))
      json = png_sidecar_path(file);
    if (!std::filesystem::is_regular_file(json, ec))
      throw InvalidInput(arg + " " + file + ": a video has its settings in its sidecar " + video_sidecar_path(file) +
                         ", which is not there; valid: a diffscope export's .png or .json sidecar");
    return read_sidecar(json, note, arg);
  } else {
    std::ifstream f(file, std::ios::binary);
    if (!f) throw InvalidInput(arg + " " + file + ": cannot read");
    std::stringstream s;
    s << f.rdbuf();
    text = s.str();
  }
  if (const std::string kind = not_json_kind(text); !kind.empty()) throw InvalidInput(arg + " " + file + kind);
  try {
    nlohmann::json j = parse_json_bounded(text);
    if (!j.is_object()) throw InvalidInput("not an object");
    if (!has_a_sidecar_key(j)) {
      const std::string hint = j.contains("_class_name") ? " (a diffusers scheduler config? that is --scheduler-config)"
                                                          : "";
      throw InvalidInput(arg + " " + file + ": not a diffscope sidecar: it has none of a sidecar's keys (format, "
                         "model, sampler, steps, t_start, seed)" + hint + "; valid: an export's .png or .json sidecar");
    }
    return j;
  } catch (const InvalidInput&) {
    throw;
  } catch (const std::exception& e) {
    // The parser's "last read" echoes the bytes it stopped at: escaped, never a raw byte in the message.
    throw InvalidInput(arg + " " + file + ": not a diffscope sidecar (" + escape_invalid_utf8(e.what()) + ")");
  }
}

nlohmann::json sidecar_settings(const nlohmann::json& sidecar) {
  nlohmann::json flat = nlohmann::json::object();
  if (!sidecar.is_object()) return flat;
  for (auto it = sidecar.begin(); it != sidecar.end(); ++it)
    if (it.key() != "view") flat[it.key()] = it.value();
  if (sidecar.contains("view") && sidecar["view"].is_object())
    for (auto it = sidecar["view"].begin(); it != sidecar["view"].end(); ++it) flat[it.key()] = it.value();
  return flat;
}

}  // namespace diffscope
