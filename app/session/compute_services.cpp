// compute_services.cpp — the CPU-only services (compute_services.h).
#include "session/compute_services.h"

namespace diffscope {

ComputeServices cpu_only_services() {
  ComputeServices s;
  s.make_path = [](const std::string& backend, TrajectoryBufferTarget* target, std::string* note) {
    if (note)
      *note = backend == "cpu" ? "cpu: CPU backend chosen" : "cpu: built without CUDA: CPU backend";
    return make_cpu_compute_path(target);
  };
  s.cuda_available = [] { return false; };
  s.make_backend = [](bool) { return make_cpu_backend(); };
  return s;
}

}  // namespace diffscope
