// module_util.h — what the Python module's calls share: the backends by name (made once, kept), the
// argument checks with the CLI's messages under Python's argument names, and the `stream` argument.
#pragma once
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/ranges.h"
#include "diffusion/guidance.h"
#include "model/family.h"
#include "run/backend.h"

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
  Backends() = default;
  Backends(const Backends&) = delete;
  Backends& operator=(const Backends&) = delete;
  // In a forked child the CUDA backend (the parent's context) is left alone, not freed: see cuda_forked().
  ~Backends();
  // "cpu" or "cuda"; throws InvalidInput for another name, ResourceUnavailable when CUDA is unavailable.
  DenoiserBackend& get(const std::string& name);
#ifdef DIFFSCOPE_HAVE_CUDA
  CudaBackend& cuda();
#endif

 private:
  std::unique_ptr<DenoiserBackend> m_cpu, m_cuda;
};

// True when this build has CUDA and a device is usable; false in a process forked from one that used CUDA
// through this module (without touching CUDA there).
bool cuda_available();

// CUDA and fork(): a CUDA context does not cross fork(), and a child that calls the CUDA runtime of its parent's
// context gets errors or hangs. The module records the process that first uses CUDA (note_cuda_process, called
// before every first CUDA call); in a process forked from it, cuda_forked() is true, check_cuda_process refuses
// every CUDA call with ResourceUnavailable (RuntimeError) naming `what` and the way out (backend = 'cpu', or the
// 'spawn' start method), and the parent's device memory is never freed there. The CPU backend works in the child.
void note_cuda_process();
bool cuda_forked();
void check_cuda_process(const std::string& what);

// An integer argument: anything with __index__ (int, numpy integers; not bool or numpy.bool_), checked against r.
// InvalidInput "<arg> = <repr> is not an int; valid: <valid>" for a non-integer, and "<arg> = <value> is out of
// range; valid: [lo, hi]" with the value as given (also beyond 64 bits).
int64_t int_arg(const pybind11::handle& v, const char* arg, IntRange r, const std::string& valid);
// A seed (SEMANTICS §7): an integer (as int_arg) in [0, 2^64-1], as `--seed`.
uint64_t seed_arg(const pybind11::handle& v);

// A numpy dtype's kind ('f', 'i', 'u', ...) and item size in bytes, read through Python's attributes: pybind11
// 2.10's dtype::itemsize() reads NumPy 1's C struct, whose item size moved in NumPy 2.
char dtype_kind(const pybind11::dtype& dt);
pybind11::ssize_t dtype_itemsize(const pybind11::dtype& dt);

// precision tf32/bf16/fp16 need backend "cuda" (SEMANTICS §8): InvalidInput otherwise.
void check_backend_precision(const std::string& backend, Precision precision);
// out is "numpy" or "cuda" (which needs backend "cuda"): InvalidInput otherwise.
void check_out(const std::string& out, const std::string& backend);
// t_start as B int64s from an integer (int_arg's kinds, repeated B times) or a 1-D sequence/array of B integers
// (numpy dtype kinds i and u; bool, float, complex, string and object arrays are refused before any cast, naming
// the dtype), each in r: InvalidInput naming `arg`, the index and the value as given (a uint64 above 2^63-1 too).
std::vector<int64_t> int_vector(const pybind11::handle& v, const char* arg, int64_t B, IntRange r);
// Model families (SEMANTICS §2, §3): prediction_type None -> unset, else a family name (parse_family); sigmas None
// -> empty, else a non-empty 1-D sequence or array of real numbers (int or float dtypes; bool, complex, strings
// refused before any cast); real_arg (flow_shift, flow_mu): None -> unset, else a real number (int or float, not
// bool). ValueError (InvalidInput) naming the keyword and the value; the values' ranges are plan_run's
// (check_sample_request, run/run_plan.h).
std::optional<Family> prediction_type_arg(const pybind11::handle& v);
std::vector<double> sigmas_arg(const pybind11::handle& v);
std::optional<double> real_arg(const pybind11::handle& v, const char* arg);
// Guidance (SEMANTICS §12): class_label None (the null class) or an int >= 0; guidance_scale and guidance_rescale
// real numbers (real_arg); guidance_interval None or a pair (lo, hi) of real numbers (hi may be math.inf).
// ValueError naming the keyword; the ranges against the model are plan_run's (check_guidance).
Guidance guidance_arg(const pybind11::handle& class_label, const pybind11::handle& scale,
                      const pybind11::handle& interval, const pybind11::handle& rescale);
// A path argument: a str or an os.PathLike (pathlib.Path), as text; InvalidInput naming `arg` otherwise.
std::string path_text(const pybind11::handle& v, const char* arg);

// The `stream` argument: None -> -1 (the backend's own stream, synchronised before returning), else a
// cudaStream_t as an int (0 = the legacy default stream; work is left in flight on it).
int64_t stream_arg(const pybind11::handle& stream);

}  // namespace diffscope::python
