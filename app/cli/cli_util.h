// cli_util.h — helpers the CLI subcommands share: the backend by name, input arrays, output-path checks,
// allocation that fails as "resource unavailable", and progress on stderr when it is a terminal.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"

namespace CLI {
class App;
}

namespace diffscope::cli {

// `--threads N` on a subcommand that computes: the CPU backend's threads (core/cpu_threads.h).
void add_threads_option(CLI::App& sub);
// Applies the parsed subcommand's `--threads` (set_cpu_threads): InvalidInput (exit 2) outside [1, 1024]. Call
// after parsing, before any work.
void apply_threads_option(const CLI::App& app);

// "cpu" -> the CPU reference backend; "cuda" -> the CUDA backend (gpu/cuda_backend.h) when this build has
// CUDA, else throws ResourceUnavailable (exit 3). Any other name throws InvalidInput.
std::unique_ptr<DenoiserBackend> make_backend(const std::string& name);

// Refuses a precision the backend cannot compute (tf32/bf16 need cuda; SEMANTICS §8): InvalidInput.
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

// Before any work: `path`'s folder exists and is writable, and `path` is not a folder. InvalidInput else.
void check_output_path(const std::string& arg, const std::string& path);

// A float buffer of `count` elements (a double, so products of sizes cannot overflow). Throws
// ResourceUnavailable naming `what` and the size when it exceeds physical memory or the allocation fails.
std::vector<float> allocate_floats(const std::string& what, double count);

// "label: done/total" on stderr: rewritten in place on a terminal; otherwise one line every 5 s (a log).
class Progress {
 public:
  Progress(std::string label, int64_t total);
  ~Progress();
  bool terminal() const { return m_enabled; }
  void update(int64_t done);

 private:
  std::string m_label;
  int64_t m_total;
  bool m_enabled;  // stderr is a terminal
  bool m_printed = false;
  std::chrono::steady_clock::time_point m_start, m_last_line;
};

}  // namespace diffscope::cli
