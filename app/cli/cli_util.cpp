// cli_util.cpp — shared CLI helpers (see cli_util.h).
#include "cli/cli_util.h"

#include <sys/resource.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <new>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "base/errors.h"
#include "formats/npy.h"
#include "platform/atomic_write.h"
#include "platform/cpu_threads.h"
#include "platform/output_files.h"

#if defined(DIFFSCOPE_HAVE_CUDA) && __has_include("gpu/cuda_backend.h")
#include "gpu/cuda_backend.h"
#define DIFFSCOPE_CLI_HAS_CUDA_BACKEND 1
#endif

namespace diffscope::cli {

std::unique_ptr<DenoiserBackend> make_backend(const std::string& name) {
  if (name == "cpu") return make_cpu_backend();
  if (name == "cuda") {
#ifdef DIFFSCOPE_CLI_HAS_CUDA_BACKEND
    try {
      return make_cuda_backend();
    } catch (const ResourceUnavailable& e) {
      throw ResourceUnavailable(std::string("--backend cuda: ") + e.what() + "; use --backend cpu");
    }
#else
    throw ResourceUnavailable("--backend cuda: this build has no CUDA support; use --backend cpu");
#endif
  }
  throw InvalidInput("--backend = '" + name + "' is not a backend; valid: cpu, cuda");
}

void add_threads_option(CLI::App& sub) {
  // read by apply_threads_option (the text is checked as an integer by check_integer_text)
  sub.add_option("--threads",
                 "threads of the CPU backend, in [1, 1024] (default: every core this process may use); results do "
                 "not depend on it")
      ->type_name("INT");
}

void apply_threads_option(const CLI::App& app) {
  for (const CLI::App* sub : app.get_subcommands()) {
    const CLI::Option* o = sub->get_option_no_throw("--threads");
    if (o && o->count() > 0) {
      const int64_t n = o->as<int64_t>();
      check_range("--threads", n, kCpuThreadsRange);  // 0 too: set_cpu_threads(0) would mean the default
      set_cpu_threads(n, "--threads");
    }
  }
}

void check_backend_precision(const std::string& backend, Precision precision) {
  if (backend != "cuda" && precision != Precision::Fp32)
    throw InvalidInput(std::string("--precision ") + precision_name(precision) +
                       " needs --backend cuda; --backend " + backend + " computes fp32 only");
}

namespace {
std::string shape_string(const std::vector<int64_t>& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  os << (shape.size() == 1 ? ",)" : ")");
  return os.str();
}
}  // namespace

Matrix2D load_matrix(const std::string& path, const std::string& arg) {
  NpyFloat a = read_npy_float(path, arg);
  const std::string valid = "; valid: a float16, float32 or float64 array (B, dim) with B >= 1";
  if (a.shape.size() == 2 && a.shape[0] < 1)  // the Python module's words (SEMANTICS §6)
    throw InvalidInput(arg + " '" + path + "' is empty (shape " + shape_string(a.shape) + ")" + valid);
  if (a.shape.size() != 2) throw InvalidInput(arg + " '" + path + "' has shape " + shape_string(a.shape) + valid);
  Matrix2D m;
  m.rows = a.shape[0];
  m.cols = a.shape[1];
  m.data = std::move(a.data);
  return m;
}

std::vector<int64_t> load_int_vector(const std::string& path, const std::string& arg) {
  NpyInt a = read_npy_int(path, arg);
  if (a.shape.size() != 1)
    throw InvalidInput(arg + " '" + path + "' has shape " + shape_string(a.shape) + "; valid: a 1-D array (B,)");
  return std::move(a.data);
}

void check_finite(const std::string& arg, const Matrix2D& m) {
  for (int64_t i = 0; i < m.rows * m.cols; ++i) {
    if (!std::isfinite(m.data[i])) {
      std::ostringstream os;
      os << arg << "[" << i / m.cols << "][" << i % m.cols << "] = " << m.data[i]
         << " is not finite; valid: finite values";
      throw InvalidInput(os.str());
    }
  }
}

void check_output_path(const std::string& arg, const std::string& path) {
  if (path.empty()) throw InvalidInput(arg + " is empty; valid: a file path");
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    throw InvalidInput(arg + " '" + path + "' is a folder; valid: a file path");
  // A device or FIFO is refused; through a symbolic link, the link's target is what is written.
  const std::string target = output_target(path, arg);
  const size_t slash = target.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : target.substr(0, slash));
  if (const std::string file = file_in_the_way(dir); !file.empty())
    throw InvalidInput(arg + " '" + path + "': " + file_in_the_way_text(file) + "; valid: a path in an existing folder");
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    throw InvalidInput(arg + " '" + path + "': folder '" + dir + "' does not exist; valid: a path in an existing folder");
  if (::access(dir.c_str(), W_OK) != 0)
    throw InvalidInput(arg + " '" + path + "': folder '" + dir + "' is not writable");
  // access() says yes to root everywhere, also in /proc or on a read-only mount: create (and remove) a probe file.
  const std::string probe = dir + "/.diffscope-probe-" + std::to_string(::getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0 && errno != EEXIST)
    throw InvalidInput(arg + " '" + path + "': folder '" + dir + "' is not writable (" + std::strerror(errno) + ")");
  if (fd >= 0) {
    ::close(fd);
    ::unlink(probe.c_str());
  }
}

