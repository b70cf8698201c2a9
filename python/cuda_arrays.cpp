// cuda_arrays.cpp — cuda_arrays.h with CUDA: DLPack (dlpack.h 0.6, Debian's libdlpack-dev) and
// __cuda_array_interface__ v3 (numba.readthedocs.io, "CUDA Array Interface (Version 3)") in and out.
#include "python/cuda_arrays.h"

#include <cuda_runtime.h>
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include <utility>

#include "base/errors.h"
#include "base/ranges.h"
#include "diffusion/input_checks.h"
#include "diffusion/sampling.h"
#include "gpu/cuda_backend.h"
#include "gpu/cuda_check.h"
#include "gpu/gpu_buffer.h"

namespace py = pybind11;

namespace diffscope::python {
namespace {

// A float32 C-contiguous array on the device, owned here.
struct CudaArray {
  CudaArray() = default;
  CudaArray(CudaArray&&) = default;
  CudaArray& operator=(CudaArray&&) = default;
  // In a forked child the memory is the parent's (module_util.h, cuda_forked): moved into a buffer that is never
  // freed, so that no CUDA call is made here.
  ~CudaArray() {
    if (cuda_forked()) (void)new gpu::GpuBuffer<float>(std::move(buf));
  }

  gpu::GpuBuffer<float> buf;
  std::vector<int64_t> shape;
  int device = 0;
  int64_t stream = -1;  // the stream its last writer ran on, -1 when that work is complete

  int64_t count() const {
    int64_t c = 1;
    for (int64_t s : shape) c *= s;
    return c;
  }
};

cudaStream_t as_stream(int64_t s) { return reinterpret_cast<cudaStream_t>(static_cast<intptr_t>(s)); }
// The interface's convention: 1 = the legacy default stream, 2 = per-thread default, else the handle.
cudaStream_t from_interface_stream(int64_t s) {
  return s == 1 ? cudaStreamLegacy : s == 2 ? cudaStreamPerThread : as_stream(s);
}
int64_t to_interface_stream(int64_t s) { return s == 0 ? 1 : s; }

// Work on `consumer` waits for what is already queued on `producer`.
void order_after(cudaStream_t producer, cudaStream_t consumer) {
  if (producer == consumer) return;
  const gpu::CudaEvent ev(cudaEventDisableTiming);
  CUDA_CHECK_THROW(cudaEventRecord(ev.get(), producer));
  CUDA_CHECK_THROW(cudaStreamWaitEvent(consumer, ev.get(), 0));
}

// A borrowed CUDA array: its pointer and shape; a DLPack tensor taken from a capsule is released at the end.
struct DeviceView {
  float* data = nullptr;
  int64_t rows = 0, cols = 0;
  int device = 0;
  DLManagedTensor* dl = nullptr;
  DeviceView() = default;
  DeviceView(const DeviceView&) = delete;
  ~DeviceView() {
    if (dl && dl->deleter) dl->deleter(dl);
  }
};

[[noreturn]] void bad_array(const char* arg, const std::string& why) {
  throw InvalidInput(std::string(arg) + " " + why + "; valid: a float32 C-contiguous CUDA array (rows, cols)");
}

// Borrows x's memory for work on `stream` (DLPack preferred, else __cuda_array_interface__ v3).
void view_of(const py::object& x, const char* arg, cudaStream_t stream, DeviceView& v) {
  if (py::hasattr(x, "__dlpack__")) {
    const int64_t s = stream == nullptr ? 1 : reinterpret_cast<intptr_t>(stream);
    py::capsule cap = x.attr("__dlpack__")(py::arg("stream") = s);
    auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap.ptr(), "dltensor"));
    if (!t) {
      PyErr_Clear();
      bad_array(arg, "gave no DLPack tensor");
    }
    PyCapsule_SetName(cap.ptr(), "used_dltensor");
    v.dl = t;
    const DLTensor& d = t->dl_tensor;
    if (d.device.device_type != kDLCUDA) bad_array(arg, "is not on a CUDA device");
    if (d.dtype.code != kDLFloat || d.dtype.bits != 32 || d.dtype.lanes != 1) bad_array(arg, "is not float32");
    if (d.ndim != 2) bad_array(arg, "has " + std::to_string(d.ndim) + " dimensions");
    if (d.strides && !(d.strides[1] == 1 && (d.strides[0] == d.shape[1] || d.shape[0] == 1)))
      bad_array(arg, "is not C-contiguous");
    v.data = reinterpret_cast<float*>(static_cast<char*>(d.data) + d.byte_offset);
    v.rows = d.shape[0];
    v.cols = d.shape[1];
    v.device = d.device.device_id;
    return;
  }
  const py::dict cai = x.attr("__cuda_array_interface__");
  if (cai["typestr"].cast<std::string>() != "<f4") bad_array(arg, "is not float32 (typestr <f4)");
  const py::tuple shape = cai["shape"];
  if (shape.size() != 2) bad_array(arg, "has " + std::to_string(shape.size()) + " dimensions");
  v.rows = shape[0].cast<int64_t>();
  v.cols = shape[1].cast<int64_t>();
  if (cai.contains("strides") && !cai["strides"].is_none()) {
    const py::tuple st = cai["strides"];
    if (st[1].cast<int64_t>() != 4 || (v.rows > 1 && st[0].cast<int64_t>() != 4 * v.cols))
      bad_array(arg, "is not C-contiguous");
  }
  const py::tuple data = cai["data"];
  if (data[1].cast<bool>()) bad_array(arg, "is read-only");
  v.data = reinterpret_cast<float*>(data[0].cast<uintptr_t>());
  cudaPointerAttributes attr{};
  if (v.data && cudaPointerGetAttributes(&attr, v.data) == cudaSuccess) v.device = attr.device;
  (void)cudaGetLastError();
  if (cai.contains("stream") && !cai["stream"].is_none())
    order_after(from_interface_stream(cai["stream"].cast<int64_t>()), stream);
}

