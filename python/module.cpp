// module.cpp — the Python module `diffscope` (pybind11): load a model by bundled name or path, sample,
// denoise and the 3-layer MLP on numpy arrays (CPU or CUDA backend), with the CLI's checks and messages
// (README "Python"), and the comparison grid (python/grid_binding.cpp). Each call validates everything first,
// then releases the GIL for the compute.
// Errors: InvalidInput -> ValueError, ResourceUnavailable and out of memory -> RuntimeError (SEMANTICS §9).
// CUDA arrays in and out without a copy: python/cuda_arrays.h.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/ranges.h"
#include "diffusion/input_checks.h"
#include "diffusion/sampling.h"
#include "diffusion/scheduler_config.h"
#include "diffusion/step_table.h"
#include "model/model.h"
#include "platform/cpu_threads.h"
#include "platform/model_paths.h"
#include "python/cuda_arrays.h"
#include "python/grid_binding.h"
#include "python/module_util.h"
#include "python/sample_request.h"
#include "python/train_binding.h"
#include "run/backend.h"
#include "run/finite_checks.h"
#include "run/guidance_checks.h"
#include "run/run_plan.h"

namespace py = pybind11;

namespace diffscope::python {
namespace {

using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;

FloatArray new_array(std::vector<py::ssize_t> shape) {
  try {
    return FloatArray(shape);
  } catch (const std::bad_alloc&) {
    throw ResourceUnavailable("out of memory for an array of " + std::to_string(shape.size()) + " dimensions");
  }
}

// "(0, 2)", "(3,)": a numpy shape as numpy prints it.
std::string shape_text(const py::array& a) {
  std::string t = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) t += (d ? ", " : "") + std::to_string(a.shape(d));
  return t + (a.ndim() == 1 ? ",)" : ")");
}

// x as a 2-D float32 array, by SEMANTICS §6's rule for x (the CLI's `--x` the same): a numpy array, a host DLPack
// tensor (a torch CPU tensor, jax.Array on the CPU, ... through numpy.from_dlpack, no copy) or anything
// numpy.asarray takes, of dtype float16, float32 or float64 (converted to float32); any other dtype (integers,
// bool, complex, strings, objects) is refused before any cast, naming it; so are an empty array and one that
// is not 2-D.
FloatArray as_matrix(const py::handle& x, const char* arg) {
  const std::string valid = "; valid: a float16, float32 or float64 array (B, dim) with B >= 1";
  py::array a;
  try {
    if (py::isinstance<py::array>(x))
      a = py::reinterpret_borrow<py::array>(x);
    else if (py::hasattr(x, "__dlpack__"))
      a = py::module_::import("numpy").attr("from_dlpack")(x);
    else
      a = py::array::ensure(x);  // numpy.asarray: no cast yet
  } catch (const py::error_already_set&) {
  }
  if (!a) throw InvalidInput(std::string(arg) + " is not a numeric array" + valid);
  const py::dtype dt = a.dtype();
  const py::ssize_t size = dtype_itemsize(dt);
  if (dtype_kind(dt) != 'f' || (size != 2 && size != 4 && size != 8))
    throw InvalidInput(std::string(arg) + " has dtype " + std::string(py::str(py::handle(dt))) + valid);
  if (a.ndim() != 2)
    throw InvalidInput(std::string(arg) + " has " + std::to_string(a.ndim()) + " dimensions (shape " + shape_text(a) +
                       ")" + valid);
  if (a.shape(0) < 1) throw InvalidInput(std::string(arg) + " is empty (shape " + shape_text(a) + ")" + valid);
  FloatArray f = FloatArray::ensure(a);
  if (!f) throw ResourceUnavailable(std::string(arg) + ": its float32 copy could not be made (out of memory)");
  return f;
}

void check_finite(const char* arg, const float* x, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows * cols; ++i)
    if (!std::isfinite(x[i])) {
      std::ostringstream os;
      os << arg << "[" << i / cols << "][" << i % cols << "] = " << x[i] << " is not finite; valid: finite values";
      throw InvalidInput(os.str());
    }
}

