// restore.h — `diffscope --restore file.png|file.json`: the sidecar of an export (from the .json,
// or from the PNG's iTXt chunk `diffscope`) turned back into the model to open and the settings to apply.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/sidecar_file.h"  // read_sidecar

namespace diffscope {

struct RestorePlan {
  std::string model;  // model file to open ("" = keep the default)
  std::vector<std::pair<std::string, std::string>> sets;  // for apply_setting (settings_keys.h), in order
  int frame = -1;      // the shown frame of the export (-1: not in the sidecar)
  double camera_aspect = 0;  // the pane aspect its camera was set in (0: not in the sidecar)
  std::string note;    // what could not be restored exactly, one line each ("" when everything was)
};

// The model and settings of a sidecar. The model is found by its path and checked by SHA-256; when the path is
// gone, a bundled model with the same SHA-256 is used; when the bytes differ, or nothing matches, `note` says
// so (the file found by path is still opened, so the user sees what changed).
// A grid PNG's sidecar (kind "grid", picture/grid_png.h) gives the grid back instead: settings grid (its spec) and
// grid_show, the model, n, seed and the settings of the axes it does not sweep (SEMANTICS §10).
RestorePlan plan_restore(const nlohmann::json& sidecar);

// True for the files restore takes: .png, .json and the videos (.mp4, .gif, .webp: through their sidecar), any case.
bool is_restore_file(const std::string& path);

}  // namespace diffscope
