// cuda_error.h — how a failed CUDA runtime call becomes an exception, for kernels/ and app/gpu alike
// (app/gpu/cuda_check.h wraps it in CUDA_CHECK_THROW). Out of memory and "no usable device" throw
// ResourceUnavailable (CLI exit 3, SEMANTICS §9); every other error std::runtime_error (exit 1).
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>

#include "base/errors.h"

namespace diffscope::kernels {

// The errors that mean "the device or its memory is not available", not a bug.
inline bool is_resource_error(cudaError_t e) {
  return e == cudaErrorMemoryAllocation || e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ||
         e == cudaErrorDevicesUnavailable || e == cudaErrorInvalidDevice;
}

// Throws for `e` (!= cudaSuccess); `what` names the call. Clears the thread's last error first: a failed call
// also leaves its error there, and the next launch check (cudaGetLastError) would report this old failure
// (seen: a failed cudaMalloc failed the next kernel launch).
[[noreturn]] inline void throw_cuda_error(cudaError_t e, const std::string& what) {
  (void)cudaGetLastError();
  std::string msg = what + " failed: " + cudaGetErrorString(e);
  if (e == cudaErrorMemoryAllocation) msg = "out of GPU memory (" + msg + ")";
  if (is_resource_error(e)) throw ResourceUnavailable(msg);
  throw std::runtime_error(msg);
}

inline void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw_cuda_error(e, what);
}

// The one checked cudaFuncSetAttribute of the kernels: sets `attr` of `kernel` to `value`, throws as above.
template <class Kernel>
void set_kernel_attribute(Kernel* kernel, cudaFuncAttribute attr, int value) {
  check_cuda(cudaFuncSetAttribute(kernel, attr, value), "cudaFuncSetAttribute");
}

// Opts `kernel` in to `bytes` of dynamic shared memory (needed above 48 KB; harmless below).
template <class Kernel>
void set_max_dynamic_smem(Kernel* kernel, size_t bytes) {
  set_kernel_attribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes));
}

}  // namespace diffscope::kernels
