// atomic_write.cpp — temporary files + rename, removing the temporary files on failure.
#include "platform/atomic_write.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/errors.h"
#include "platform/output_files.h"

namespace diffscope {
namespace {

[[noreturn]] void fail(const std::string& arg, const std::string& path, const std::string& why) {
  throw InvalidInput(arg + " " + path + ": cannot write (" + why + ")");
}

bool write_all(int fd, const char* p, size_t n) {
  size_t done = 0;
  while (done < n) {
    // At most 1 GiB per call: Linux writes at most 0x7ffff000 bytes at once anyway.
    const ssize_t k = ::write(fd, p + done, std::min<size_t>(n - done, size_t(1) << 30));
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(k);
  }
  return true;
}

}  // namespace

std::string output_target(const std::string& path, const std::string& arg) {
  std::string p = path;
  struct stat st {};
  for (int links = 0; ::lstat(p.c_str(), &st) == 0 && S_ISLNK(st.st_mode); ++links) {
    if (links == 40) throw InvalidInput(arg + " '" + path + "': too many symbolic links; valid: a file path");
    std::vector<char> buf(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4095) + 1);
    const ssize_t n = ::readlink(p.c_str(), buf.data(), buf.size() - 1);
    if (n < 0) break;
    const std::string target(buf.data(), static_cast<size_t>(n));
    const size_t slash = p.find_last_of('/');
    p = target.empty() || target[0] == '/' || slash == std::string::npos ? target : p.substr(0, slash + 1) + target;
  }
  if (::stat(p.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(arg, path, "it is a folder; valid: a file path");
    if (!S_ISREG(st.st_mode))
      throw InvalidInput(arg + " '" + path + "' is not a regular file (a device, FIFO or socket), which a write would " +
                         "replace; valid: a path to a regular file or to a new one");
  }
  return p;
}

void AtomicFileSet::add(std::string path, std::string arg, std::string head, const void* data, size_t size) {
  m_files.push_back({std::move(path), std::move(arg), std::move(head), data, size, {}});
}

void AtomicFileSet::commit() {
  static std::atomic<unsigned> counter{0};
  auto remove_temps = [&] {
    for (File& f : m_files)
      if (!f.tmp.empty()) ::unlink(f.tmp.c_str()), f.tmp.clear();
  };
  for (File& f : m_files) {
    if (f.path.empty()) remove_temps(), fail(f.arg, f.path, "empty path");
    try {
      f.path = output_target(f.path, f.arg);
    } catch (...) {
      remove_temps();
      throw;
    }
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
      const std::string tmp = f.path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
      fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd >= 0) f.tmp = tmp;
      if (fd < 0 && errno != EEXIST) {
        const size_t slash = f.path.find_last_of('/');
        const std::string in_the_way =
            errno == ENOTDIR && slash != std::string::npos ? file_in_the_way(f.path.substr(0, slash)) : "";
        const std::string why = in_the_way.empty() ? std::strerror(errno) : file_in_the_way_text(in_the_way);
        remove_temps();
        fail(f.arg, f.path, why);
      }
    }
    if (fd < 0) remove_temps(), fail(f.arg, f.path, "no free temporary name");
    int err = 0;
    if (!write_all(fd, f.head.data(), f.head.size()) ||
        (f.size != 0 && !write_all(fd, static_cast<const char*>(f.data), f.size)))
      err = errno;
    if (!err && ::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) err = errno;
    if (::close(fd) != 0 && !err) err = errno;
    if (err) {
      remove_temps();
      fail(f.arg, f.path, std::strerror(err));
    }
  }
  // A folder at a path would refuse the rename: find it before any file is renamed.
  for (File& f : m_files) {
    struct stat st {};
    if (::stat(f.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) remove_temps(), fail(f.arg, f.path, "it is a folder");
  }
  for (size_t i = 0; i < m_files.size(); ++i) {
    File& f = m_files[i];
    if (::rename(f.tmp.c_str(), f.path.c_str()) != 0) {
      const std::string why = std::strerror(errno);
      remove_temps();
      for (size_t k = 0; k < i; ++k) ::unlink(m_files[k].path.c_str());  // all or none
      fail(f.arg, f.path, why);
    }
    f.tmp.clear();
  }
  m_files.clear();
}

void write_file_atomic(const std::string& path, const std::string& bytes, const std::string& arg) {
  AtomicFileSet set;
  set.add(path, arg, bytes);
  set.commit();
}

}  // namespace diffscope
