// compute_select.h — the compute services of this build (session/compute_services.h), chosen at run time
// (docs/ARCHITECTURE.md): no CUDA device -> CPU; a CUDA device whose GL context is not NVIDIA's (interop
// registration fails) -> host staging; else interop. The kernel panel's GPU rows come from app/gpu/bench.
#pragma once
#include <memory>
#include <string>

#include "run/compute_path.h"
#include "session/compute_services.h"

namespace diffscope::shell {

// backend: "auto" | "cpu" | "cuda". `note` receives a line for the UI saying which path and why.
std::unique_ptr<ComputePath> select_compute_path(const std::string& backend, TrajectoryBufferTarget* target,
                                                 std::string* note);
// True when the build has the CUDA backend and a device is present.
bool cuda_available();
// select_compute_path, cuda_available and the GPU bench rows (quick mode), as the app takes them.
ComputeServices make_compute_services();

}  // namespace diffscope::shell
