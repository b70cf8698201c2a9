// module_util.cpp — see module_util.h.
#include "python/module_util.h"

#include <pybind11/numpy.h>
#include <unistd.h>

#include <atomic>
#include <climits>

#include "base/errors.h"
#include "python/cuda_arrays.h"

#ifdef DIFFSCOPE_HAVE_CUDA
#include "gpu/cuda_backend.h"
#endif

namespace py = pybind11;

namespace diffscope::python {

namespace {
std::atomic<pid_t> g_cuda_pid{0};  // the process that first used CUDA through this module; 0: none yet

std::string repr_text(const py::handle& v) {
  std::string r = py::repr(v);
  return r.size() > 80 ? r.substr(0, 77) + "..." : r;
}

// v as a Python int through __index__ (operator.index), or a null object for a bool, numpy.bool_ or a value
// without __index__ (a float, a str).
py::object as_index(const py::handle& v) {
  if (PyBool_Check(v.ptr()) || py::isinstance(v, py::module_::import("numpy").attr("bool_"))) return py::object();
  PyObject* i = PyNumber_Index(v.ptr());
  if (!i) {
    PyErr_Clear();
    return py::object();
  }
  return py::reinterpret_steal<py::object>(i);
}

}  // namespace

void note_cuda_process() {
  pid_t none = 0;
  g_cuda_pid.compare_exchange_strong(none, getpid());
}

bool cuda_forked() {
  const pid_t p = g_cuda_pid.load();
  return p != 0 && p != getpid();
}

void check_cuda_process(const std::string& what) {
  if (cuda_forked())
    throw ResourceUnavailable(what + ": this process is a fork of process " + std::to_string(g_cuda_pid.load()) +
                              ", which used CUDA, and a CUDA context does not cross fork(); use backend = 'cpu' "
                              "here, or start the workers with multiprocessing's 'spawn' or 'forkserver' method");
}

Backends::~Backends() {
  if (cuda_forked()) (void)m_cuda.release();  // the parent's context: freeing it here would call into CUDA
}

int64_t int_arg(const py::handle& v, const char* arg, IntRange r, const std::string& valid) {
  const py::object i = as_index(v);
  if (!i) throw InvalidInput(std::string(arg) + " = " + repr_text(v) + " is not an int; valid: " + valid);
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow != 0 || !r.contains(x)) throw_out_of_range(arg, py::str(i), r);
  return x;
}

uint64_t seed_arg(const py::handle& v) {
  const std::string valid = "; valid: an integer in [0, 18446744073709551615]";
  const py::object i = as_index(v);
  if (!i) throw InvalidInput("seed = " + repr_text(v) + " is not an int" + valid);
  const unsigned long long x = PyLong_AsUnsignedLongLong(i.ptr());
  if (x == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    throw InvalidInput("seed = " + std::string(py::str(i)) + " is out of range" + valid);
  }
  return x;
}

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
  check_cuda_process("backend = 'cuda'");
  if (!m_cuda) {
    note_cuda_process();
    try {
      m_cuda = make_cuda_backend();
    } catch (const ResourceUnavailable& e) {
      throw ResourceUnavailable(std::string("backend = 'cuda': ") + e.what() + "; use backend = 'cpu'");
    }
  }
  return static_cast<CudaBackend&>(*m_cuda);
}

bool cuda_available() {
  if (cuda_forked()) return false;
  note_cuda_process();
  return cuda_device_available();
}
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

char dtype_kind(const py::dtype& dt) { return dt.attr("kind").cast<std::string>().at(0); }

py::ssize_t dtype_itemsize(const py::dtype& dt) { return dt.attr("itemsize").cast<py::ssize_t>(); }

std::vector<int64_t> int_vector(const py::handle& v, const char* arg, int64_t B, IntRange r) {
  const std::string valid = "an int or B = " + std::to_string(B) + " ints in [" + std::to_string(r.lo) + ", " +
                            std::to_string(r.hi) + "]";
  if (!py::isinstance<py::array>(v) && py::hasattr(v, "__index__"))  // an int, a numpy integer scalar (not a bool)
    return std::vector<int64_t>(B, int_arg(v, arg, r, valid));
  py::array raw;
  try {
    raw = py::array::ensure(v);  // numpy.asarray: no cast yet
  } catch (const py::error_already_set&) {
  }
  const char kind = raw ? dtype_kind(raw.dtype()) : '?';
  if (!raw || (kind != 'i' && kind != 'u') || raw.ndim() > 1)
    throw InvalidInput(std::string(arg) + " = " + repr_text(v) +
                       (raw ? " (dtype " + std::string(py::str(py::handle(raw.dtype()))) + ")" : std::string()) +
                       " is not an int or a 1-D integer array; valid: " + valid);
  if (raw.ndim() == 0) return std::vector<int64_t>(B, int_arg(raw.attr("item")(), arg, r, valid));
  if (raw.shape(0) != B)
    throw InvalidInput(std::string(arg) + " has " + std::to_string(raw.shape(0)) + " entries but x has " +
                       std::to_string(B) + " rows; valid: one t_start per row");
  std::vector<int64_t> out(static_cast<size_t>(B));
  if (kind == 'u') {  // range-checked as uint64 (a lossless cast), then narrowed
    const auto a = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>::ensure(raw);
    for (int64_t b = 0; b < B; ++b) {
      const uint64_t u = a.data()[b];
      if (u > static_cast<uint64_t>(r.hi) || static_cast<int64_t>(u) < r.lo)
        throw_out_of_range(std::string(arg) + "[" + std::to_string(b) + "]", std::to_string(u), r);
      out[static_cast<size_t>(b)] = static_cast<int64_t>(u);
    }
  } else {
    const auto a = py::array_t<int64_t, py::array::c_style | py::array::forcecast>::ensure(raw);
    for (int64_t b = 0; b < B; ++b) {
      if (!r.contains(a.data()[b]))
        throw_out_of_range(std::string(arg) + "[" + std::to_string(b) + "]", std::to_string(a.data()[b]), r);
      out[static_cast<size_t>(b)] = a.data()[b];
    }
  }
  return out;
}