// SEMANTICS §9: a result that holds a NaN or an infinity (the computation overflowed) is an error, as in the CLI
// (check_output_finite), not a silent array; `arg` names the result ("x", "trajectory", "y"). Host results only:
// a CUDA result (out='cuda', a CUDA array updated in place) is not read back for it.
void check_result_finite(const std::string& arg, const float* data, int64_t n_frames, int64_t rows, int64_t cols) {
  try {
    check_output_finite(arg, data, n_frames, rows, cols);
  } catch (const InvalidInput& e) {
    std::string m = e.what();
    const std::string written = "nothing was written";
    const size_t at = m.find(written);
    if (at != std::string::npos) m.replace(at, written.size(), "nothing was returned");
    throw InvalidInput(m);
  }
}

// A loaded diffusion model with its backends (made on first use, kept: the CUDA one holds the weights on
// the device). Calls on one Model are serialised by `mutex`; different Models run concurrently.
struct Model {
  DiffusionModel model;
  std::string name;
  Backends backends;
  std::mutex mutex;

  // sample(): SEMANTICS §3. Returns x (n, dim) or (x, trajectory (frames, n, dim)). spacing / steps_offset: None
  // takes the scheduler_config's (a diffusers scheduler_config.json path, as `sample --scheduler-config`), else
  // default / 0; the config's schedule applies to this call only, by SEMANTICS §3's rule. The request is resolved
  // by plan_run (run/run_plan.h) and run by run_plan, as the CLI's.
  py::object sample(const py::object& n_arg, const std::string& sampler_text, const py::object& spacing_arg,
                    const py::object& steps_offset_arg, double eta, const py::object& steps_arg,
                    const py::object& t_start_arg, const py::object& seed_obj, bool from_data,
                    const std::string& backend_name, const std::string& precision_text, bool trajectory,
                    const py::object& stride_arg, const std::string& out, const py::object& stream,
                    const py::object& scheduler_config, const py::object& prediction_type,
                    const py::object& sigmas, const py::object& flow_shift, const py::object& flow_mu,
                    const py::object& class_label, const py::object& guidance_scale,
                    const py::object& guidance_interval, const py::object& guidance_rescale) {
    SampleArgs a;
    a.guidance = guidance_arg(class_label, guidance_scale, guidance_interval, guidance_rescale);
    a.prediction_type = prediction_type_arg(prediction_type);
    a.sigmas = sigmas_arg(sigmas);
    a.flow_shift = real_arg(flow_shift, "flow_shift");
    a.flow_mu = real_arg(flow_mu, "flow_mu");
    a.precision = parse_precision(precision_text);
    check_backend_precision(backend_name, a.precision);
    a.sampler = parse_sampler(sampler_text);
    if (!spacing_arg.is_none()) a.spacing = parse_spacing(py::str(spacing_arg));
    if (!steps_offset_arg.is_none())
      a.steps_offset = int_arg(steps_offset_arg, "steps_offset", {0, INT_MAX}, "an int >= 0, or None");
    std::optional<SchedulerConfig> config;
    DiffusionModel configured;  // the model with the scheduler_config's schedule (this call only)
    const DiffusionModel& run_model = scheduler_config.is_none() ? model
                                                                 : with_scheduler_config(scheduler_config, &configured, &config);
    a.scheduler_config = config ? &*config : nullptr;
    a.seed = seed_arg(seed_obj);
    a.n = int_arg(n_arg, "n", sample_count_range(backend_name == "cuda"), "an int");
    check_eta(eta, "eta");
    a.eta = eta;
    a.trajectory_stride = int_arg(stride_arg, "trajectory_stride", {1, INT_MAX}, "an int >= 1");
    check_out(out, backend_name);
    // On a list of levels (typed sigmas, flow, edm) t_start is an index into it and steps its length: plan_run
    // checks them there.
    const Family family = a.prediction_type.value_or(run_model.family.family);
    const bool list_run = !a.sigmas.empty() || family == Family::Flow || family == Family::Edm;
    if (!t_start_arg.is_none())
      a.t_start = int_arg(t_start_arg, "t_start", list_run ? IntRange{0, INT32_MAX} : t_start_range(run_model.schedule),
                          "an int");
    if (!steps_arg.is_none()) {  // checked by plan_run; the range here names a value beyond 64 bits
      const int64_t t_hi = a.t_start ? *a.t_start : std::max(0, t_start_max_usable(run_model.schedule));
      a.steps = list_run ? int_arg(steps_arg, "steps", {1, INT32_MAX}, "an int >= 1, or None")
                         : int_arg(steps_arg, "steps", sample_steps_range(static_cast<int>(t_hi)),
                                   "an int in [1, t_start + 1], or None for t_start + 1");
    }
    a.from_data = from_data;
    a.backend = backend_name;
    a.trajectory = trajectory;
    a.model_name = name;
    // The config's sampler note, a t_start default below T - 1 and a prediction_type override become UserWarnings.
    const RunPlan plan = plan_run(sample_request(a), run_model, [](const RunNote& note) {
      std::string text;
      if (note.kind == RunNote::Kind::ConfigSampler) text = "scheduler_config: " + note.text;
      if (note.kind == RunNote::Kind::DefaultTStart || note.kind == RunNote::Kind::FamilyOverride) text = note.text;
      if (!text.empty() && PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 2) != 0) throw py::error_already_set();
    });
    const std::vector<int> frames = trajectory ? plan.frames : std::vector<int>{};
    if (out == "cuda")
      return sample_cuda(backends, mutex, run_model, plan.table, plan.n, a.seed, from_data, plan.t_start, a.precision,
                         frames, stream_arg(stream));
    return sample_host(plan, run_model, backend_name, frames);
  }

  // The host run of a plan: x (n, dim), or (x, trajectory) with `frames` kept.
  py::object sample_host(const RunPlan& plan, const DiffusionModel& run_model, const std::string& backend_name,
                         const std::vector<int>& frames) {
    const int rows = plan.n, dim = run_model.net.dim;
    const bool trajectory = !frames.empty();
    FloatArray x = new_array({rows, dim});
    FloatArray traj = trajectory ? new_array({static_cast<py::ssize_t>(frames.size()), rows, dim}) : FloatArray();
    float* px = x.mutable_data();
    float* pt = trajectory ? traj.mutable_data() : nullptr;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex);
      // In about 100 chunks with SIGINT checked between them: Ctrl+C stops a long call (KeyboardInterrupt), as the
      // CLI's runs stop. Chunked runs equal one call's (run/run_plan.h).
      run_plan(plan, run_model, backends.get(backend_name), RunBuffers{px, pt}, [](int) {}, [] {
        py::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      });
    }
    check_result_finite("x", px, 1, rows, dim);
    if (trajectory) check_result_finite("trajectory", pt, static_cast<int64_t>(frames.size()), rows, dim);
    if (!trajectory) return std::move(x);
    return py::make_tuple(x, traj);
  }

  // A copy of the model with the diffusers scheduler_config.json at `path_arg` (str or os.PathLike) applied
  // (diffusion/scheduler_config.h, as `sample --scheduler-config`): its schedule by SEMANTICS §3's rule; the config
  // itself into `config` (plan_run takes its spacing and steps_offset). Its schedule warnings become Python
  // UserWarnings; a bad file raises ValueError naming the key, the value and the range.
  const DiffusionModel& with_scheduler_config(const py::object& path_arg, DiffusionModel* configured,
                                              std::optional<SchedulerConfig>* config) {
    const std::string path = py::str(py::module_::import("os").attr("fspath")(path_arg));
    *config = load_scheduler_config(path);
    *configured = model;
    const size_t old_warnings = configured->warnings.size();
    apply_scheduler_config(*configured, **config);
    for (size_t i = old_warnings; i < configured->warnings.size(); ++i)
      if (PyErr_WarnEx(PyExc_UserWarning, ("scheduler_config: " + configured->warnings[i]).c_str(), 2) != 0)
        throw py::error_already_set();
    return *configured;
  }

  // The model, or with a prediction_type (not None) a copy in `copy` running as that family (a file that names
  // none; one naming another raises ValueError), with a UserWarning saying so.
  const DiffusionModel& family_model(const py::object& prediction_type, DiffusionModel* copy) {
    const std::optional<Family> f = prediction_type_arg(prediction_type);
    if (!f) return model;
    std::string note;
    const FamilyParams p = family_with_prediction_type(model, *f, &note);
    if (!note.empty() && PyErr_WarnEx(PyExc_UserWarning, note.substr(0, note.size() - 1).c_str(), 2) != 0)
      throw py::error_already_set();
    if (p.family == model.family.family && p.time_input == model.family.time_input) return model;
    *copy = model;
    copy->family = p;
    return *copy;
  }

  // denoise(): SEMANTICS §4, `steps` ddpm-mean steps from per-row t_start. x: (B, dim) numpy (a new array
  // comes back) or a CUDA array (updated in place and returned). t_start: an int or B ints.
  py::object denoise(const py::object& x_arg, const py::object& t_start_arg, const py::object& steps_arg,
                     const std::string& backend_name, const std::string& precision_text, bool trajectory,
                     const py::object& stream, const py::object& prediction_type) {
    DiffusionModel with_family;  // the model with prediction_type's family (this call only)
    const DiffusionModel& run_model = family_model(prediction_type, &with_family);
    const Precision precision = parse_precision(precision_text);
    check_backend_precision(backend_name, precision);
    check_backend_classes(run_model, backend_name == "cuda");
    const int64_t steps = int_arg(steps_arg, "steps", {1, INT32_MAX}, "an int >= 1");
    if (is_cuda_array(x_arg)) {
      if (trajectory) throw InvalidInput("trajectory = True: not available for a CUDA array x; pass a numpy array");
      return denoise_cuda(backends, mutex, run_model, x_arg, t_start_arg, steps, backend_name, precision,
                          stream_arg(stream));
    }
    FloatArray in = as_matrix(x_arg, "x");
    const int64_t B = in.shape(0), cols = in.shape(1);
    std::vector<int64_t> t_start = int_vector(t_start_arg, "t_start", B, t_start_range(run_model.schedule));
    FloatArray x = new_array({static_cast<py::ssize_t>(B), static_cast<py::ssize_t>(cols)});
    std::memcpy(x.mutable_data(), in.data(), sizeof(float) * B * cols);
    validate_denoise_inputs(run_model, x.data(), B, cols, t_start.data(), static_cast<int64_t>(t_start.size()), steps);
    if (B > INT32_MAX) throw InvalidInput("x has " + std::to_string(B) + " rows; valid: at most 2^31-1");
    const int S = static_cast<int>(steps), dim = run_model.net.dim;
    FloatArray traj = trajectory ? new_array({S + 1, static_cast<py::ssize_t>(B), dim}) : FloatArray();
    float* px = x.mutable_data();
    float* pt = trajectory ? traj.mutable_data() : nullptr;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mutex);
      backends.get(backend_name).denoise(run_model, px, t_start.data(), static_cast<int>(B), S, pt, precision);
    }
    check_result_finite("x", px, 1, B, dim);
    if (trajectory) check_result_finite("trajectory", pt, S + 1, B, dim);
    if (!trajectory) return std::move(x);
    return py::make_tuple(x, traj);
  }
};

