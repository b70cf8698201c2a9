// family_options.cpp — --prediction-type, --sigmas, --flow-shift and --flow-mu (see family_options.h).
#include "cli/family_options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdio>
#include <fstream>

#include "base/errors.h"
#include "cli/cli_util.h"
#include "formats/npy.h"

namespace diffscope::cli {
namespace {

const char* kSigmasValid = "valid: finite numbers, strictly decreasing, > 0 but the last (which may be 0)";
constexpr int64_t kMaxSigmas = 1'000'000;  // levels read from a list or a file

// One number, the whole of `v` (std::from_chars: no locale); `where` names it in the message.
double parse_level(const std::string& v, const std::string& where) {
  size_t a = v.find_first_not_of(" \t\r"), b = v.find_last_not_of(" \t\r");
  const std::string t = a == std::string::npos ? "" : v.substr(a, b - a + 1);
  double x = 0;
  const char* first = t.data() + (t.size() > 1 && t[0] == '+' ? 1 : 0);
  const auto r = std::from_chars(first, t.data() + t.size(), x);
  if (t.empty() || r.ec != std::errc() || r.ptr != t.data() + t.size())
    throw InvalidInput(where + " = '" + t + "' is not a number; " + kSigmasValid);
  return x;
}

// The levels of @FILE: a .npy of shape (N,), else text with one number a line.
std::vector<double> read_levels_file(const std::string& path) {
  const std::string arg = "--sigmas @" + path;
  std::vector<double> levels;
  if (path.size() >= 4 && path.compare(path.size() - 4, 4, ".npy") == 0) {
    NpyDouble a = read_npy_double(path, "--sigmas");
    if (a.shape.size() != 1)
      throw InvalidInput(arg + " has " + std::to_string(a.shape.size()) + " dimensions; valid: a .npy of shape (N,)");
    return std::move(a.data);
  }
  std::ifstream in(path);
  if (!in) throw InvalidInput(arg + ": cannot be read; valid: an existing text file (one number a line) or .npy");
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    if (static_cast<int64_t>(levels.size()) >= kMaxSigmas)
      throw InvalidInput(arg + " has more than 1000000 levels; valid: at most 1000000");
    levels.push_back(parse_level(line, arg + " line " + std::to_string(n)));
  }
  return levels;
}

}  // namespace

void add_family_options(CLI::App* sub, FamilyOptions& f, bool lists) {
  sub->add_option("--prediction-type", f.prediction_type,
                  std::string("the model family of a file that names none: ") + family_choices() +
                      " (a file naming another is refused; SEMANTICS §2)");
  if (!lists) return;
  sub->add_option("--sigmas", f.sigmas,
                  "a typed list of noise levels in the family's own level (VE sigma for the VP families and edm, s "
                  "for flow): 14.6,5.2,0 or @FILE (one number a line, or a .npy of shape (N,)); strictly decreasing, "
                  "> 0 but the last (a final 0 is added when missing); --steps is its number of steps");
  f.flow_shift_option = sub->add_option("--flow-shift", f.flow_shift,
                                        "flow: the shift of the noise-level list, > 0 (default: the scheduler "
                                        "config's, else the model file's shift, else 1)");
  f.flow_mu_option = sub->add_option("--flow-mu", f.flow_mu,
                                     "flow: mu of diffusers' dynamic shifting (use_dynamic_shifting), a finite number");
}

std::optional<Family> parse_prediction_type_flag(const std::string& text) {
  if (text.empty()) return std::nullopt;
  return parse_family(text, "--prediction-type");
}

std::vector<double> parse_sigmas_flag(const std::string& text) {
  if (text.empty()) return {};
  std::vector<double> levels;
  if (text[0] == '@') {
    levels = read_levels_file(text.substr(1));
  } else {
    size_t at = 0;
    for (int64_t i = 0;; ++i) {
      const size_t comma = text.find(',', at);
      if (static_cast<int64_t>(levels.size()) >= kMaxSigmas)
        throw InvalidInput("--sigmas has more than 1000000 levels; valid: at most 1000000");
      levels.push_back(parse_level(text.substr(at, comma - at), "--sigmas[" + std::to_string(i) + "]"));
      if (comma == std::string::npos) break;
      at = comma + 1;
    }
  }
  return levels;
}

std::string sigmas_text(const std::vector<double>& levels) {
  std::string s;
  for (double v : levels) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    s += (s.empty() ? "" : ",") + std::string(b);
  }
  return s;
}

}  // namespace diffscope::cli
