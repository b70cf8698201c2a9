// field_view.h — the model family as the GUI sees it (SEMANTICS §2 "Model families", §6 "The field view"): the
// family a run takes, what t_start means on it (a timestep on the VP families, an index into the list of levels
// on flow and edm), the note when the prediction_type override does not apply, and the field view's quantities
// (eps, the data prediction x0, the network's raw output, the score) at a frame's noise level.
#pragma once
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/ranges.h"
#include "diffusion/scheduler_config.h"
#include "diffusion/step_table.h"
#include "model/family.h"
#include "model/model.h"
#include "session/field_quantity.h"
#include "session/settings_io.h"

namespace diffscope {

// The family the app runs `model` in (SEMANTICS §2): the file's when it names one (family_in_file; the app then
// leaves the override out of the request and notes it: ignored_override_note), else the prediction_type override,
// else the file's default (epsilon; an analytic model's own).
Family gui_family(const DiffusionModel& model, const std::optional<Family>& prediction_type);
// Whether runs of family `f` step along a list of noise levels (flow, edm: FAMILIES.md): t_start is then the index
// of the first step in the list, in [0, steps - 1], default 0; on the VP families it is a timestep in [0, T - 1].
bool t_start_is_index(Family f);
// Whether `tab` steps along a flow or edm list (its levels, N + 1 of them, are the family's own: flow s, EDM
// sigma in NoiseLevel::time).
bool on_family_list(const StepTable& tab);
// t_start's range for a run of `steps` steps: [0, steps - 1] on a list, else t_start_range(model.schedule).
IntRange family_t_start_range(const DiffusionModel& model, Family f, int steps);
// t_start's default for a run of `model` with that override: on a list 0 (an analytic model's flow
// list: 1, past alpha = 0), on sample / v_prediction T - 1, on epsilon t_start_max_usable (T - 1, or below the
// first unusable t; run/finite_checks.h).
int family_default_t_start(const DiffusionModel& model, const std::optional<Family>& prediction_type);
// steps' range: [1, T] on a list, else [1, t_start + 1] (sample_steps_range).
IntRange family_steps_range(const DiffusionModel& model, Family f, int t_start);
// "" or, when the file names its own family and the override names another, the note the UI shows:
// "prediction_type flow is ignored: the file names v_prediction (SEMANTICS §2)".
std::string ignored_override_note(const DiffusionModel& model, const std::optional<Family>& prediction_type);

// The family and the noise level of the field at frame j of a run (the level of step min(j, N - 1): after the
// last step the field of that step). A table without family rows (an epsilon network reading t/T, or a table
// without levels) gives the VP level at its integer timestep t, which the compute path's eps field reads.
struct FieldLevel {
  FamilyParams family;
  NoiseLevel level;
  int t = 0;              // the integer timestep (field_timestep of the table's t)
  bool path_eps = false;  // the compute path's eps field at t applies (no family rows)
};
FieldLevel field_level(const DiffusionModel& model, const StepTable& table, int frame);

// The compute path's field (ComputePath::field): eps (x0 = false) or the predicted clean point at timestep t.
using PathField = std::function<void(const float* pts, int n, int t, bool x0, float* out)>;

// What picture/field_lines takes for quantity q at n points pts (n, dim) of the family's state: for x0 the data
// prediction D (a line to it); otherwise the vector whose negative is drawn as an arrow: eps, the raw output o,
// or -score = eps / sigma (so the arrow is the score). From the compute path where path_eps, else on the host: o
// = the network at (c_in x, time) (model/family.h network_input) or the mixture's exact eps, then D and eps by
// output_map; the other quantities are affine in (x, eps). out: (n, dim). Returns the largest |quantity| over
// the points (the field's scale, for the legend).
double eval_field(const DiffusionModel& model, const FieldLevel& f, FieldQuantity q, const float* pts, int n,
                  float* out, const PathField& path);

// The legend's words for q on `family`: "eps", "x0 (data prediction)", "output (v)", "output (velocity)", "score".
std::string field_quantity_label(FieldQuantity q, Family family);

}  // namespace diffscope
