// cuda_check.h — one macro that makes every CUDA runtime / cuBLAS call safe (tiny-cuda-nn style).
// CUDA_CHECK_THROW throws ResourceUnavailable for out-of-memory and "no device" errors (CLI exit 3) and
// std::runtime_error for everything else (exit 1), with file, line, the call's text and cudaGetErrorString.
// CUDA_CHECK_PRINT only prints: for destructors, which must not throw.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "core/errors.h"

namespace diffscope::gpu {

inline bool is_resource_error(cudaError_t e) {
  return e == cudaErrorMemoryAllocation || e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
         e == cudaErrorDevicesUnavailable || e == cudaErrorInvalidDevice;
}

[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  // A failed call also leaves its error as the thread's "last error"; clear it, or the next launch check
  // (cudaGetLastError) reports this old failure (seen: a failed cudaMalloc failed the next kernel launch).
  cudaGetLastError();
  std::string msg = std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                    cudaGetErrorString(e);
  if (e == cudaErrorMemoryAllocation) msg = "out of GPU memory (" + msg + ")";
  if (is_resource_error(e)) throw ResourceUnavailable(msg);
  throw std::runtime_error(msg);
}

}  // namespace diffscope::gpu

#define CUDA_CHECK_THROW(x)                                                                   \
  do {                                                                                        \
    cudaError_t ds_err_ = (x);                                                                \
    if (ds_err_ != cudaSuccess) ::diffscope::gpu::throw_cuda_error(ds_err_, #x, __FILE__, __LINE__); \
  } while (0)

#define CUDA_CHECK_PRINT(x)                                                                   \
  do {                                                                                        \
    cudaError_t ds_err_ = (x);                                                                \
    if (ds_err_ != cudaSuccess)                                                               \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(ds_err_)); \
  } while (0)

// After a kernel launch: the launch error (bad configuration, too much shared memory).
#define CUDA_CHECK_LAUNCH() CUDA_CHECK_THROW(cudaGetLastError())
