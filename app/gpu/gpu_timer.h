// gpu_timer.h — GpuTimer: CUDA-event timing of work enqueued on a stream (the GUI's kernel-timing panel, the
// benchmarks). start()/stop() enqueue events; elapsed_ms() waits for the stop event. Move-free, copy-free RAII.
#pragma once
#include <cuda_runtime.h>

#include "gpu/cuda_check.h"
#include "gpu/gpu_buffer.h"

namespace diffscope::gpu {

class GpuTimer {
 public:
  void start(cudaStream_t s) { CUDA_CHECK_THROW(cudaEventRecord(m_start.get(), s)); }
  void stop(cudaStream_t s) { CUDA_CHECK_THROW(cudaEventRecord(m_stop.get(), s)); }
  // Milliseconds between start and stop; blocks until the stop event has completed.
  float elapsed_ms() const {
    CUDA_CHECK_THROW(cudaEventSynchronize(m_stop.get()));
    float ms = 0.f;
    CUDA_CHECK_THROW(cudaEventElapsedTime(&ms, m_start.get(), m_stop.get()));
    return ms;
  }
  // True once the stop event has completed (non-blocking; for a frame loop that reads last frame's timing).
  bool ready() const { return cudaEventQuery(m_stop.get()) == cudaSuccess; }

 private:
  CudaEvent m_start, m_stop;
};

}  // namespace diffscope::gpu
