// cuda_check.h — one macro that makes every CUDA runtime / cuBLAS call safe (tiny-cuda-nn style).
// CUDA_CHECK_THROW throws ResourceUnavailable for out-of-memory and "no device" errors (CLI exit 3) and
// std::runtime_error for everything else (exit 1), with file, line, the call's text and cudaGetErrorString
// (the classification is kernels/shared/cuda_error.h's, shared with the kernels' launchers).
// CUDA_CHECK_PRINT only prints: for destructors, which must not throw.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "kernels/shared/cuda_error.h"

namespace diffscope::gpu {

using kernels::is_resource_error;

// CUDA_CHECK_THROW's failure: kernels::throw_cuda_error with the call's text and where it was made.
[[noreturn]] inline void throw_cuda_error(cudaError_t e, const char* call, const char* file, int line) {
  kernels::throw_cuda_error(e, std::string(file) + ":" + std::to_string(line) + ": " + call);
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
