// train_binding.cpp — diffscope.train: keyword arguments -> TrainConfig and DataOptions (None: the default), the
// data from a path, a bundled name or a numpy array, run_training on the CPU or the GPU (`backend`) with Ctrl+C between steps (the last
// complete step written, then KeyboardInterrupt), and the written model loaded.
#include "python/train_binding.h"

#include <pybind11/numpy.h>

#include <iterator>

#include "base/errors.h"
#include "python/module_util.h"
#include "train/train_run.h"

#ifdef DIFFSCOPE_HAVE_CUDA
#include "gpu/cuda_backend.h"
#include "gpu/cuda_trainer.h"
#endif

namespace py = pybind11;

namespace diffscope::python {
namespace {

std::string key_name(const std::string& k) { return k; }

// Every setting keyword, in the order of the signature.
const char* const kSettings[] = {"objective", "steps", "hidden", "batch", "lr", "warmup", "final_lr_frac", "ema",
                                 "seed", "time_sampling", "logit_mean", "logit_std", "loss_weighting", "snr_gamma",
                                 "schedule", "beta_start", "beta_end"};

std::string text_arg(const py::handle& v, const char* arg) {
  if (!py::isinstance<py::str>(v))
    throw InvalidInput(std::string(arg) + " = " + std::string(py::repr(v)) + " is not a str");
  return v.cast<std::string>();
}

// The settings from the keywords that are not None (the rest keep TrainConfig's defaults).
train::TrainConfig config_of(const py::dict& kw) {
  train::TrainConfig c;
  auto has = [&](const char* k) { return kw.contains(k) && !kw[k].is_none(); };
  auto integer = [&](const char* k, int64_t lo, int64_t hi) {
    return int_arg(kw[k], k, IntRange{lo, hi}, "an int in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  };
  if (has("objective")) c.objective = train::parse_objective(text_arg(kw["objective"], "objective"), "objective");
  if (has("steps")) c.steps = integer("steps", 1, 10000000);
  if (has("hidden")) c.hidden = int(integer("hidden", 64, 512));
  if (has("batch")) c.batch = int(integer("batch", 1, 65536));
  if (has("warmup")) c.warmup = integer("warmup", -1, 10000000);
  if (has("seed")) c.seed = seed_arg(kw["seed"]);
  const std::pair<const char*, double*> reals[] = {
      {"lr", &c.lr}, {"final_lr_frac", &c.final_lr_frac}, {"ema", &c.ema}, {"logit_mean", &c.logit_mean},
      {"logit_std", &c.logit_std}, {"snr_gamma", &c.snr_gamma}, {"beta_start", &c.beta_start},
      {"beta_end", &c.beta_end}};
  for (const auto& [k, p] : reals)
    if (has(k)) *p = *real_arg(kw[k], k);
  if (has("time_sampling"))
    c.time_sampling = train::parse_time_sampling(text_arg(kw["time_sampling"], "time_sampling"), "time_sampling");
  if (has("loss_weighting"))
    c.weighting = train::parse_loss_weighting(text_arg(kw["loss_weighting"], "loss_weighting"), "loss_weighting");
  if (has("schedule")) c.schedule = text_arg(kw["schedule"], "schedule");
  train::check_train_config(c, key_name);
  return c;
}

// The data: a numpy array (N, dim) of floats, or a path / bundled name as the CLI's --data.
train::TrainData data_of(const py::object& data, const train::DataOptions& o) {
  if (py::isinstance<py::array>(data)) {
    const py::array a = py::reinterpret_borrow<py::array>(data);
    if (dtype_kind(a.dtype()) != 'f' || a.ndim() != 2)
      throw InvalidInput("data: an array of " + std::to_string(a.ndim()) + " dimensions and dtype " +
                         std::string(py::str(a.dtype())) + "; valid: a 2-D float array (N, dim)");
    const auto f = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(a);
    std::vector<float> raw(f.data(), f.data() + f.size());
    return train::prepare_train_data(std::move(raw), int64_t(a.shape(0)), int(a.shape(1)), o, "data (array)",
                                     key_name);
  }
  train::DataOptions with_source = o;
  with_source.source = path_text(data, "data");
  return train::load_train_data(with_source, key_name);
}

// The trainer of `backend` and `precision` (as the CLI's --backend, --precision): InvalidInput for a name that is
// not one or bf16 on the CPU; ResourceUnavailable for cuda without CUDA support or a device.
train::TrainerFactory trainer_of(const std::string& backend, const std::string& precision) {
  if (precision != "fp32" && precision != "bf16")
    throw InvalidInput("precision = '" + precision + "' is not a training precision; valid: 'fp32', 'bf16'");
  if (backend == "cpu") {
    if (precision != "fp32")
      throw InvalidInput("precision = '" + precision + "' needs backend = 'cuda'; valid with backend = 'cpu': 'fp32'");
    return train::make_cpu_trainer;
  }
  if (backend != "cuda") throw InvalidInput("backend = '" + backend + "' is not a training backend; valid: 'cpu', 'cuda'");
#ifdef DIFFSCOPE_HAVE_CUDA
  check_cuda_process("backend = 'cuda'");
  note_cuda_process();
  if (!gpu::cuda_device_available())
    throw ResourceUnavailable("backend = 'cuda': no CUDA device is usable here; use backend = 'cpu'");
  gpu::CudaTrainerOptions o;
  o.precision = gpu::parse_train_precision(precision, "precision");
  return [o](const train::TrainConfig& c, const train::TrainData& d) { return gpu::make_cuda_trainer(c, d, o); };
#else
  throw ResourceUnavailable("backend = 'cuda': this build has no CUDA support; use backend = 'cpu'");
#endif
}

std::string train_call(const py::object& data, const py::object& out_arg, const py::dict& kw) {
  train::RunOptions run;
  run.make_trainer = trainer_of(text_arg(kw["backend"], "backend"), text_arg(kw["precision"], "precision"));
  run.out = path_text(out_arg, "out");
  run.out_arg = "out";
  run.checkpoint_arg = "checkpoint";
  run.checkpoint = kw["checkpoint"].is_none() ? train::default_checkpoint_path(run.out)
                                              : path_text(kw["checkpoint"], "checkpoint");
  run.checkpoint_every = int_arg(kw["checkpoint_every"], "checkpoint_every", IntRange{0, INT64_MAX}, "an int >= 0");
  train::TrainConfig c;
  if (!kw["resume"].is_none()) {
    for (const char* k : kSettings)
      if (!kw[k].is_none())
        throw InvalidInput(std::string(k) + " cannot be given with resume: the checkpoint holds the run's settings");
    run.resume = train::read_checkpoint(path_text(kw["resume"], "resume"), "resume");
    c = run.resume->config;
  } else {
    c = config_of(kw);
  }
  train::DataOptions o;
  o.holdout = *real_arg(kw["holdout"], "holdout");
  o.normalization = text_arg(kw["normalize"], "normalize");
  o.mixture_rows = int_arg(kw["mixture_rows"], "mixture_rows", IntRange{2, 10000000}, "an int in [2, 10000000]");
  o.seed = c.seed;
  const train::TrainData d = data_of(data, o);
  const py::object progress = kw["progress"];
  const int64_t every = c.steps / 100 > 1 ? c.steps / 100 : 1;
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    train::run_training(c, d, run,
        [&](int64_t done, int64_t total, double loss, double) {
          if (progress.is_none() || (done % every != 0 && done != total)) return;
          py::gil_scoped_acquire gil;
          try {
            progress(done, total, loss);
          } catch (py::error_already_set& e) {  // Ctrl+C during the callback: a stop, as between steps
            if (!e.matches(PyExc_KeyboardInterrupt)) throw;
            interrupted = true;
          }
        },
        [&] {
          py::gil_scoped_acquire gil;
          if (interrupted) return true;
          if (PyErr_CheckSignals() == 0) return false;
          PyErr_Clear();
          interrupted = true;
          return true;
        });
  }
  if (interrupted) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  return run.out;
}

}  // namespace

void register_train(py::module_& m, const std::function<py::object(const std::string&)>& load) {
  m.def("train", [load](const py::object& data, const py::object& out, const py::object& objective,
                        const py::object& steps, const py::object& hidden, const py::object& batch,
                        const py::object& lr, const py::object& warmup, const py::object& final_lr_frac,
                        const py::object& ema, const py::object& seed, const py::object& time_sampling,
                        const py::object& logit_mean, const py::object& logit_std, const py::object& loss_weighting,
                        const py::object& snr_gamma, const py::object& schedule, const py::object& beta_start,
                        const py::object& beta_end, const py::object& holdout, const py::object& normalize,
                        const py::object& mixture_rows, const py::object& checkpoint,
                        const py::object& checkpoint_every, const py::object& resume, const py::object& progress,
                        const py::object& backend, const py::object& precision) {
    const py::object values[] = {objective, steps, hidden, batch, lr, warmup, final_lr_frac, ema, seed,
                                 time_sampling, logit_mean, logit_std, loss_weighting, snr_gamma, schedule,
                                 beta_start, beta_end};
    py::dict kw;
    for (size_t i = 0; i < std::size(kSettings); ++i) kw[kSettings[i]] = values[i];
    kw["holdout"] = holdout;
    kw["normalize"] = normalize;
    kw["mixture_rows"] = mixture_rows;
    kw["checkpoint"] = checkpoint;
    kw["checkpoint_every"] = checkpoint_every;
    kw["resume"] = resume;
    kw["progress"] = progress;
    kw["backend"] = backend;
    kw["precision"] = precision;
    return load(train_call(data, out, kw));
  }, py::arg("data"), py::arg("out"), py::arg("objective") = py::none(), py::arg("steps") = py::none(),
        py::arg("hidden") = py::none(), py::arg("batch") = py::none(), py::arg("lr") = py::none(),
        py::arg("warmup") = py::none(), py::arg("final_lr_frac") = py::none(), py::arg("ema") = py::none(),
        py::arg("seed") = py::none(), py::arg("time_sampling") = py::none(), py::arg("logit_mean") = py::none(),
        py::arg("logit_std") = py::none(), py::arg("loss_weighting") = py::none(), py::arg("snr_gamma") = py::none(),
        py::arg("schedule") = py::none(), py::arg("beta_start") = py::none(), py::arg("beta_end") = py::none(),
        py::arg("holdout") = 0.1, py::arg("normalize") = "standard", py::arg("mixture_rows") = 20000,
        py::arg("checkpoint") = py::none(), py::arg("checkpoint_every") = 0, py::arg("resume") = py::none(),
        py::arg("progress") = py::none(), py::arg("backend") = "cpu", py::arg("precision") = "fp32",
        "Trains the eps-network of docs/SEMANTICS.md §2 on the CPU or the GPU, as `diffscope train`, writes the model\n"
        "file `out` and its checkpoint, and returns the trained Model. data: a numpy array (N, dim) of floats (dim <=\n"
        "64, N <= 10^7), a .npy path, a bundled model's name or a model file (its data_samples), or a\n"
        "gaussian_mixture file. Keywords (None: the default of `diffscope train --help`): objective, steps, hidden,\n"
        "batch, lr, warmup, final_lr_frac, ema, seed, time_sampling, logit_mean, logit_std, loss_weighting,\n"
        "snr_gamma, schedule, beta_start, beta_end; holdout (0.1), normalize ('standard'), mixture_rows (20000),\n"
        "checkpoint (None: OUT.ckpt.safetensors), checkpoint_every (0), resume (a checkpoint path: its settings, the\n"
        "same data), progress (a callable(step, total, loss), called about 100 times), backend ('cpu' or 'cuda': the\n"
        "same maths and random numbers), precision ('fp32'; 'bf16': cuda only, PyTorch's autocast). Ctrl+C writes the\n"
        "last complete step's files and raises KeyboardInterrupt.\n"
        "See README.md \"Python\" and docs/SEMANTICS.md §11 (installed with the package: help(diffscope)).");
}

}  // namespace diffscope::python
