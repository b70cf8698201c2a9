// atomic_write.h — writing a whole file so that nothing partial is ever left at the path (SEMANTICS §9).
#pragma once
#include <string>

namespace diffscope {

// Writes `bytes` to a new temporary file in the same folder as `path` (permissions 0666 minus umask), flushes
// it, then renames it over `path`. On any failure the temporary file is removed, `path` is left as it was,
// and InvalidInput names `arg`, the path and the system's reason.
void write_file_atomic(const std::string& path, const std::string& bytes, const std::string& arg);

}  // namespace diffscope
