// cli_util.h — helpers the CLI subcommands share: the backend by name, input arrays, output-path checks,
// allocation that fails as "resource unavailable", and progress with the time left on stderr.
#pragma once
#include <chrono>
#include <cstdio>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/arg_error.h"
#include "run/backend.h"

namespace CLI {
class App;
}

namespace diffscope::cli {

// `--threads N` on a subcommand that computes: the CPU backend's threads (platform/cpu_threads.h).
void add_threads_option(CLI::App& sub);
// Applies the parsed subcommand's `--threads` (set_cpu_threads): InvalidInput (exit 2) outside [1, 1024]. Call
// after parsing, before any work.
void apply_threads_option(const CLI::App& app);

// "cpu" -> the CPU reference backend; "cuda" -> the CUDA backend (gpu/cuda_backend.h) when this build has
// CUDA, else throws ResourceUnavailable (exit 3). Any other name throws InvalidInput.
std::unique_ptr<DenoiserBackend> make_backend(const std::string& name);

// Refuses a precision the backend cannot compute (tf32/bf16/fp16 need cuda; SEMANTICS §8): InvalidInput.
void check_backend_precision(const std::string& backend, Precision precision);

// A (rows, cols) float32 array read from .npy (float32 or float64 on disk, SEMANTICS §6).
struct Matrix2D {
  int64_t rows = 0, cols = 0;
  std::vector<float> data;  // row-major
};

// Reads a 2-D float array; throws InvalidInput naming `arg` if unreadable or not 2-D with at least one row.
Matrix2D load_matrix(const std::string& path, const std::string& arg);
// Reads a 1-D int64/int32 array; throws InvalidInput naming `arg` if unreadable or not 1-D.
std::vector<int64_t> load_int_vector(const std::string& path, const std::string& arg);
// Throws InvalidInput naming `arg`, the row and column of the first NaN/Inf.
void check_finite(const std::string& arg, const Matrix2D& m);

// The CLI's flag of an argument id (base/arg_error.h): t_start -> "--t-start".
std::string cli_flag(Arg a);

// Before any work: `path`'s folder exists and is writable, and `path` is not a folder. InvalidInput else.
void check_output_path(const std::string& arg, const std::string& path);

// A float buffer of `count` elements (a double, so products of sizes cannot overflow). Throws
// ResourceUnavailable naming `what` and the size when it exceeds physical memory or the allocation fails.
std::vector<float> allocate_floats(const std::string& what, double count);

// Progress of long work on stderr with the time left, one printer for every command (sample steps, video
// frames, bench rows, denoise rows). On a terminal: one line rewritten in place ("label: 40/100 (40%), 2.0 s,
// ETA 3.0 s"), shown once the work has taken a second (short runs print nothing), at most ten times a second,
// and cleared at the end (the command's final line reports the whole time). Otherwise (a pipe, a log): a whole
// line every 5 s once the work has taken 5 s, never a carriage return, nothing for shorter work.
class Progress {
 public:
  using Clock = std::chrono::steady_clock;
  Progress(std::string label, int64_t total);
  // For the tests: where it prints, whether that is a terminal, and the clock.
  Progress(std::string label, int64_t total, std::FILE* out, bool terminal, std::function<Clock::time_point()> now);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  bool terminal() const { return m_terminal; }
  void update(int64_t done);
  void set_total(int64_t total) { m_total = total; }
  // The words before the count (e.g. train's running loss), from the next line shown.
  void set_label(std::string label) { m_label = std::move(label); }
  // Clears the terminal line now (before other output); update() may show it again.
  void clear();

 private:
  std::string m_label;
  int64_t m_total;
  std::FILE* m_out;
  bool m_terminal;
  std::function<Clock::time_point()> m_now;
  bool m_shown = false;  // a terminal line is on screen
  Clock::time_point m_start, m_last;
};

// "0.4 s", "12 s", "3 min 05 s", "1 h 02 min": a duration for progress lines and final reports.
std::string duration_text(double seconds);

}  // namespace diffscope::cli
