// compute_path.h — where the GUI's trajectory is computed and how it reaches the GL buffer the renderer
// draws from (ARCHITECTURE.md "One frame, as data": interop, host staging, CPU-only). Plain interfaces: no GL,
// no CUDA here; render/ implements TrajectoryBufferTarget, run/ the CPU path, gpu/ the CUDA paths.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "diffusion/step_table.h"
#include "model/model.h"
#include "run/backend.h"
#include "run/trajectory_store.h"

namespace diffscope {

// The GL buffer holding the trajectory slots (n_slots, B, dim) float32. Implemented by render/.
class TrajectoryBufferTarget {
 public:
  virtual ~TrajectoryBufferTarget() = default;
  virtual unsigned gl_buffer() const = 0;              // GL name, for CUDA registration
  virtual size_t size_bytes() const = 0;
  // Reallocates to `bytes` (contents undefined). A registered CUDA resource must be unregistered first.
  virtual void resize(size_t bytes) = 0;
  virtual void upload(size_t offset_bytes, size_t bytes, const void* data) = 0;
  virtual void download(size_t offset_bytes, size_t bytes, void* out) const = 0;
};

// Per-UI-frame figures of a compute path (milliseconds; 0 where they do not apply).
struct ComputeTimings {
  double steps_ms = 0;       // wall time of the launches of this frame (synchronised)
  double map_ms = 0;         // cudaGraphicsMapResources
  double unmap_ms = 0;       // cudaGraphicsUnmapResources
  double upload_ms = 0;      // host -> GL buffer (CPU path, staging)
  int steps = 0;             // steps computed this frame
};

// A frame of a run holding a value that is not finite (SEMANTICS §9): frame j (the state after step j, j >= 1)
// and the index of the value in it (row * dim + column); frame -1: none.
struct NonFiniteFrame {
  int frame = -1;
  int64_t index = -1;
  float value = 0;
};

// Runs the sampler and writes each kept frame into the trajectory buffer.
class ComputePath {
 public:
  virtual ~ComputePath() = default;
  virtual std::string name() const = 0;    // "cpu", "cuda + interop", "cuda + host staging"
  virtual std::string why() const = 0;     // why this path is active (shown in the UI)
  virtual std::string device() const = 0;  // e.g. "CPU (2 threads)", "NVIDIA H200"
  virtual bool is_gpu() const = 0;
  // Starts a run: resizes the target to layout.total_bytes() when needed, writes x0 (B, dim) as frame 0.
  virtual void begin(const DiffusionModel& model, const StepTable& table, const TrajectoryLayout& layout,
                     const float* x0, uint64_t seed, Precision precision) = 0;
  // Like begin() from pure start noise (SEMANTICS §7, step_key T) drawn where the path runs: the GPU paths
  // draw it on the device (no host fill, no upload). Returns false when the path has no such shortcut.
  virtual bool begin_from_noise(const DiffusionModel&, const StepTable&, const TrajectoryLayout&, uint64_t,
                                Precision) {
    return false;
  }
  // Steps [k_begin, k_end) of the table; writes the kept frames k_begin+1 .. k_end.
  virtual void advance(int k_begin, int k_end) = 0;
  // eps (or the predicted clean point when x0) of the network at pts (n, dim), timestep t: out (n, dim).
  virtual void field(const float* pts, int n, int t, bool x0, float* out) = 0;
  // Whether the path checks every step's output for values that are not finite as it computes it (the CPU path:
  // its samples are on the host anyway, the check costs O(B dim) beside the network's work). The GPU paths do
  // not: SamplingSession reads a run's newest frame back once when the run ends instead (SEMANTICS §9).
  virtual bool checks_finite() const { return false; }
  // With checks_finite(): the first frame computed since begin() holding a value that is not finite.
  virtual NonFiniteFrame first_nonfinite_frame() const { return {}; }
  // Called before GL draws from the target: nothing may stay mapped.
  virtual void before_draw() {}
  // Figures of the work since the last call; resets them.
  virtual ComputeTimings take_timings() = 0;
  // Memory in use on the whole device (MiB, cudaMemGetInfo: total - free); 0 for the CPU path. For long runs.
  virtual double device_memory_used_mb() const { return 0; }
};

// The CPU path (run/cpu_compute_path.cpp): the reference backend on the host, each kept frame uploaded with
// glBufferSubData.
std::unique_ptr<ComputePath> make_cpu_compute_path(TrajectoryBufferTarget* target);

}  // namespace diffscope
