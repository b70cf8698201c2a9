// file_read.cpp — whole-file reads with errors that name the file (see file_read.h).
#include "platform/file_read.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "base/errors.h"

namespace diffscope {

std::string read_file_bytes(const std::string& path, const std::string& label, const std::string& what) {
  if (path.empty())  // the label is often the path itself: say what is missing rather than ": cannot open"
    throw InvalidInput((label.empty() ? std::string() : label + ": ") + "the " + what + " path is empty; valid: a file path");
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw InvalidInput(label + ": cannot open " + what + ": " + std::strerror(errno));
  struct stat st {};
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    std::fclose(f);
    throw InvalidInput(label + ": not a regular file");
  }
  std::string bytes;
  try {
    bytes.resize(static_cast<size_t>(st.st_size));
  } catch (const std::bad_alloc&) {
    std::fclose(f);
    throw ResourceUnavailable(label + ": out of memory reading " + std::to_string(st.st_size) + " bytes");
  }
  const size_t got = bytes.empty() ? 0 : std::fread(bytes.data(), 1, bytes.size(), f);
  const bool err = std::ferror(f) != 0;
  std::fclose(f);
  if (err || got != bytes.size())
    throw InvalidInput(label + ": read " + std::to_string(got) + " of " + std::to_string(bytes.size()) + " bytes");
  return bytes;
}

}  // namespace diffscope
