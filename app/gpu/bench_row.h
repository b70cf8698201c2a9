// bench_row.h — one line of `diffscope bench` (plain C++, no CUDA: the CPU-only build prints the same rows).
#pragma once
#include <string>
#include <vector>

namespace diffscope::bench {

struct Options {
  bool json = false;
  bool quick = false;          // fewer repetitions (CI smoke runs)
  std::string model64;         // .safetensors for the dim-64 workloads (default: seeded random weights)
  std::string model2;          // .safetensors for the dim-2 workload
  std::string mlp3;            // .safetensors 3-layer MLP (default: seeded random 48-64-40-24)
  std::string only;            // run only workloads whose name contains this
  bool diag = false;           // latency diagnostics of the reference case instead of the workloads
  // Every workload name `selected` was asked about, in order (for the error when `--only` matches none).
  mutable std::vector<std::string> seen_workloads;
};

struct Row {
  std::string workload;   // e.g. "denoise B=8 dim=64 H=256 S=16"
  std::string impl;       // "fused", "unfused (cuBLAS)", "cpu"
  std::string precision;  // fp32 | tf32 | bf16
  std::string path;       // kernel path / timing method
  double median_us = 0, p10_us = 0, p90_us = 0;
  int reps = 0;
  double achieved = 0;    // TFLOP/s (compute) or TB/s (memory)
  std::string unit;       // "TFLOP/s" | "TB/s"
  double ceiling = 0;     // the measured ceiling in the same unit (PERFORMANCE.md); 0: none (CPU rows)
  double floor_us = 0;    // the floor for this workload and precision; 0: none (CPU rows)
  double rel_err = -1;    // relative Frobenius error vs float64 (-1: not measured)
  std::string note;
};

// Whether `--only` selects the workload: no filter, or the workload's name contains it.
// Records the name in o.seen_workloads.
inline bool selected(const Options& o, const std::string& workload) {
  o.seen_workloads.push_back(workload);
  return o.only.empty() || workload.find(o.only) != std::string::npos;
}

// GPU rows (app/gpu/bench.cpp; CUDA builds only).
std::vector<Row> run_gpu_benchmarks(const Options& o);

}  // namespace diffscope::bench
