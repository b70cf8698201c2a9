// kernel_bench.h — the kernel panel's measurements: the fused 3-layer MLP and the denoiser (per launch of
// S steps and per step) on each available backend, median / p10 / p90 of repeated runs (warm-up excluded),
// speedup against the CPU, max error against a float64 reference (diffusion/cpu_reference.h).
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "model/model.h"

namespace diffscope {

struct BenchRow {
  std::string what;     // "mlp3 fused", "denoiser per launch", ...
  std::string backend;  // "cpu", "cuda fused", "cuda unfused"
  double median_us = 0, p10_us = 0, p90_us = 0;
  double speedup = 0;   // CPU median / this median (same workload)
  double max_err = -1;  // error vs float64; < 0 when not measured
  bool rel_err = false; // true: relative Frobenius error (GPU bench rows); false: max |y - y_f64|
  std::string note;
};

struct BenchConfig {
  int mlp_B = 16, d0 = 48, d1 = 64, d2 = 40, d3 = 24;
  int den_B = 1024;     // denoiser batch
  int den_S = 10;       // steps per launch
  int reps = 15;
};

class KernelBench {
 public:
  // Runs every row for `model`'s network (blocks the UI for well under a second on the CPU at the defaults).
  void run(const DiffusionModel& model, const BenchConfig& cfg);
  const std::vector<BenchRow>& rows() const { return m_rows; }
  // Median history of the first denoiser row, one entry per run, for the plot.
  const std::vector<float>& history() const { return m_history; }
  std::string gpu_note() const;  // why GPU rows are missing, if they are
  // GPU rows from the CUDA layer's benchmark (bench::run_gpu_benchmarks, quick mode) whose workload name
  // contains `filter`; returns false (and gpu_note says why) without CUDA.
  bool run_gpu(const std::string& filter);
  bool gpu_available() const;
  // Where GPU rows come from (ComputeServices): a device check, the rows for a filter, why they are missing.
  void set_gpu(std::function<bool()> available, std::function<std::vector<BenchRow>(const std::string&)> rows,
               std::string missing_note);
  BenchConfig config;
  bool has_run() const { return !m_rows.empty(); }

 private:
  std::vector<BenchRow> m_rows;
  std::string m_gpu_error;
  std::function<bool()> m_gpu_available;
  std::function<std::vector<BenchRow>(const std::string&)> m_gpu_rows;
  std::string m_gpu_missing;
  std::vector<float> m_history;
};

}  // namespace diffscope
