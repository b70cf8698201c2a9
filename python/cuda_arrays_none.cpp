// cuda_arrays_none.cpp — cuda_arrays.h in a build without CUDA: CUDA arrays are recognised and refused.
#include "base/errors.h"
#include "python/cuda_arrays.h"

namespace py = pybind11;

namespace diffscope::python {

namespace {
[[noreturn]] void no_cuda() {
  throw ResourceUnavailable("a CUDA array: this build has no CUDA support; pass a numpy array");
}
}  // namespace

py::object sample_cuda(Backends&, std::mutex&, const DiffusionModel&, const StepTable&, int, uint64_t, bool, int,
                       Precision, const std::vector<int>&, int64_t) {
  throw ResourceUnavailable("out = 'cuda': this build has no CUDA support; use out = 'numpy'");
}
py::object denoise_cuda(Backends&, std::mutex&, const DiffusionModel&, const py::object&, const py::object&, int64_t,
                        const std::string&, Precision, int64_t) {
  no_cuda();
}
py::object mlp3_cuda(Backends&, std::mutex&, const Mlp3Weights&, const std::string&, const py::object&,
                     const std::string&, Precision, int64_t) {
  no_cuda();
}
void register_cuda_array(py::module_&) {}

}  // namespace diffscope::python
