// module_util.cpp — see module_util.h.
#include "python/module_util.h"

#include <pybind11/numpy.h>

#include "core/errors.h"
#include "python/cuda_arrays.h"

#ifdef DIFFSCOPE_HAVE_CUDA
#include "gpu/cuda_backend.h"
#endif

namespace py = pybind11;

namespace diffscope::python {

DenoiserBackend& Backends::get(const std::string& name) {
  if (name == "cpu") {
    if (!m_cpu) m_cpu = make_cpu_backend();
    return *m_cpu;
  }
  if (name == "cuda") {
#ifdef DIFFSCOPE_HAVE_CUDA
    return cuda();
#else
    throw ResourceUnavailable("backend = 'cuda': this build has no CUDA support; use backend = 'cpu'");
#endif
  }
  throw InvalidInput("backend = '" + name + "' is not a backend; valid: cpu, cuda");
}

#ifdef DIFFSCOPE_HAVE_CUDA
CudaBackend& Backends::cuda() {
  if (!m_cuda) {
    try {
      m_cuda = make_cuda_backend();
    } catch (const ResourceUnavailable& e) {
      throw ResourceUnavailable(std::string("backend = 'cuda': ") + e.what() + "; use backend = 'cpu'");
    }
  }
  return static_cast<CudaBackend&>(*m_cuda);
}

bool cuda_available() { return cuda_device_available(); }
#else
bool cuda_available() { return false; }
#endif

void check_backend_precision(const std::string& backend, Precision precision) {
  if (backend != "cuda" && precision != Precision::Fp32)
    throw InvalidInput(std::string("precision = '") + precision_name(precision) +
                       "' needs backend = 'cuda'; backend = '" + backend + "' computes fp32 only");
}

void check_out(const std::string& out, const std::string& backend) {
  if (out != "numpy" && out != "cuda")
    throw InvalidInput("out = '" + out + "' is not an output kind; valid: numpy, cuda");
  if (out == "cuda" && backend != "cuda")
    throw InvalidInput("out = 'cuda' needs backend = 'cuda'; backend = '" + backend + "' computes on the host");
}

std::vector<int64_t> int_vector(const py::handle& v, const char* arg, int64_t B) {
  if (py::isinstance<py::int_>(v) && !py::isinstance<py::bool_>(v)) return std::vector<int64_t>(B, v.cast<int64_t>());
  py::array_t<int64_t, py::array::c_style | py::array::forcecast> a;
  bool integer = false;  // a default array_t is an empty 1-D array, so "converted" needs its own flag
  try {
    py::array raw = py::array::ensure(v);
    integer = raw && (raw.dtype().kind() == 'i' || raw.dtype().kind() == 'u');
    if (integer) a = raw.cast<decltype(a)>();
  } catch (const py::error_already_set&) {
    integer = false;
  }
  if (integer && a.ndim() == 0) return std::vector<int64_t>(B, *a.data());  // a numpy integer scalar
  if (!integer || a.ndim() != 1)
    throw InvalidInput(std::string(arg) + " = " + std::string(py::repr(v)).substr(0, 80) +
                       " is not an int or a 1-D integer array; valid: an int or B = " + std::to_string(B) + " ints");
  if (a.shape(0) != B)
    throw InvalidInput(std::string(arg) + " has " + std::to_string(a.shape(0)) + " entries but x has " +
                       std::to_string(B) + " rows; valid: one t_start per row");
  return std::vector<int64_t>(a.data(), a.data() + B);
}

bool is_cuda_array(const py::handle& x) {
  if (py::hasattr(x, "__cuda_array_interface__")) return true;
  if (!py::hasattr(x, "__dlpack_device__")) return false;
  const py::tuple d = x.attr("__dlpack_device__")();
  return d.size() >= 1 && d[0].cast<int>() == 2;  // kDLCUDA
}

int64_t stream_arg(const py::handle& stream) {
  if (stream.is_none()) return -1;
  const long long v = py::isinstance<py::int_>(stream) ? PyLong_AsLongLong(stream.ptr()) : -1;
  if (v == -1 && PyErr_Occurred()) PyErr_Clear();
  if (v < 0)
    throw InvalidInput("stream = " + std::string(py::str(stream)) +
                       " is not a stream; valid: None or a cudaStream_t as an int >= 0");
  return v;
}

}  // namespace diffscope::python
