// interop_compute.h — the CUDA compute paths of the GUI (ARCHITECTURE.md "One frame, as data"): the trajectory
// GL buffer registered once with CUDA (re-registered only when reallocated) and mapped once per UI frame
// on the compute stream while CudaBackend::run_steps_device writes the frames straight into it
// ("cuda + interop"); or, when the GL context is not NVIDIA's (Mesa under Xvfb, another GPU) and
// registration fails, device frames copied to pinned host memory and uploaded with glBufferSubData
// ("cuda + host staging").
#pragma once
#include <memory>
#include <string>

#include "run/compute_path.h"

namespace diffscope::gpu {

// True when a CUDA device is usable.
bool interop_cuda_device_available();

// nullptr (with `why`) when there is no CUDA device; otherwise the interop path when the current GL
// context can share buffers with the CUDA device, else the staging path; `why` says which and why.
// Needs the GL context current (it queries cudaGLGetDevices).
std::unique_ptr<ComputePath> make_cuda_compute_path(TrajectoryBufferTarget* target, std::string* why);

}  // namespace diffscope::gpu