void check_device(const DeviceView& v, const char* arg) {
  int dev = 0;
  CUDA_CHECK_THROW(cudaGetDevice(&dev));
  if (v.device != dev)
    throw InvalidInput(std::string(arg) + " is on CUDA device " + std::to_string(v.device) +
                       "; valid: the backend's device " + std::to_string(dev));
}

// The stream the work runs on: the backend's own (then synchronised) or the caller's.
cudaStream_t work_stream(CudaBackend& be, int64_t stream) { return stream < 0 ? be.stream() : as_stream(stream); }

void finish(cudaStream_t s, int64_t stream) {
  if (stream < 0) CUDA_CHECK_THROW(cudaStreamSynchronize(s));
}

// The CUDA backend and a view of the CUDA array x (B, cols) for work on the call's stream; x must be on
// the backend's device with 1 <= B <= 2^31-1.
CudaBackend& cuda_input(Backends& backends, const std::string& backend, const py::object& x, int64_t stream,
                        DeviceView& v) {
  if (backend != "cuda") throw InvalidInput("x is a CUDA array; valid with backend = 'cuda' only");
  CudaBackend& be = backends.cuda();
  view_of(x, "x", work_stream(be, stream), v);
  check_device(v, "x");
  if (v.rows < 1 || v.rows > INT32_MAX) throw InvalidInput("x has " + std::to_string(v.rows) + " rows; valid: [1, 2^31-1]");
  return be;
}

py::object wrap(CudaArray&& a) { return py::cast(std::move(a)); }

CudaArray new_cuda_array(std::vector<int64_t> shape, int64_t stream) {
  CudaArray a;
  a.shape = std::move(shape);
  a.buf.resize(static_cast<size_t>(a.count()));
  CUDA_CHECK_THROW(cudaGetDevice(&a.device));
  a.stream = stream;
  return a;
}

// __dlpack__: a capsule over the array's memory that keeps the CudaArray alive until the consumer's deleter.
struct DlExport {
  DLManagedTensor t{};
  std::vector<int64_t> shape;
  py::object owner;
};