bool is_cuda_array(const py::handle& x) {
  if (py::hasattr(x, "__cuda_array_interface__")) return true;
  if (!py::hasattr(x, "__dlpack_device__")) return false;
  const py::tuple d = x.attr("__dlpack_device__")();
  return d.size() >= 1 && d[0].cast<int>() == 2;  // kDLCUDA
}

int64_t stream_arg(const py::handle& stream) {
  if (stream.is_none()) return -1;
  try {
    return int_arg(stream, "stream", {0, INT64_MAX}, "");
  } catch (const InvalidInput&) {
    throw InvalidInput("stream = " + repr_text(stream) + " is not a stream; valid: None or a cudaStream_t as an int >= 0");
  }
}

std::optional<Family> prediction_type_arg(const py::handle& v) {
  if (v.is_none()) return std::nullopt;
  if (!py::isinstance<py::str>(v))
    throw InvalidInput("prediction_type = " + repr_text(v) + " is not a str; valid: None or one of " + family_choices());
  return parse_family(py::str(v), "prediction_type");
}

std::vector<double> sigmas_arg(const py::handle& v) {
  if (v.is_none()) return {};
  const std::string valid = "; valid: None or a 1-D sequence of real numbers, strictly decreasing, > 0 but the last";
  py::array raw = py::reinterpret_steal<py::array>(py::handle());  // null (py::array() would be an empty array)
  if (!py::isinstance<py::str>(v) && !py::isinstance<py::bytes>(v)) {
    try {
      raw = py::array::ensure(v);  // numpy.asarray: no cast yet
    } catch (const py::error_already_set&) {
    }
  }
  const char kind = raw ? dtype_kind(raw.dtype()) : '?';
  if (!raw || (kind != 'f' && kind != 'i' && kind != 'u') || raw.ndim() != 1)
    throw InvalidInput("sigmas = " + repr_text(v) +
                       (raw ? " (dtype " + std::string(py::str(py::handle(raw.dtype()))) + ", " +
                                  std::to_string(raw.ndim()) + " dimensions)"
                            : std::string()) +
                       " is not a 1-D sequence of numbers" + valid);
  const auto a = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(raw);
  if (a.size() == 0) throw InvalidInput("sigmas is empty; valid: None or at least one level");
  return std::vector<double>(a.data(), a.data() + a.size());
}

std::optional<double> real_arg(const py::handle& v, const char* arg) {
  if (v.is_none()) return std::nullopt;
  // numbers.Real: int, float, numpy's integer and float scalars; not bool, numpy.bool_, complex or str.
  const py::object real_type = py::module_::import("numbers").attr("Real");
  const bool real = !py::isinstance<py::bool_>(v) && PyObject_IsInstance(v.ptr(), real_type.ptr()) == 1;
  if (!real) throw InvalidInput(std::string(arg) + " = " + repr_text(v) + " is not a real number; valid: None or a number");
  return v.cast<double>();
}

Guidance guidance_arg(const py::handle& class_label, const py::handle& scale, const py::handle& interval,
                      const py::handle& rescale) {
  Guidance g;
  if (!class_label.is_none())
    g.class_label = static_cast<int>(int_arg(class_label, "class_label", {0, INT_MAX}, "None or an int in [0, C-1]"));
  g.scale = real_arg(scale, "guidance_scale").value_or(1.0);
  g.rescale = real_arg(rescale, "guidance_rescale").value_or(0.0);
  if (interval.is_none()) return g;
  const bool pair = py::isinstance<py::sequence>(interval) && !py::isinstance<py::str>(interval) && py::len(interval) == 2;
  if (!pair)
    throw InvalidInput("guidance_interval = " + repr_text(interval) +
                       " is not a pair; valid: None or (lo, hi) with 0 <= lo < hi (hi may be math.inf)");
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(interval);
  const auto lo = real_arg(seq[0], "guidance_interval[0]"), hi = real_arg(seq[1], "guidance_interval[1]");
  if (!lo || !hi)
    throw InvalidInput("guidance_interval = " + repr_text(interval) + " holds None; valid: (lo, hi), two numbers");
  g.sigma_lo = *lo;
  g.sigma_hi = *hi;
  return g;
}

// A path argument: a str or an os.PathLike (pathlib.Path), as text.
std::string path_text(const py::handle& v, const char* arg) {
  if (py::isinstance<py::str>(v) || py::hasattr(v, "__fspath__"))
    return py::str(py::module_::import("os").attr("fspath")(v));
  throw InvalidInput(std::string(arg) + " = " + std::string(py::repr(v)) +
                     " is not a path; valid: a str or an os.PathLike such as pathlib.Path");
}

}  // namespace diffscope::python
