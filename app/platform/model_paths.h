// model_paths.h — where the app finds the repository's files (bundled models): $DIFFSCOPE_ROOT, then the
// installed <exe>/../share/diffscope (cmake --install, the .deb), then the executable's ../.. and .. and its
// folder, then the working directory and its parent (ARCHITECTURE.md: never a path fixed at build time).
// One name -> path resolver for the CLI and the GUI (no GL, no CUDA).
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace diffscope {

// Adds a root searched right after $DIFFSCOPE_ROOT: a host that is not <prefix>/bin/diffscope (the Python
// module) names its installed <prefix>/share/diffscope. Call before the first lookup.
void set_extra_root(const std::string& root);
// Candidate repository roots, best first (only existing folders).
std::vector<std::string> candidate_roots();
// The first root/rel that exists, or "" if none.
std::string find_repo_file(const std::string& rel);
// Bundled models (name, path), sorted by name, found under assets/models of the first root that has any.
std::vector<std::pair<std::string, std::string>> bundled_models();
// The bundled name ("moons") of the model file at `path` (the same file as a bundled model's), else "".
std::string bundled_name_of(const std::string& path);
// A bundled name ("moons") or a path -> a path; names not found stay as given (the loader reports them).
std::string resolve_model(const std::string& name_or_path);
// As resolve_model, for a `--model` argument: a bare name (no '/', no ".safetensors", not an existing file)
// that is not bundled throws InvalidInput naming `arg`, the value and the bundled names.
std::string resolve_model_arg(const std::string& arg, const std::string& name_or_path);
// `path` made absolute against the working directory ("" and paths that cannot be made absolute stay as given):
// what sidecars store, so that they work from any folder.
std::string absolute_path(const std::string& path);

}  // namespace diffscope