py::capsule to_dlpack(py::object self, const py::object& consumer_stream) {
  check_cuda_process("CudaArray.__dlpack__");
  CudaArray& a = self.cast<CudaArray&>();
  if (a.stream >= 0) {
    if (consumer_stream.is_none())
      CUDA_CHECK_THROW(cudaStreamSynchronize(as_stream(a.stream)));
    else
      order_after(as_stream(a.stream), from_interface_stream(consumer_stream.cast<int64_t>()));
  }
  auto* e = new DlExport;
  e->shape = a.shape;
  e->owner = self;
  DLTensor& d = e->t.dl_tensor;
  d.data = a.buf.data();
  d.device = {kDLCUDA, a.device};
  d.ndim = static_cast<int32_t>(a.shape.size());
  d.dtype = {kDLFloat, 32, 1};
  d.shape = e->shape.data();
  d.strides = nullptr;
  d.byte_offset = 0;
  e->t.manager_ctx = e;
  e->t.deleter = [](DLManagedTensor* t) {
    py::gil_scoped_acquire gil;
    delete static_cast<DlExport*>(t->manager_ctx);
  };
  PyObject* cap = PyCapsule_New(&e->t, "dltensor", [](PyObject* c) {
    if (PyCapsule_IsValid(c, "dltensor")) {
      auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
      t->deleter(t);
    }
  });
  return py::reinterpret_steal<py::capsule>(cap);
}

}  // namespace

py::object sample_cuda(Backends& backends, std::mutex& mutex, const DiffusionModel& model, const StepTable& table,
                       int n, uint64_t seed, bool from_data, int t_start, Precision precision,
                       const std::vector<int>& frames, int64_t stream) {
  const int dim = model.net.dim, N = table.steps();
  const int64_t frame = static_cast<int64_t>(n) * dim;
  std::vector<float> start;
  if (from_data) {
    start.resize(static_cast<size_t>(frame));
    fill_start_from_data(model, t_start, seed, n, start.data());
  }
  CudaArray x, traj;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    CudaBackend& be = backends.cuda();
    const cudaStream_t s = work_stream(be, stream);
    x = new_cuda_array({n, dim}, stream);
    if (!frames.empty()) traj = new_cuda_array({static_cast<int64_t>(frames.size()), n, dim}, stream);
    be.set_model(model);
    be.set_step_table(table);
    order_after(be.stream(), s);
    if (from_data)
      CUDA_CHECK_THROW(cudaMemcpyAsync(x.buf.data(), start.data(), sizeof(float) * frame, cudaMemcpyHostToDevice, s));
    else
      be.start_noise_device(x.buf.data(), n, seed, s);
    if (frames.empty()) {
      be.run_steps_device(0, N, x.buf.data(), n, seed, nullptr, precision, s);
    } else {
      float* t = traj.buf.data();
      CUDA_CHECK_THROW(cudaMemcpyAsync(t, x.buf.data(), sizeof(float) * frame, cudaMemcpyDeviceToDevice, s));
      if (frames.size() == static_cast<size_t>(N) + 1) {
        be.run_steps_device(0, N, x.buf.data(), n, seed, t + frame, precision, s);
      } else {
        for (size_t f = 1; f < frames.size(); ++f) {
          be.run_steps_device(frames[f - 1], frames[f], x.buf.data(), n, seed, nullptr, precision, s);
          CUDA_CHECK_THROW(cudaMemcpyAsync(t + f * frame, x.buf.data(), sizeof(float) * frame,
                                           cudaMemcpyDeviceToDevice, s));
        }
      }
    }
    // The host start state must outlive its upload.
    if (from_data && stream >= 0) CUDA_CHECK_THROW(cudaStreamSynchronize(s));
    finish(s, stream);
  }
  if (frames.empty()) return wrap(std::move(x));
  py::object xo = wrap(std::move(x));
  return py::make_tuple(xo, wrap(std::move(traj)));
}

py::object denoise_cuda(Backends& backends, std::mutex& mutex, const DiffusionModel& model, const py::object& x,
                        const py::object& t_start_arg, int64_t steps, const std::string& backend,
                        Precision precision, int64_t stream) {
  DeviceView v;
  CudaBackend& be = cuda_input(backends, backend, x, stream, v);
  const cudaStream_t s = work_stream(be, stream);
  if (v.cols != model.net.dim)
    throw InvalidInput("x has width " + std::to_string(v.cols) + "; valid: the model's dim " +
                       std::to_string(model.net.dim));
  const std::vector<int64_t> t64 = int_vector(t_start_arg, "t_start", v.rows, t_start_range(model.schedule));
  std::vector<int32_t> t32(t64.size());
  for (size_t i = 0; i < t64.size(); ++i) {
    check_range("t_start[" + std::to_string(i) + "]", t64[i], t_start_range(model.schedule));
    t32[i] = static_cast<int32_t>(t64[i]);
  }
  check_range("steps", steps, {1, INT32_MAX});
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    gpu::GpuBuffer<int32_t> d_t;
    be.set_model(model);
    d_t.copy_from_host(t32, s);
    order_after(be.stream(), s);
    be.denoise_device(v.data, d_t.data(), static_cast<int>(v.rows), static_cast<int>(steps), nullptr, precision, s);
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));  // d_t and the host t32 are freed on return
  }
  return x;
}

