// paths.h — where the app finds the repository's files (bundled models) and the user's config folder:
// $DIFFSCOPE_ROOT, the executable's ../.. and .., the working directory (ARCHITECTURE.md: never a path
// fixed at build time).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace diffscope::ui {

// Candidate repository roots, best first (only existing folders).
std::vector<std::string> candidate_roots();
// The first root/rel that exists, or "" if none.
std::string find_repo_file(const std::string& rel);
// Bundled models (name, path) found under assets/models of the first root that has any.
std::vector<std::pair<std::string, std::string>> bundled_models();
// A bundled name ("moons") or a path -> a path; names not found stay as given (the loader reports them).
std::string resolve_model(const std::string& name_or_path);
// The default model: moons if bundled, else the first bundled model, else "".
std::string default_model_path();

}  // namespace diffscope::ui
