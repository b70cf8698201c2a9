// compute_select.cpp — CPU, CUDA + interop or CUDA + staging, chosen at run time; the GPU bench rows.
#include "shell/compute_select.h"

#if defined(DIFFSCOPE_HAVE_CUDA)
#include "gpu/bench/bench_row.h"
#include "gpu/cuda_backend.h"
#include "gpu/interop_compute.h"
#endif

namespace diffscope::shell {

bool cuda_available() {
#if defined(DIFFSCOPE_HAVE_CUDA)
  return gpu::interop_cuda_device_available();
#else
  return false;
#endif
}

std::unique_ptr<ComputePath> select_compute_path(const std::string& backend, TrajectoryBufferTarget* target,
                                                 std::string* note) {
  std::string why;
  if (backend == "cpu") {
    why = "CPU backend chosen";
  } else {
#if defined(DIFFSCOPE_HAVE_CUDA)
    std::string gpu_why;
    if (auto p = gpu::make_cuda_compute_path(target, &gpu_why)) {
      if (note) *note = p->name() + ": " + gpu_why;
      return p;
    }
    why = gpu_why.empty() ? "no CUDA device" : gpu_why;
    why += ": CPU backend";
#else
    why = backend == "cuda" ? "this build has no CUDA backend: CPU backend" : "built without CUDA: CPU backend";
#endif
  }
  if (note) *note = "cpu: " + why;
  return make_cpu_compute_path(target);
}

ComputeServices make_compute_services() {
  ComputeServices s;
  s.make_path = select_compute_path;
  s.cuda_available = cuda_available;
  s.make_backend = [](bool gpu) -> std::unique_ptr<DenoiserBackend> {
#if defined(DIFFSCOPE_HAVE_CUDA)
    if (gpu) return gpu::make_cuda_backend();
#endif
    (void)gpu;
    return make_cpu_backend();
  };
#if defined(DIFFSCOPE_HAVE_CUDA)
  s.gpu_bench = [](const std::string& filter) {
    bench::Options o;
    o.quick = true;
    o.only = filter;
    std::vector<BenchRow> rows;
    for (const bench::Row& g : bench::run_gpu_benchmarks(o)) {
      BenchRow r;
      r.what = g.workload + " " + g.precision;
      r.backend = "cuda " + g.impl;
      r.median_us = g.median_us, r.p10_us = g.p10_us, r.p90_us = g.p90_us;
      r.max_err = g.rel_err;
      r.rel_err = true;
      r.note = g.path;
      rows.push_back(r);
    }
    return rows;
  };
  s.gpu_missing = "GPU rows need a CUDA device";
#endif
  return s;
}

}  // namespace diffscope::shell
