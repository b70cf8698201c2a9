// bench_row.h — one line of `diffscope bench` (plain C++, no CUDA: the CPU-only build prints the same rows).
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "kernels/plan/kernel_plan.h"

namespace diffscope::bench {

struct Options {
  bool json = false;
  bool quick = false;          // fewer repetitions (CI smoke runs)
  std::string model64;         // .safetensors for the dim-64 workloads (default: seeded random weights)
  std::string model2;          // .safetensors for the dim-2 workload
  std::string mlp3;            // .safetensors 3-layer MLP (default: seeded random 48-64-40-24)
  std::string only;            // run only workloads whose name contains this
  bool diag = false;           // latency diagnostics of the reference case instead of the workloads
  // The kernel options of the GPU rows (kernels/plan/kernel_plan.h), parsed by the CLI from --kernel-option.
  kernels::KernelOptions kernel_options;
  // Every workload name `selected` was asked about, in order (for the error when `--only` matches none).
  mutable std::vector<std::string> seen_workloads;
  // Called after each group of workloads with (groups done, groups in all): the CLI's progress line. May be empty.
  std::function<void(int done, int total)> progress;
};

struct Row {
  std::string workload;   // e.g. "denoise B=8 dim=64 H=256 S=16"
  std::string impl;       // "fused", "unfused (cuBLAS)", "cpu"
  std::string precision;  // fp32 | tf32 | bf16 | fp16
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

// The solver rows (docs/PERFORMANCE.md "Solver rows"): each solver's time per network evaluation on one step list (default
// spacing; heun: 2N - 1 evaluations), ddim's row first, so that every other row's note gives its ratio to it.
inline std::vector<std::string> bench_solvers() { return {"ddim", "dpmpp-2m", "dpmpp-2m-sde", "euler-ancestral", "heun"}; }
inline std::string solver_workload(const std::string& solver, int B, int dim, int H, int N) {
  return "solver " + solver + " B=" + std::to_string(B) + " dim=" + std::to_string(dim) + " H=" + std::to_string(H) +
         " N=" + std::to_string(N);
}
// Appends "; 1.03x ddim per evaluation" to the notes of rows[first..] that have a ddim row of their precision among
// them.
inline void note_ratio_to_ddim(std::vector<Row>& rows, size_t first) {
  for (size_t i = first; i < rows.size(); ++i)
    for (size_t j = first; j < rows.size(); ++j)
      if (rows[j].workload.rfind("solver ddim ", 0) == 0 && rows[j].precision == rows[i].precision &&
          rows[j].median_us > 0) {
        char b[64];
        std::snprintf(b, sizeof b, "; %.2fx ddim per evaluation", rows[i].median_us / rows[j].median_us);
        rows[i].note += b;
        break;
      }
}

// Appends "; 1.03x the epsilon row per evaluation" to the last row's note: the ratio to the epsilon row of
// `solver` at the same precision among rows[first..] (the solver rows' family rows).
inline void note_ratio_to_epsilon(std::vector<Row>& rows, size_t first, const std::string& solver) {
  const std::string eps = "solver " + (solver == "flow-heun" ? std::string("heun") : solver) + " B=";
  for (size_t i = first; i + 1 < rows.size(); ++i)
    if (rows[i].workload.rfind(eps, 0) == 0 && rows[i].precision == rows.back().precision && rows[i].median_us > 0) {
      char b[80];
      std::snprintf(b, sizeof b, "; %.3fx the epsilon %s row per evaluation", rows.back().median_us / rows[i].median_us,
                    eps.substr(7, eps.size() - 10).c_str());
      rows.back().note += b;
      return;
    }
}

// GPU rows (app/gpu/bench/bench.cpp; CUDA builds only).
std::vector<Row> run_gpu_benchmarks(const Options& o);

}  // namespace diffscope::bench
