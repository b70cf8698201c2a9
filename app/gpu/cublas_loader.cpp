// cublas_loader.cpp — cuBLAS loaded at run time (dlopen) instead of linked: only the unfused baseline
// (kernels/baseline/unfused.cu, kept for comparison) calls it, and a binary linked against libcublas.so.N does not
// start at all where that library is missing (a machine without the CUDA toolkit, the .deb on plain Debian
// 12, which ships no CUDA 13), taking the CPU fallback down with it (README "Install": CUDA libraries).
// This file defines the four cuBLAS entry points the kernels use, with cublas_api.h's signatures; each
// loads libcublas.so.<major of the toolkit we build with> on first use and forwards to it. When it cannot
// be loaded, cublasCreate returns CUBLAS_STATUS_NOT_INITIALIZED and cublas_load_error() says why.
#include "gpu/cublas_loader.h"

#include <cublas_v2.h>
#include <dlfcn.h>

#include <mutex>
#include <string>

#ifndef DIFFSCOPE_CUBLAS_SONAME
#error "DIFFSCOPE_CUBLAS_SONAME (e.g. libcublas.so.13) is set by app/CMakeLists.txt"
#endif

namespace {

struct Cublas {
  void* lib = nullptr;
  std::string error;
  cublasStatus_t (*create)(cublasHandle_t*) = nullptr;
  cublasStatus_t (*destroy)(cublasHandle_t) = nullptr;
  cublasStatus_t (*set_stream)(cublasHandle_t, cudaStream_t) = nullptr;
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
};

template <typename F>
void bind(Cublas& c, F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(dlsym(c.lib, symbol));
  if (!fn && c.error.empty()) c.error = std::string(DIFFSCOPE_CUBLAS_SONAME " has no ") + symbol;
}

// The loaded library; first by its soname (ld.so.conf, LD_LIBRARY_PATH), then from the toolkit we were
// built with (a fallback for source builds whose toolkit is not on the loader's path).
const Cublas& cublas() {
  static Cublas c;
  static std::once_flag once;
  std::call_once(once, [] {
    c.lib = dlopen(DIFFSCOPE_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
#ifdef DIFFSCOPE_CUBLAS_FALLBACK_DIR
    if (!c.lib) c.lib = dlopen(DIFFSCOPE_CUBLAS_FALLBACK_DIR "/" DIFFSCOPE_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
#endif
    if (!c.lib) {
      const char* e = dlerror();
      c.error = std::string(DIFFSCOPE_CUBLAS_SONAME " could not be loaded (") + (e ? e : "unknown") +
                "); install the CUDA toolkit's cuBLAS for the unfused baseline";
      return;
    }
    bind(c, c.create, "cublasCreate_v2");
    bind(c, c.destroy, "cublasDestroy_v2");
    bind(c, c.set_stream, "cublasSetStream_v2");
    bind(c, c.gemm_ex, "cublasGemmEx");
  });
  return c;
}

bool ready() { return cublas().error.empty(); }

}  // namespace

namespace diffscope::gpu {
std::string cublas_load_error() { return cublas().error; }
}  // namespace diffscope::gpu

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  return ready() ? cublas().create(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  return ready() ? cublas().destroy(handle) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t stream) {
  return ready() ? cublas().set_stream(handle, stream) : CUBLAS_STATUS_NOT_INITIALIZED;
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n,
                            int k, const void* alpha, const void* A, cudaDataType Atype, int lda, const void* B,
                            cudaDataType Btype, int ldb, const void* beta, void* C, cudaDataType Ctype, int ldc,
                            cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  if (!ready()) return CUBLAS_STATUS_NOT_INITIALIZED;
  return cublas().gemm_ex(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype, ldc,
                          computeType, algo);
}

}  // extern "C"
