// paths.cpp — the GUI's default model (the resolver is platform/model_paths.cpp).
#include "platform/paths.h"

namespace diffscope {

std::string default_model_path() {
  const auto models = bundled_models();
  for (const auto& [name, path] : models)
    if (name == "moons") return path;
  return models.empty() ? "" : models.front().second;
}

}  // namespace diffscope
