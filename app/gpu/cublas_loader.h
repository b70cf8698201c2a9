// cublas_loader.h — cuBLAS is loaded at run time (cublas_loader.cpp): why it could not be, if it could not.
#pragma once
#include <string>

namespace diffscope::gpu {

// "" once libcublas.so.<N> is loaded with every entry point the kernels use; else the reason (dlerror).
// The first call (or the first cuBLAS call) tries to load it.
std::string cublas_load_error();

}  // namespace diffscope::gpu
