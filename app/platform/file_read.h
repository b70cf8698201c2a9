// file_read.h — reading a whole regular file into memory, the counterpart of atomic_write.h.
#pragma once
#include <string>

namespace diffscope {

// Returns the bytes of the regular file at `path`; the size comes from fstat, so nothing beyond the file is
// allocated. Throws InvalidInput "<label>: <what> ..." when it cannot be opened (`what` names the kind of file,
// e.g. "model file"), is not a regular file, or reads short (an empty `path`: "the <what> path is empty"); ResourceUnavailable when memory runs out.
std::string read_file_bytes(const std::string& path, const std::string& label, const std::string& what);

}  // namespace diffscope
