// pinned_buffer.h — PinnedBuffer: a move-only owner of page-locked host memory (cudaMallocHost), the staging
// area of device -> host copies that must be asynchronous (tiny-cuda-nn style RAII; GpuBuffer's host twin).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

#include "gpu/cuda_check.h"

namespace diffscope::gpu {

class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept : m_data(std::exchange(o.m_data, nullptr)), m_bytes(std::exchange(o.m_bytes, 0)) {}
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      free();
      m_data = std::exchange(o.m_data, nullptr);
      m_bytes = std::exchange(o.m_bytes, 0);
    }
    return *this;
  }
  ~PinnedBuffer() { free(); }

  // Grows only (contents lost when it grows); throws ResourceUnavailable when out of memory.
  void reserve(size_t bytes) {
    if (bytes <= m_bytes) return;
    free();
    CUDA_CHECK_THROW(cudaMallocHost(&m_data, bytes));
    m_bytes = bytes;
  }
  void free() {
    if (m_data) CUDA_CHECK_PRINT(cudaFreeHost(m_data));
    m_data = nullptr;
    m_bytes = 0;
  }

  char* data() { return static_cast<char*>(m_data); }
  size_t bytes() const { return m_bytes; }

 private:
  void* m_data = nullptr;
  size_t m_bytes = 0;
};

}  // namespace diffscope::gpu