Backends g_mlp3_backends;  // the module-level mlp3()'s backends
std::mutex g_mlp3_mutex;

// mlp3(): SEMANTICS §5, y = relu(relu(x W1^T) W2^T) W3^T.
py::object mlp3(const py::object& weights_arg, const py::object& x_arg, const std::string& backend_name,
                const std::string& precision_text, const py::object& stream) {
  const std::string weights = path_text(weights_arg, "weights");
  const Precision precision = parse_precision(precision_text);
  check_backend_precision(backend_name, precision);
  Mlp3Weights w;
  {
    py::gil_scoped_release release;
    w = load_mlp3(weights);
  }
  if (is_cuda_array(x_arg)) return mlp3_cuda(g_mlp3_backends, g_mlp3_mutex, w, weights, x_arg, backend_name,
                                             precision, stream_arg(stream));
  FloatArray x = as_matrix(x_arg, "x");
  if (x.shape(1) != w.d0)
    throw InvalidInput("x has width " + std::to_string(x.shape(1)) + " but '" + weights + "' takes " +
                       std::to_string(w.d0) + " inputs; valid: x of shape (B, " + std::to_string(w.d0) + ")");
  if (x.shape(0) > INT32_MAX) throw InvalidInput("x has " + std::to_string(x.shape(0)) + " rows; valid: at most 2^31-1");
  check_finite("x", x.data(), x.shape(0), x.shape(1));
  const int B = static_cast<int>(x.shape(0));
  FloatArray y = new_array({B, w.d3});
  const float* px = x.data();
  float* py_ = y.mutable_data();
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(g_mlp3_mutex);
    g_mlp3_backends.get(backend_name).mlp3(w, px, B, py_, precision);
  }
  check_result_finite("y", py_, 1, B, w.d3);
  return std::move(y);
}

}  // namespace
}  // namespace diffscope::python

