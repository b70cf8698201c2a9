// compute_select.cpp — CPU, CUDA + interop or CUDA + staging, chosen at run time.
#include "ui/compute_select.h"

#if defined(DIFFSCOPE_HAVE_CUDA) && __has_include("gpu/interop_compute.h")
#include "gpu/interop_compute.h"
#define DIFFSCOPE_GUI_CUDA 1
#endif

namespace diffscope::ui {

bool cuda_available() {
#ifdef DIFFSCOPE_GUI_CUDA
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
#ifdef DIFFSCOPE_GUI_CUDA
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

}  // namespace diffscope::ui
