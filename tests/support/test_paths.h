// test_paths.h — where tests find data and the CLI binary: $DIFFSCOPE_ROOT, else the source root the
// build was configured from; the binary from $DIFFSCOPE_BIN (set by CTest). Never an absolute path baked
// into data files.
#pragma once
#include <cstdlib>
#include <string>

namespace diffscope::test {

inline std::string repo_root() {
  if (const char* r = std::getenv("DIFFSCOPE_ROOT")) return r;
  return DIFFSCOPE_SOURCE_ROOT;
}
inline std::string data_path(const std::string& rel) { return repo_root() + "/tests/data/" + rel; }
inline std::string cli_binary() {
  if (const char* b = std::getenv("DIFFSCOPE_BIN")) return b;
  return repo_root() + "/build/bin/diffscope";
}

}  // namespace diffscope::test