namespace diffscope::python {
namespace {

// A docstring: `text`, then where to read more, in the documentation installed with the package
// (packaging/CMakeLists.txt puts README.md and docs/ into <prefix>/share/doc/diffscope; help(diffscope) says so).
// pybind11 copies docstrings, so the temporary's text may be passed as .c_str().
std::string doc(const std::string& text, const std::string& where) {
  return text + "\nSee README.md \"Python\" and " + where + " (installed with the package: help(diffscope)).";
}

// The core's exceptions as Python's: InvalidInput -> ValueError, ResourceUnavailable and out of memory ->
// RuntimeError.
void register_errors() {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const InvalidInput& e) {
      // An ArgumentError's what() names its argument by id (base/arg_error.h): Python's keyword.
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ResourceUnavailable& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const std::bad_alloc&) {
      PyErr_SetString(PyExc_RuntimeError, "out of memory");
    }
  });
}

// diffscope.Model: a loaded model's sizes and schedule, sample() and denoise().
void register_model(py::module_& m) {
  py::class_<Model>(m, "Model",
                    doc("A loaded diffusion model: its eps-network and noise schedule, made by diffscope.load. Calls on\n"
                        "one Model run one at a time (other Python threads run meanwhile); different Models run\n"
                        "concurrently.",
                        "docs/SEMANTICS.md §1-§2").c_str())
      .def_property_readonly("path", [](const Model& s) { return s.model.path; }, "The model file's path.")
      .def_property_readonly("dim", [](const Model& s) { return s.model.net.dim; },
                             "The data dimension: sample() returns (n, dim) arrays.")
      .def_property_readonly("hidden", [](const Model& s) { return s.model.net.hidden; },
                             "The eps-network's hidden width.")
      .def_property_readonly("T", [](const Model& s) { return s.model.schedule.T; },
                             "The number of diffusion timesteps: t in [0, T - 1].")
      .def_property_readonly("n_data", [](const Model& s) { return s.model.n_data; },
                             "The number of rows of data_samples (0 when the model file has none).")
      .def_property_readonly("alphas_cumprod", [](const Model& s) {
        return py::array_t<double>(static_cast<py::ssize_t>(s.model.schedule.alphas_cumprod.size()),
                                   s.model.schedule.alphas_cumprod.data());
      }, "The noise schedule's alpha-bar_t for t = 0 .. T - 1: a new float64 array (T,).")
      .def_property_readonly("data_samples", [](const Model& s) {
        FloatArray a({s.model.n_data, s.model.net.dim});
        std::copy(s.model.data_samples.begin(), s.model.data_samples.end(), a.mutable_data());
        return a;
      }, "The data points stored in the model file: a new float32 array (n_data, dim).")
      .def_property_readonly("prediction_type", [](const Model& s) { return family_name(s.model.family.family); },
                             "The model family the file names ('epsilon' when it names none; docs/SEMANTICS.md §2):\n"
                             "'epsilon', 'sample', 'v_prediction', 'flow' or 'edm'.")
      .def_property_readonly("convention", [](const Model& s) { return convention_line(s.model.family); },
                             "One line on the model family, as `diffscope info`'s convention line: the family, its\n"
                             "state, the network's time input and T.")
      .def("__repr__", [](const Model& s) {
        return "<diffscope.Model '" + s.name + "' dim=" + std::to_string(s.model.net.dim) +
               " hidden=" + std::to_string(s.model.net.hidden) + " T=" + std::to_string(s.model.schedule.T) + ">";
      }, "The name it was loaded by, dim, hidden and T.")
      .def("sample", &Model::sample, py::arg("n") = 4096, py::arg("sampler") = "ddim",
           py::arg("spacing") = py::none(), py::arg("steps_offset") = py::none(), py::arg("eta") = 0.0,
           py::arg("steps") = py::none(), py::arg("t_start") = py::none(), py::arg("seed") = 0,
           py::arg("from_data") = false, py::arg("backend") = "cpu", py::arg("precision") = "fp32",
           py::arg("trajectory") = false, py::arg("trajectory_stride") = 1, py::arg("out") = "numpy",
           py::arg("stream") = py::none(), py::arg("scheduler_config") = py::none(),
           py::arg("prediction_type") = py::none(), py::arg("sigmas") = py::none(), py::arg("flow_shift") = py::none(),
           py::arg("flow_mu") = py::none(), py::arg("class_label") = py::none(), py::arg("guidance_scale") = 1.0,
           py::arg("guidance_interval") = py::none(), py::arg("guidance_rescale") = 0.0,
           doc("Samples n points, as `diffscope sample`: float32 (n, dim). With trajectory=True, (x, trajectory):\n"
               "the frames 0, s, 2s, ... and the last (s = trajectory_stride), (frames, n, dim).\n"
               "sampler: 'ddim', 'ddpm', 'dpmpp-2m', ... (the solvers of `diffscope sample --sampler`); spacing:\n"
               "'default', 'leading', 'linspace', 'trailing', 'karras' or None; eta: the noise scale of ddim.\n"
               "t_start defaults to the model's last usable timestep (T - 1, or info's t_start_max_usable), steps to\n"
               "t_start + 1; from_data=True starts from the model's data_samples noised to t_start.\n"
               "Integer arguments (n, steps, t_start, seed, steps_offset, trajectory_stride) take any integer with\n"
               "__index__ (int, numpy.int64, numpy.uint64, ...; not bool).\n"
               "backend: 'cpu' or 'cuda'; precision: 'fp32', or 'tf32' / 'bf16' / 'fp16' with backend='cuda'.\n"
               "backend='cuda' with out='cuda' returns diffscope.CudaArray (no copy to the host); stream: None (finished\n"
               "when the call returns) or a cudaStream_t as an int (enqueued there).\n"
               "scheduler_config: a diffusers scheduler_config.json path, as --scheduler-config: its schedule (unless\n"
               "the model file has its own) and its spacing and steps_offset where spacing / steps_offset are None\n"
               "(without a config None means 'default' and 0).\n"
               "Model families (as --prediction-type, --sigmas, --flow-shift, --flow-mu): prediction_type ('epsilon',\n"
               "'sample', 'v_prediction', 'flow', 'edm') for a file that names none (a file naming another raises\n"
               "ValueError); sigmas: a typed list of noise levels in the family's own level (VE sigma for the VP\n"
               "families and edm, s for flow), strictly decreasing, > 0 but the last; flow_shift (> 0) and flow_mu\n"
               "(diffusers' dynamic shifting) for flow lists. t_start on a flow, edm or sigmas list is the index of\n"
               "the first step.\n"
               "Classes and guidance (as --class, --guidance-scale, --guidance-interval, --guidance-rescale; CPU only):\n"
               "class_label (None: the null class) of a model with class_emb.weight; guidance_scale w (diffusers'):\n"
               "o_u + w (o_c - o_u), 1 the class alone; guidance_interval (lo, hi) in VE sigma, w = 1 outside;\n"
               "guidance_rescale phi in [0, 1].",
               "docs/SEMANTICS.md §2-§3 and §12").c_str())
      .def("denoise", &Model::denoise, py::arg("x"), py::arg("t_start"), py::arg("steps"), py::arg("backend") = "cpu",
           py::arg("precision") = "fp32", py::arg("trajectory") = false, py::arg("stream") = py::none(),
           py::arg("prediction_type") = py::none(),
           doc("`steps` ddpm-mean steps from per-row t_start, as `diffscope denoise`: float32 (B, dim), or with\n"
               "trajectory=True (x, trajectory (steps + 1, B, dim)).\n"
               "x: (B, dim) float16, float32 or float64 (a numpy array, anything numpy.asarray takes, or a host DLPack\n"
               "tensor; integer, bool, complex and other dtypes are refused, as by --x); t_start: an integer or B\n"
               "integers (an integer array, signed or unsigned). A CUDA array x (__cuda_array_interface__ or DLPack,\n"
               "float32, with backend='cuda') is updated in place and returned; stream as in Model.sample.\n"
               "prediction_type: the family of a file that names none, as in Model.sample; x is that family's state.",
               "docs/SEMANTICS.md §4 and §6").c_str());
}

