// atomic_write.h — writing whole files so that nothing partial is ever left at a path (SEMANTICS §9).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace diffscope {

// Several files written together, all or none: commit() writes each to a new temporary file beside its path
// (permissions 0666 minus umask), flushes it, and only when every one is written renames them over their
// paths (each path's output_target: a link's target is replaced, a device or FIFO is refused before anything is
// written). If any write fails, every temporary file is removed, no path is touched, and InvalidInput names the
// file's `arg`, its path and the system's reason. A path that is a folder is refused before any rename; should
// a rename still fail, the files this commit already renamed are removed again. A file is `head` followed by `size` bytes at `data`; the
// data is not copied, so it must stay alive until commit() returns.
class AtomicFileSet {
 public:
  void add(std::string path, std::string arg, std::string head, const void* data = nullptr, size_t size = 0);
  void commit();
  bool empty() const { return m_files.empty(); }

 private:
  struct File {
    std::string path, arg, head;
    const void* data = nullptr;
    size_t size = 0;
    std::string tmp;
  };
  std::vector<File> m_files;
};

// The file that writing `path` replaces: `path` with the symbolic links at its end followed (up to 40), so that a
// write through a link replaces the link's target and keeps the link. Throws InvalidInput naming `arg`, the path
// and the valid kinds when that file exists and is a folder, or is not a regular file (a device such as
// /dev/null, a FIFO, a socket: a rename would replace it with a plain file; SEMANTICS §9).
std::string output_target(const std::string& path, const std::string& arg);

// One file, atomically: AtomicFileSet with `bytes` alone.
void write_file_atomic(const std::string& path, const std::string& bytes, const std::string& arg);

}  // namespace diffscope
