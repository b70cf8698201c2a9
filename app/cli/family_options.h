// family_options.h — the model-family options of `sample` and `denoise` (SEMANTICS §2 "Model families", §3
// "Noise-level lists of the families"): --prediction-type, and for `sample` --sigmas (a comma list or @FILE),
// --flow-shift and --flow-mu. Bad values are InvalidInput (exit 2) naming the flag, the value and the valid range.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "model/family.h"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace diffscope::cli {

// The options as typed (empty / not given: unset).
struct FamilyOptions {
  std::string prediction_type;  // a family name (parse_family), "" unset
  std::string sigmas;           // "14.6,5.2,0", or "@FILE" (text, one number a line, or a .npy of shape (N,))
  double flow_shift = 1.0, flow_mu = 0.0;
  CLI::Option *flow_shift_option = nullptr, *flow_mu_option = nullptr;
};

// Adds --prediction-type to `sub`, and with `lists` also --sigmas, --flow-shift and --flow-mu.
void add_family_options(CLI::App* sub, FamilyOptions& f, bool lists);

// --prediction-type's family ("" -> unset). InvalidInput "--prediction-type = 'x' is not a known value; supported:
// epsilon, sample, v_prediction, flow (or flow_prediction), edm".
std::optional<Family> parse_prediction_type_flag(const std::string& text);

// --sigmas' levels ("" -> empty): a comma list ("14.6,5.2,0") or @FILE, a text file with one number a line (blank
// lines skipped) or a .npy (float16/32/64) of shape (N,), at most 1000000 levels. InvalidInput naming --sigmas, the
// entry (its index, or the file's line) and the valid values. The values themselves (finite, strictly decreasing,
// > 0 but the last) are check_sample_request's (run/run_plan.h), as for every front end.
std::vector<double> parse_sigmas_flag(const std::string& text);

// A list as --sigmas takes it back ("14.614599999999999,5.2,0"): every value to 17 significant digits.
std::string sigmas_text(const std::vector<double>& levels);

}  // namespace diffscope::cli
