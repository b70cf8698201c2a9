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

namespace {
// A number as typed back in messages: "0.5", "1e-30", "14.6146".
std::string number_text(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}
}  // namespace

void check_sigmas(const std::vector<double>& s) {
  const std::string ref = arg_ref(Arg::Sigmas);
  const char* rule = "finite levels, strictly decreasing, > 0 but the last (which may be 0)";
  if (s.empty()) throw ArgumentError(Arg::Sigmas, "(empty)", rule, ref + " is empty; valid: at least one level");
  if (static_cast<int64_t>(s.size()) > kMaxSigmas)
    throw ArgumentError(Arg::Sigmas, std::to_string(s.size()) + " levels", "at most 1000000 levels",
                        ref + " has " + std::to_string(s.size()) + " levels; valid: at most 1000000");
  for (size_t i = 0; i < s.size(); ++i) {
    const std::string at = ref + "[" + std::to_string(i) + "] = " + number_text(s[i]);
    const bool last = i + 1 == s.size();
    if (!std::isfinite(s[i])) throw ArgumentError(Arg::Sigmas, number_text(s[i]), rule, at + " is not finite; valid: " + rule);
    if (s[i] < 0 || (s[i] == 0 && !last))
      throw ArgumentError(Arg::Sigmas, number_text(s[i]), rule,
                          at + (last ? " is negative" : " is not > 0 (only the last level may be 0)") + "; valid: " + rule);
    if (i > 0 && !(s[i] < s[i - 1]))
      throw ArgumentError(Arg::Sigmas, number_text(s[i]), rule,
                          at + " is not below the level before it (" + number_text(s[i - 1]) + "); valid: " + rule);
  }
}

void check_flow_shift(double shift) {
  if (!(std::isfinite(shift) && shift > 0))
    throw ArgumentError(Arg::FlowShift, number_text(shift), "> 0",
                        arg_ref(Arg::FlowShift) + " = " + number_text(shift) + " is out of range; valid: a finite number > 0");
}

void check_flow_mu(double mu) {
  if (!std::isfinite(mu))
    throw ArgumentError(Arg::FlowMu, number_text(mu), "finite",
                        arg_ref(Arg::FlowMu) + " = " + number_text(mu) + " is not finite; valid: a finite number");
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
