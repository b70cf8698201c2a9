// graphics_mapping.h — RAII for CUDA's view of a GL buffer (instant-ngp's CUDAMapping): GraphicsRegistration
// owns a registered cudaGraphicsResource_t (unregistered with it); GraphicsMapping maps it on a stream for as
// long as it lives (unmapped with it) and gives the device pointer. The registration call itself needs GL
// types and stays in gpu/interop_compute.cpp, the one gpu file that includes GL (ARCHITECTURE.md "Layers").
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpu/cuda_check.h"

namespace diffscope::gpu {

class GraphicsRegistration {
 public:
  GraphicsRegistration() = default;
  // Takes ownership of `res`, registered by the caller for the GL buffer `gl_buffer`.
  GraphicsRegistration(cudaGraphicsResource_t res, unsigned gl_buffer) : m_res(res), m_buffer(gl_buffer) {}
  GraphicsRegistration(const GraphicsRegistration&) = delete;
  GraphicsRegistration& operator=(const GraphicsRegistration&) = delete;
  GraphicsRegistration(GraphicsRegistration&& o) noexcept
      : m_res(std::exchange(o.m_res, nullptr)), m_buffer(std::exchange(o.m_buffer, 0u)) {}
  GraphicsRegistration& operator=(GraphicsRegistration&& o) noexcept {
    if (this != &o) {
      reset();
      m_res = std::exchange(o.m_res, nullptr);
      m_buffer = std::exchange(o.m_buffer, 0u);
    }
    return *this;
  }
  ~GraphicsRegistration() { reset(); }

  void reset() {
    if (m_res) CUDA_CHECK_PRINT(cudaGraphicsUnregisterResource(m_res));
    m_res = nullptr;
    m_buffer = 0;
  }
  cudaGraphicsResource_t get() const { return m_res; }
  unsigned gl_buffer() const { return m_buffer; }  // 0 when nothing is registered
  explicit operator bool() const { return m_res != nullptr; }

 private:
  cudaGraphicsResource_t m_res = nullptr;
  unsigned m_buffer = 0;
};

class GraphicsMapping {
 public:
  // Maps `reg` on `stream` (throws as CUDA_CHECK_THROW); the GL side must not use the buffer until unmapped.
  GraphicsMapping(const GraphicsRegistration& reg, cudaStream_t stream) : m_res(reg.get()), m_stream(stream) {
    CUDA_CHECK_THROW(cudaGraphicsMapResources(1, &m_res, m_stream));
    if (const cudaError_t e = cudaGraphicsResourceGetMappedPointer(&m_ptr, &m_size, m_res); e != cudaSuccess) {
      CUDA_CHECK_PRINT(cudaGraphicsUnmapResources(1, &m_res, m_stream));
      throw_cuda_error(e, "cudaGraphicsResourceGetMappedPointer", __FILE__, __LINE__);
    }
  }
  GraphicsMapping(const GraphicsMapping&) = delete;
  GraphicsMapping& operator=(const GraphicsMapping&) = delete;
  // Unmaps, printing a failure (a destructor must not throw); unmap() is the checked way.
  ~GraphicsMapping() {
    if (m_res) CUDA_CHECK_PRINT(cudaGraphicsUnmapResources(1, &m_res, m_stream));
  }
  // Unmaps now; throws as CUDA_CHECK_THROW.
  void unmap() {
    cudaGraphicsResource_t r = std::exchange(m_res, nullptr);
    if (r) CUDA_CHECK_THROW(cudaGraphicsUnmapResources(1, &r, m_stream));
  }

  void* data() const { return m_ptr; }
  size_t bytes() const { return m_size; }

 private:
  cudaGraphicsResource_t m_res;
  cudaStream_t m_stream;
  void* m_ptr = nullptr;
  size_t m_size = 0;
};

}  // namespace diffscope::gpu
