// grid_binding.cpp — diffscope.grid: the comparison grid's cells (rows, cols, n, dim) and their metrics, planned by
// the same run plan as Model.sample (grid/grid_run.h), on the CPU or CUDA backend.
#include "python/grid_binding.h"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <climits>
#include <cstring>
#include <mutex>

#include "base/errors.h"
#include "base/precision.h"
#include "base/ranges.h"
#include "diffusion/input_checks.h"
#include "formats/json_bounded.h"
#include "grid/grid_live.h"
#include "grid/grid_metrics.h"
#include "grid/grid_run.h"
#include "platform/model_paths.h"
#include "python/module_util.h"
#include "python/sample_request.h"

namespace py = pybind11;

namespace diffscope::python {
namespace {

Backends g_grid_backends;
std::mutex g_grid_mutex;

// spec: the text form (or "@FILE") or a dict of the JSON form.
GridSpec spec_of(const py::object& spec) {
  if (py::isinstance<py::str>(spec)) return parse_grid_spec(spec.cast<std::string>(), "spec");
  if (py::isinstance<py::dict>(spec)) {
    const std::string text = py::module_::import("json").attr("dumps")(spec).cast<std::string>();
    return grid_spec_from_json(parse_json_bounded(text), "spec");
  }
  throw InvalidInput("spec = " + py::repr(spec).cast<std::string>() +
                     " is not valid; valid: a str such as 'rows=sampler:ddim,heun cols=steps:5,10', '@spec.json', or a dict");
}

py::dict grid(const py::object& spec_arg, const std::string& model, const py::object& n, const std::string& sampler,
              const py::object& steps, const py::object& t_start, const py::object& spacing, double eta,
              const py::object& seed, const std::string& backend, const std::string& precision,
              const py::object& position, const std::string& align, bool trajectories) {
  SampleArgs a;
  a.n = int_arg(n, "n", sample_count_range(backend == "cuda"), "an int");
  a.sampler = parse_sampler(sampler);
  check_eta(eta, "eta");
  a.eta = eta, a.seed = seed_arg(seed), a.backend = backend;
  a.precision = parse_precision(precision);
  // steps and t_start: their ranges depend on each cell's model and list, checked by the run plan
  if (!steps.is_none()) a.steps = int_arg(steps, "steps", {1, INT32_MAX}, "an int >= 1, or None");
  if (!t_start.is_none()) a.t_start = int_arg(t_start, "t_start", {0, INT32_MAX}, "an int >= 0, or None");
  if (!spacing.is_none()) a.spacing = parse_spacing(py::str(spacing));
  a.model_name = model;
  GridRequest g;
  g.spec = spec_of(spec_arg);
  g.base = sample_request(a);
  g.base.eta_named = eta != 0.0;
  g.base_model = model;
  g.arg = "spec";
  g.load = [](const std::string& name) {
    return std::make_shared<const DiffusionModel>(load_diffusion_model(resolve_model_arg("model", name)));
  };
  g.check_cell = [backend](const SampleRequest& q) { check_backend_precision(backend, q.precision); };
  check_backend_precision(backend, a.precision);
  std::optional<GridPosition> at;
  if (!position.is_none()) {
    at = GridPosition{position.cast<double>(), GridAlign::NoiseLevel};
    check_real_range("position", at->u, {0.0, 1.0});
  }
  if (align != "noise" && align != "step") throw InvalidInput("align = '" + align + "' is not valid; valid: noise, step");
  if (at && align == "step") at->align = GridAlign::Step;
  GridLive live;  // keeps every cell's frames (trajectories=True)
  GridPlan plan;
  GridResult res;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(g_grid_mutex);
    if (trajectories) {
      live.run(g, g_grid_backends.get(backend), at);
      plan = live.plan(), res = live.result();
    } else {
      plan = plan_grid(g);
      SequentialGridExecutor exec(g_grid_backends.get(backend));
      res = run_grid(plan, exec, {}, at);
    }
  }
  py::array_t<float> x({plan.spec.n_rows(), plan.spec.n_cols(), plan.n, plan.dim});
  std::memcpy(x.mutable_data(), res.x.data(), res.x.size() * sizeof(float));
  const py::object loads = py::module_::import("json").attr("loads");
  const py::object metrics = loads(grid_metrics_json(plan, res).dump());
  py::dict out;
  out["x"] = x;
  out["cells"] = metrics["cells"];
  out["spec"] = metrics["spec"];
  std::vector<std::string> rows, cols;
  for (int r = 0; r < plan.spec.n_rows(); ++r) rows.push_back(plan.row_label(r));
  for (int c = 0; c < plan.spec.n_cols(); ++c) cols.push_back(plan.col_label(c));
  out["rows"] = rows;
  out["cols"] = cols;
  if (trajectories) {  // per cell, row-major: its kept frames (n_kept, n, dim) and their indices
    py::list traj, frames;
    for (int i = 0; i < live.cells(); ++i) {
      const std::vector<float>& f = live.frames(i);
      const std::vector<int>& kept = plan.cells[static_cast<size_t>(i)].plan.frames;
      py::array_t<float> t({static_cast<int>(kept.size()), plan.n, plan.dim});
      std::memcpy(t.mutable_data(), f.data(), f.size() * sizeof(float));
      traj.append(t);
      frames.append(py::cast(kept));
    }
    out["trajectories"] = traj;
    out["trajectory_frames"] = frames;
  }
  return out;
}

}  // namespace

void register_grid(py::module_& m) {
  m.def("grid", &grid, py::arg("spec"), py::arg("model") = "", py::arg("n") = 4096, py::arg("sampler") = "ddim",
        py::arg("steps") = py::none(), py::arg("t_start") = py::none(), py::arg("spacing") = py::none(),
        py::arg("eta") = 0.0, py::arg("seed") = 0, py::arg("backend") = "cpu", py::arg("precision") = "fp32",
        py::arg("position") = py::none(), py::arg("align") = "noise", py::arg("trajectories") = false,
        "The comparison grid, as `diffscope sample --grid`: spec 'rows=AXIS:V1,V2,... cols=AXIS:V1,...' (axes\n"
        "sampler, steps, spacing, eta, precision, model, t_start, guidance_scale; at most 8 values each), '@spec.json' or a dict\n"
        "{'rows': {'axis': ..., 'values': [...]}, 'cols': {...}}; the other arguments are every cell's settings,\n"
        "as in Model.sample (model: a bundled name or a path, unless the spec has a model axis). Every cell starts\n"
        "from the same noise (seed) and equals Model.sample with its settings. Returns a dict: 'x' float32\n"
        "(rows, cols, n, dim), the final samples (with position, a shared timeline position in [0, 1], each cell's\n"
        "state there, cells aligned by noise level or, align='step', by step); 'cells' one dict of metrics per\n"
        "cell, row-major (evaluations, wall_ms, energy_distance and energy_floor, exact_ode_rms, displacement\n"
        "against ref_row/ref_col, path_length, straightness, frame); 'spec' the spec as a dict; 'rows' and 'cols'\n"
        "the labels; with trajectories=True also 'trajectories', per cell (row-major) its kept frames float32\n"
        "(n_kept, n, dim), and 'trajectory_frames' their frame indices (every frame unless a cell's frames would\n"
        "exceed 32 Mi floats, then every k-th and the last).\n"
        "See README.md \"Python\" and docs/SEMANTICS.md §10 (installed with the package: help(diffscope)).");
}

}  // namespace diffscope::python
