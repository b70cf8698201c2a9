// module_util.h — what the Python module's calls share: the backends by name (made once, kept), the
// argument checks with the CLI's messages under Python's argument names, and the `stream` argument.
#pragma once
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/backend.h"

namespace diffscope::gpu {
class CudaBackend;
}
namespace diffscope {
using gpu::CudaBackend;
}

namespace diffscope::python {

// The backends one Model (or the module's mlp3) uses, made on first use and kept: the CUDA backend keeps
// the weights resident on the device. Not thread-safe: callers hold their Model's mutex.
class Backends {
 public:
  // "cpu" or "cuda"; throws InvalidInput for another name, ResourceUnavailable when CUDA is unavailable.
  DenoiserBackend& get(const std::string& name);
#ifdef DIFFSCOPE_HAVE_CUDA
  CudaBackend& cuda();
#endif

 private:
  std::unique_ptr<DenoiserBackend> m_cpu, m_cuda;
};

// True when this build has CUDA and a device is usable.
bool cuda_available();

// precision tf32/bf16 need backend "cuda" (SEMANTICS §8): InvalidInput otherwise.
void check_backend_precision(const std::string& backend, Precision precision);
// out is "numpy" or "cuda" (which needs backend "cuda"): InvalidInput otherwise.
void check_out(const std::string& out, const std::string& backend);
// t_start as B int64s from a Python int (repeated B times) or a sequence/array of B ints: InvalidInput
// naming `arg` when it is neither or its length is not B.
std::vector<int64_t> int_vector(const pybind11::handle& v, const char* arg, int64_t B);
// The `stream` argument: None -> -1 (the backend's own stream, synchronised before returning), else a
// cudaStream_t as an int (0 = the legacy default stream; work is left in flight on it).
int64_t stream_arg(const pybind11::handle& stream);

}  // namespace diffscope::python
