// input_checks.cpp — the ranges that depend on a model and the denoise input checks (SEMANTICS §3, §4).
#include "diffusion/input_checks.h"

#include "base/arg_error.h"

#include <cmath>
#include <sstream>

#include "base/errors.h"

namespace diffscope {

IntRange t_start_range(const Schedule& s) { return {0, static_cast<int64_t>(s.T) - 1}; }

IntRange sample_steps_range(int t_start) { return {1, static_cast<int64_t>(t_start) + 1}; }

// The same bound on both backends: the CPU is just slower (1e6 rows x 1000 steps of the reference
// network is hours on two cores, but not wrong). Memory beyond that is the user's to ask for.
IntRange sample_count_range(bool /*gpu*/) { return {1, 1'000'000}; }

void check_eta(double eta, const std::string& arg) {
  if (!(eta >= kEtaMin && eta <= kEtaMax)) {  // also refuses NaN
    std::ostringstream os;
    os << (arg.empty() ? arg_ref(Arg::Eta) : arg) << " = " << eta << " is out of range; valid: [" << kEtaMin << ", " << kEtaMax << "]";
    if (arg.empty()) throw ArgumentError(Arg::Eta, std::to_string(eta), "[0, 1]", os.str());
    throw InvalidInput(os.str());
  }
}

FamilyParams family_with_prediction_type(const DiffusionModel& model, Family f, std::string* note) {
  if (model.family_in_file) {
    if (model.family.family == f) return model.family;
    throw ArgumentError(Arg::PredictionType, family_name(f), family_name(model.family.family),
                        arg_ref(Arg::PredictionType) + " = " + family_name(f) + " contradicts the model file, whose " +
                            "prediction_type is " + family_name(model.family.family) + "; valid: " +
                            family_name(model.family.family) + " or leave it out");
  }
  FamilyParams p = model.family;
  p.family = f;
  // The file's own time_input, read for the family it runs as (one that family has no such input for is refused).
  const auto ti = model.metadata.find("time_input");
  p.time_input = ti == model.metadata.end() ? default_time_input(f) : parse_time_input(ti->second, f);
  if (note && f != model.family.family)
    *note += "the model file names no prediction_type: it runs as " + std::string(family_name(f)) +
             ", network time input " + time_input_name(p.time_input) + "\n";
  return p;
}

void validate_denoise_inputs(const DiffusionModel& model, const float* x, int64_t B, int64_t x_cols,
                             const int64_t* t_start, int64_t n_t_start, int64_t S) {
  const int dim = model.net.dim;
  const std::string x_ref = arg_ref(Arg::X), t_ref = arg_ref(Arg::TStart);
  if (B < 1) throw ArgumentError(Arg::X, std::to_string(B) + " rows", "at least 1", x_ref + " has " + std::to_string(B) + " rows; valid: at least 1");
  if (x_cols != dim) {
    throw ArgumentError(Arg::X, "width " + std::to_string(x_cols), "(B, " + std::to_string(dim) + ")",
                        x_ref + " has width " + std::to_string(x_cols) + " but the model '" + model.path + "' has dim " +
                            std::to_string(dim) + "; valid: x of shape (B, " + std::to_string(dim) + ")");
  }
  if (n_t_start != B) {
    throw ArgumentError(Arg::TStart, std::to_string(n_t_start) + " entries", "one t_start per row",
                        t_ref + " has " + std::to_string(n_t_start) + " entries but " + x_ref + " has " +
                            std::to_string(B) + " rows; valid: one t_start per row");
  }
  for (int64_t i = 0; i < B * x_cols; ++i) {
    if (!std::isfinite(x[i])) {
      std::ostringstream os;
      os << x_ref << "[" << i / x_cols << "][" << i % x_cols << "] = " << x[i] << " is not finite; valid: finite values";
      throw ArgumentError(Arg::X, std::to_string(x[i]), "finite values", os.str());
    }
  }
  const IntRange tr = t_start_range(model.schedule);
  for (int64_t b = 0; b < B; ++b) {
    if (!tr.contains(t_start[b])) {
      std::ostringstream os;
      os << t_ref << "[" << b << "] = " << t_start[b] << " is out of range; valid: [" << tr.lo << ", " << tr.hi << "]";
      throw ArgumentError(Arg::TStart, std::to_string(t_start[b]), "[" + std::to_string(tr.lo) + ", " + std::to_string(tr.hi) + "]", os.str());
    }
  }
  if (S < 1)
    throw ArgumentError(Arg::Steps, std::to_string(S), "at least 1",
                        arg_ref(Arg::Steps) + " = " + std::to_string(S) + " is out of range; valid: at least 1");
}

}  // namespace diffscope
