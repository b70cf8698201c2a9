// paths.h — where the app finds the repository's files (bundled models) and the user's config folder.
// The resolver itself is platform/model_paths.h (shared with the CLI); the ui namespace keeps its names.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "platform/model_paths.h"

namespace diffscope {

using diffscope::bundled_models;
using diffscope::candidate_roots;
using diffscope::find_repo_file;
using diffscope::resolve_model;
// The default model: moons if bundled, else the first bundled model, else "".
std::string default_model_path();

}  // namespace diffscope
