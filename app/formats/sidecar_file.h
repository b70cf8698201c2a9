// sidecar_file.h — reading an export's sidecar (SEMANTICS §6) back: from its .json file or from a PNG's iTXt
// chunk `diffscope`; its settings as one flat object of settings-schema keys (`--restore`, `sample --config`).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace diffscope {

// The sidecar JSON of `file`: a .png's `diffscope` text chunk, a video's sidecar (video_sidecar_path: name.mp4.json,
// else name.json as videos before 2026-12-02 had), else the JSON file itself. A PNG without the
// chunk (--no-png-text) is read through its .json sidecar beside it (png_sidecar_path), with a line in `note`.
// Throws InvalidInput naming `arg` (the front end's name of the option, e.g. the CLI's --restore or --config) for
// an unreadable file, malformed JSON, or a PNG with neither the chunk nor a sidecar (not a diffscope export).
nlohmann::json read_sidecar(const std::string& file, std::string* note, const std::string& arg);

// The sidecar's values as one flat object: the top level and "view" merged. Format 1 sidecars (no "format")
// wrote the picture size as "size" [w, h] and a fixed camera as "camera" [x, y, half_h] beside "camera_auto":
// those are aliases of the schema's export_size, camera and cam_auto (session/settings_schema.h).
nlohmann::json sidecar_settings(const nlohmann::json& sidecar);

}  // namespace diffscope