py::object mlp3_cuda(Backends& backends, std::mutex& mutex, const Mlp3Weights& w, const std::string& weights,
                     const py::object& x, const std::string& backend, Precision precision, int64_t stream) {
  DeviceView v;
  CudaBackend& be = cuda_input(backends, backend, x, stream, v);
  const cudaStream_t s = work_stream(be, stream);
  if (v.cols != w.d0)
    throw InvalidInput("x has width " + std::to_string(v.cols) + " but '" + weights + "' takes " +
                       std::to_string(w.d0) + " inputs; valid: x of shape (B, " + std::to_string(w.d0) + ")");
  CudaArray y;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(mutex);
    y = new_cuda_array({v.rows, w.d3}, stream);
    be.set_mlp3(w);
    order_after(be.stream(), s);
    be.mlp3_device(v.data, static_cast<int>(v.rows), y.buf.data(), precision, s);
    finish(s, stream);
  }
  return wrap(std::move(y));
}

void register_cuda_array(py::module_& m) {
  py::class_<CudaArray>(m, "CudaArray",
                        "A float32 C-contiguous array in CUDA device memory made by diffscope; exposes\n"
                        "__cuda_array_interface__ (v3) and DLPack (torch.from_dlpack, cupy.from_dlpack).")
      .def_property_readonly("shape", [](const CudaArray& a) {
        py::tuple t(a.shape.size());
        for (size_t i = 0; i < a.shape.size(); ++i) t[i] = a.shape[i];
        return t;
      }, "The shape, a tuple of ints: (rows, cols).")
      .def_property_readonly("device", [](const CudaArray& a) { return a.device; }, "The CUDA device's ordinal.")
      .def_property_readonly("__cuda_array_interface__", [](const CudaArray& a) {
        py::dict d;
        py::tuple shape(a.shape.size());
        for (size_t i = 0; i < a.shape.size(); ++i) shape[i] = a.shape[i];
        d["shape"] = shape;
        d["typestr"] = "<f4";
        d["data"] = py::make_tuple(reinterpret_cast<uintptr_t>(a.buf.data()), false);
        d["version"] = 3;
        d["strides"] = py::none();
        d["stream"] = a.stream < 0 ? py::object(py::none()) : py::object(py::int_(to_interface_stream(a.stream)));
        return d;
      }, "The CUDA Array Interface (version 3) dict: shape, typestr '<f4', data, version, strides, stream.")
      .def("__dlpack__", &to_dlpack, py::arg("stream") = py::none(),
           "A DLPack capsule of the array (no copy). stream: the consumer's stream (DLPack's convention), which\n"
           "is ordered after the work that made the array; None: that work is finished first.")
      .def("__dlpack_device__", [](const CudaArray& a) { return py::make_tuple(static_cast<int>(kDLCUDA), a.device); },
           "(2, device): DLPack's kDLCUDA and the device's ordinal.")
      .def("numpy", [](const CudaArray& a) {
        check_cuda_process("CudaArray.numpy()");
        std::vector<py::ssize_t> shape(a.shape.begin(), a.shape.end());
        py::array_t<float> out(shape);
        float* dst = out.mutable_data();
        {
          py::gil_scoped_release release;
          if (a.stream >= 0) CUDA_CHECK_THROW(cudaStreamSynchronize(as_stream(a.stream)));
          CUDA_CHECK_THROW(cudaMemcpy(dst, a.buf.data(), sizeof(float) * a.count(), cudaMemcpyDeviceToHost));
        }
        return out;
      }, "A host copy as a float32 numpy array.");
}

}  // namespace diffscope::python