// The module's functions: load, bundled_models, mlp3, the CPU threads, cuda_available.
void register_functions(py::module_& m) {
  m.def("_set_data_root", &set_extra_root, py::arg("root"),
        "Adds an installed share/diffscope folder to the roots searched for bundled models (after DIFFSCOPE_ROOT).");
  m.def("bundled_models", [] {
    std::vector<std::string> names;
    for (const auto& [name, path] : bundled_models()) names.push_back(name);
    return names;
  }, "The names of the bundled models, which diffscope.load takes.");
  m.def("cuda_available", &cuda_available,
        "True when this build has CUDA and a CUDA device is usable (backend='cuda').");
  m.def("load", [](const py::object& path_arg) {
    const std::string path_or_name = path_text(path_arg, "path_or_name");
    auto s = std::make_unique<Model>();
    s->name = path_or_name;
    const std::string path = resolve_model_arg("path_or_name", path_or_name);
    py::gil_scoped_release release;
    s->model = load_diffusion_model(path);
    return s;
  }, py::arg("path_or_name"),
        doc("Loads a model: a bundled one by name ('moons'; the names: bundled_models()) or a .safetensors file by\n"
            "path (str or os.PathLike).",
            "docs/SEMANTICS.md §6").c_str());
  m.def("mlp3", &mlp3, py::arg("weights"), py::arg("x"), py::arg("backend") = "cpu", py::arg("precision") = "fp32",
        py::arg("stream") = py::none(),
        doc("The fused bias-free 3-layer MLP y = relu(relu(x W1^T) W2^T) W3^T, as `diffscope mlp3`: weights a\n"
            ".safetensors path (str or os.PathLike), x (B, d0) float16/32/64 -> float32 (B, d3). A CUDA array x\n"
            "(with backend='cuda') gives a diffscope.CudaArray; stream as in Model.sample.",
            "docs/SEMANTICS.md §5").c_str());
  m.def("set_threads", [](const py::object& threads) {
    set_cpu_threads(threads.is_none() ? 0
                                      : int_arg(threads, "threads", kCpuThreadsRange,
                                                "an int in [1, 1024], or None for every core"),
                    "threads");
  }, py::arg("threads"),
        doc("Limits the CPU backend to `threads` threads (an int in [1, 1024]; None: every core this process may use,\n"
            "the default) for the whole process, as the CLI's --threads. Results do not depend on it, bit for bit.\n"
            "Small calls run on the calling thread; a forked child (multiprocessing, DataLoader workers) computes on\n"
            "its calling thread.",
            "docs/decisions/cpu-threading.md").c_str());
  m.def("get_threads", &cpu_threads, "The number of threads the CPU backend uses (diffscope.set_threads).");
  register_train(m, [](const std::string& path) {
    auto s = std::make_unique<Model>();
    s->name = path;
    s->model = load_diffusion_model(path);
    return py::cast(std::move(s));
  });
}

}  // namespace
}  // namespace diffscope::python

PYBIND11_MODULE(_diffscope, m) {
  using namespace diffscope::python;
  m.doc() = "The compiled part of the Python package diffscope, which exports its public names (help(diffscope)).";
  register_errors();
  register_model(m);  // before the functions that return a Model, so that their signatures name it
  register_functions(m);
  register_grid(m);
  register_cuda_array(m);
}
