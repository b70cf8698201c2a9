// atomic_write.cpp — temporary file + rename, removing the temporary file on failure.
#include "core/atomic_write.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "core/errors.h"

namespace diffscope {

void write_file_atomic(const std::string& path, const std::string& bytes, const std::string& arg) {
  static std::atomic<unsigned> counter{0};
  auto fail = [&](const std::string& why) {
    throw InvalidInput(arg + " " + path + ": cannot write (" + why + ")");
  };
  if (path.empty()) fail("empty path");
  std::string tmp;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST) fail(std::strerror(errno));
  }
  if (fd < 0) fail("no free temporary name");
  auto give_up = [&](const std::string& why) {
    if (fd >= 0) ::close(fd);
    ::unlink(tmp.c_str());
    fail(why);
  };
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      give_up(std::strerror(errno));
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 && errno != EINVAL && errno != EROFS) give_up(std::strerror(errno));
  const int rc = ::close(fd);
  fd = -1;
  if (rc != 0) give_up(std::strerror(errno));
  if (::rename(tmp.c_str(), path.c_str()) != 0) give_up(std::strerror(errno));
}

}  // namespace diffscope
