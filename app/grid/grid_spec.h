// grid_spec.h — the comparison grid's spec (SEMANTICS §10 "The comparison grid"): rows and columns each sweep one
// axis of a sampling run (sampler, steps, spacing, eta, precision, model, t_start, guidance_scale) over at most 8 values, parsed
// from the text "rows=sampler:ddim,heun cols=steps:5,10,20" or from JSON {"rows": {"axis": "sampler",
// "values": [...]}, "cols": {...}} (a .json file, or the `grid` key of a grid PNG's sidecar). No CUDA, no GL.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/run_plan.h"

namespace diffscope {

// One sweepable setting of a run. None: the dimension has one cell with the base run's setting.
enum class GridAxis { None, Sampler, Steps, Spacing, Eta, Precision, Model, TStart, GuidanceScale };

constexpr int kMaxGridValues = 8;  // values per axis (8 x 8 cells at most)

// "sampler", "steps", "spacing", "eta", "precision", "model", "t_start", "guidance_scale"
const char* grid_axis_name(GridAxis a);
const char* grid_axis_choices();         // "sampler, steps, ..." for messages

// One dimension of the grid: its axis and the values as typed (numbers as their text).
struct GridLine {
  GridAxis axis = GridAxis::None;
  std::vector<std::string> values;  // empty for None (one cell)
  int size() const { return values.empty() ? 1 : static_cast<int>(values.size()); }
  bool operator==(const GridLine& o) const { return axis == o.axis && values == o.values; }
};

struct GridSpec {
  GridLine rows, cols;
  int n_rows() const { return rows.size(); }
  int n_cols() const { return cols.size(); }
  bool operator==(const GridSpec& o) const { return rows == o.rows && cols == o.cols; }
};

// Parses the text form ("rows=AXIS:V1,V2,... cols=AXIS:V1,...", either part may be left out, at least one given)
// or, for "@PATH", the file: a JSON spec, or a grid PNG (or its .json sidecar) whose sidecar's `grid` holds `spec`.
// Refuses with InvalidInput naming `arg` (the front end's spelling: the CLI's flag), the dimension, the axis and the
// value, and what is valid: an unknown axis or dimension, the same axis twice, more than 8 values, an empty
// list, or a value that is not of its axis's kind (a sampler name, an integer >= 1 for steps, an integer >= 0
// for t_start, a real in [0, 1] for eta, a real in
// [kMinGuidanceScale, kMaxGuidanceScale] for guidance_scale (SEMANTICS §12; the class is the base run's), a spacing or precision name, a non-empty model name). Whether a value
// suits the model (steps <= t_start + 1, ...) is the run plan's check (grid_run.h plan_grid).
GridSpec parse_grid_spec(const std::string& text, const std::string& arg);
GridSpec grid_spec_from_json(const nlohmann::json& j, const std::string& where);

// {"rows": {"axis": ..., "values": [...]}, "cols": {...}} with numbers as JSON numbers; grid_spec_from_json reads it.
nlohmann::json grid_spec_json(const GridSpec& spec);
// The text form ("rows=sampler:ddim,heun cols=steps:5,10").
std::string grid_spec_text(const GridSpec& spec);

// The label of value i of a dimension: "sampler=ddim" ("" for a dimension without an axis).
std::string grid_label(const GridLine& line, int i);

// Sets `axis` to `value` in `request` (the model axis sets *model, the name or path the front end loads). The
// value is one that parse_grid_spec accepted.
void apply_grid_value(SampleRequest& request, std::string& model, GridAxis axis, const std::string& value);

// The metrics a grid's cell can show (grid_metrics.h computes them, grid_live.h reads one by name), by the name the
// settings key grid_metric takes: energy (energy distance to the held-out data), exact_rms (RMS error against the
// exact ODE, analytic models), displacement (against the row's reference cell), path_length, straightness,
// evaluations (network evaluations), wall_ms (the cell's run time).
const std::vector<std::string>& grid_metric_names();
std::string grid_metric_choices();  // "energy, exact_rms, ..." for messages

}  // namespace diffscope
