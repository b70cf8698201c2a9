// cublas_handle.h — CublasHandle: a move-free owner of one cuBLAS handle, created on first use and destroyed
// with its owner (tiny-cuda-nn style RAII). cuBLAS is loaded at run time (gpu/cublas_loader.h), so only the
// unfused baseline, the one user, needs it installed.
#pragma once
#include <cublas_v2.h>

#include <cstdio>
#include <string>

#include "base/errors.h"
#include "gpu/cublas_loader.h"

namespace diffscope::gpu {

class CublasHandle {
 public:
  CublasHandle() = default;
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  ~CublasHandle() {
    if (m_h && cublasDestroy(m_h) != CUBLAS_STATUS_SUCCESS) std::fprintf(stderr, "cublasDestroy failed\n");
  }

  // The handle, created on the first call. Throws ResourceUnavailable (naming `user` and why: the library
  // missing, or its initialisation failing) when cuBLAS cannot be used.
  cublasHandle_t get(const char* user) {
    if (!m_h && cublasCreate(&m_h) != CUBLAS_STATUS_SUCCESS) {
      m_h = nullptr;
      const std::string why = cublas_load_error();
      throw ResourceUnavailable(std::string(user) + " needs cuBLAS: " + (why.empty() ? "initialisation failed" : why));
    }
    return m_h;
  }

 private:
  cublasHandle_t m_h = nullptr;
};

}  // namespace diffscope::gpu
