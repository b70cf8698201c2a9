// paths.cpp — the GUI's default model (the resolver is core/model_paths.cpp).
#include "ui/paths.h"

namespace diffscope::ui {

std::string default_model_path() {
  const auto models = bundled_models();
  for (const auto& [name, path] : models)
    if (name == "moons") return path;
  return models.empty() ? "" : models.front().second;
}

}  // namespace diffscope::ui
