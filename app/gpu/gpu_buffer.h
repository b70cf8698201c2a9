// gpu_buffer.h — GpuBuffer<T>: a move-only owner of device memory (tiny-cuda-nn's GPUMemory). Copies are
// explicit (copy_from_host / copy_to_host / clone_from) to prevent performance accidents.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "gpu/cuda_check.h"

namespace diffscope::gpu {

template <class T>
class GpuBuffer {
 public:
  GpuBuffer() = default;
  explicit GpuBuffer(size_t n) { resize(n); }
  GpuBuffer(const GpuBuffer&) = delete;
  GpuBuffer& operator=(const GpuBuffer&) = delete;
  GpuBuffer(GpuBuffer&& o) noexcept : m_data(std::exchange(o.m_data, nullptr)), m_size(std::exchange(o.m_size, 0)) {}
  GpuBuffer& operator=(GpuBuffer&& o) noexcept {
    if (this != &o) {
      free();
      m_data = std::exchange(o.m_data, nullptr);
      m_size = std::exchange(o.m_size, 0);
    }
    return *this;
  }
  ~GpuBuffer() { free(); }

  // Reallocates (contents lost) when n differs from size(); throws ResourceUnavailable when out of memory.
  void resize(size_t n) {
    if (n == m_size) return;
    free();
    if (n > 0) CUDA_CHECK_THROW(cudaMalloc(reinterpret_cast<void**>(&m_data), n * sizeof(T)));
    m_size = n;
  }
  // Grows only.
  void reserve(size_t n) {
    if (n > m_size) resize(n);
  }
  void free() {
    if (m_data) CUDA_CHECK_PRINT(cudaFree(m_data));
    m_data = nullptr;
    m_size = 0;
  }

  void copy_from_host(const T* src, size_t n, cudaStream_t s = nullptr) {
    reserve(n);
    if (n) CUDA_CHECK_THROW(cudaMemcpyAsync(m_data, src, n * sizeof(T), cudaMemcpyHostToDevice, s));
  }
  void copy_from_host(const std::vector<T>& v, cudaStream_t s = nullptr) { copy_from_host(v.data(), v.size(), s); }
  void copy_to_host(T* dst, size_t n, cudaStream_t s = nullptr) const {
    if (n) CUDA_CHECK_THROW(cudaMemcpyAsync(dst, m_data, n * sizeof(T), cudaMemcpyDeviceToHost, s));
  }

  T* data() { return m_data; }
  const T* data() const { return m_data; }
  size_t size() const { return m_size; }
  size_t bytes() const { return m_size * sizeof(T); }

 private:
  T* m_data = nullptr;
  size_t m_size = 0;
};

// RAII stream and event.
class CudaStream {
 public:
  CudaStream() { CUDA_CHECK_THROW(cudaStreamCreateWithFlags(&m_s, cudaStreamNonBlocking)); }
  ~CudaStream() {
    if (m_s) CUDA_CHECK_PRINT(cudaStreamDestroy(m_s));
  }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  cudaStream_t get() const { return m_s; }

 private:
  cudaStream_t m_s = nullptr;
};

class CudaEvent {
 public:
  // flags: cudaEventCreateWithFlags' (cudaEventDisableTiming for an event that only orders streams)
  explicit CudaEvent(unsigned flags = cudaEventDefault) { CUDA_CHECK_THROW(cudaEventCreateWithFlags(&m_e, flags)); }
  ~CudaEvent() {
    if (m_e) CUDA_CHECK_PRINT(cudaEventDestroy(m_e));
  }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return m_e; }

 private:
  cudaEvent_t m_e = nullptr;
};

}  // namespace diffscope::gpu