std::string cli_flag(Arg a) {
  std::string f = std::string("--") + arg_id(a);
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::vector<float> allocate_floats(const std::string& what, double count) {
  // Refuse up front what cannot fit in physical memory or in this process's address-space limit (ulimit -v):
  // overcommit would let it fail later, or be killed, after the work.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_bytes = ::sysconf(_SC_PAGESIZE);
  const double bytes = 4.0 * count;
  const double memory_bytes = static_cast<double>(pages) * static_cast<double>(page_bytes);
  if (!(count >= 0) || (pages > 0 && page_bytes > 0 && bytes > memory_bytes))
    throw ResourceUnavailable(what + ": needs " + std::to_string(bytes / 1e9) + " GB, more than this machine's " +
                              std::to_string(memory_bytes / 1e9) + " GB of memory");
  struct rlimit lim {};
  if (::getrlimit(RLIMIT_AS, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && bytes > static_cast<double>(lim.rlim_cur))
    throw ResourceUnavailable(what + ": needs " + std::to_string(bytes / 1e9) + " GB, more than this process may " +
                              "allocate (ulimit -v: " + std::to_string(static_cast<double>(lim.rlim_cur) / 1e9) + " GB)");
  try {
    return std::vector<float>(static_cast<size_t>(count));
  } catch (const std::bad_alloc&) {
  } catch (const std::length_error&) {
  }
  throw ResourceUnavailable(what + ": out of memory allocating " + std::to_string(bytes / 1e9) + " GB");
}

Progress::Progress(std::string label, int64_t total)
    : Progress(std::move(label), total, stderr, ::isatty(STDERR_FILENO) == 1, [] { return Clock::now(); }) {}

Progress::Progress(std::string label, int64_t total, std::FILE* out, bool terminal,
                   std::function<Clock::time_point()> now)
    : m_label(std::move(label)), m_total(total), m_out(out), m_terminal(terminal), m_now(std::move(now)),
      m_start(m_now()), m_last(m_start) {}

Progress::~Progress() { clear(); }

void Progress::clear() {
  if (!m_shown) return;
  std::fprintf(m_out, "\r\033[K");  // carriage return, erase to the end of the line
  std::fflush(m_out);
  m_shown = false;
}

std::string duration_text(double seconds) {
  char b[48];
  if (!(seconds >= 0)) seconds = 0;
  if (seconds < 9.95) std::snprintf(b, sizeof b, "%.1f s", seconds);
  else if (seconds < 59.5) std::snprintf(b, sizeof b, "%.0f s", seconds);
  else if (seconds < 3600) {
    const long s = std::lround(seconds);
    std::snprintf(b, sizeof b, "%ld min %02ld s", s / 60, s % 60);
  } else {
    const long m = std::lround(seconds / 60);
    std::snprintf(b, sizeof b, "%ld h %02ld min", m / 60, m % 60);
  }
  return b;
}

void Progress::update(int64_t done) {
  const Clock::time_point now = m_now();
  const double elapsed = std::chrono::duration<double>(now - m_start).count();
  const double since_last = std::chrono::duration<double>(now - m_last).count();
  if (m_terminal ? elapsed < 1.0 || (m_shown && since_last < 0.1) : elapsed < 5.0 || since_last < 5.0) return;
  if (done >= m_total && !m_terminal) return;  // the command's final line says it
  m_last = now;
  done = std::clamp<int64_t>(done, 0, m_total);
  const int percent = m_total > 0 ? static_cast<int>(100 * done / m_total) : 100;
  const std::string eta = done > 0 ? "ETA " + duration_text(elapsed * double(m_total - done) / double(done)) : "ETA ?";
  std::fprintf(m_out, "%s%s: %lld/%lld (%d%%), %s, %s%s", m_terminal ? "\r\033[K" : "", m_label.c_str(),
               static_cast<long long>(done), static_cast<long long>(m_total), percent, duration_text(elapsed).c_str(),
               eta.c_str(), m_terminal ? "" : "\n");
  std::fflush(m_out);
  m_shown = m_terminal;
}

}  // namespace diffscope::cli
