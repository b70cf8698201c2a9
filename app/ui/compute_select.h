// compute_select.h — picks the compute path at run time (ARCHITECTURE.md): no CUDA device -> CPU; a CUDA
// device whose GL context is not NVIDIA's (interop registration fails) -> host staging; else interop.
#pragma once
#include <memory>
#include <string>

#include "core/compute_path.h"

namespace diffscope::ui {

// backend: "auto" | "cpu" | "cuda". `note` receives a line for the UI saying which path and why.
std::unique_ptr<ComputePath> select_compute_path(const std::string& backend, TrajectoryBufferTarget* target,
                                                 std::string* note);
// True when the build has the CUDA backend and a device is present.
bool cuda_available();

}  // namespace diffscope::ui
