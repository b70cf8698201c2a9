// command_line.cpp — settings to a shell command line.
#include "core/command_line.h"

#include <cstdio>

#include "core/model_paths.h"

namespace diffscope {

std::string shell_quote(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                                             "0123456789_./:=+-") == std::string::npos;
  if (plain) return text;
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string sample_command_line(const SamplingSettings& s, const std::string& model, const std::string& backend,
                                const std::string& out, const std::string& more) {
  char eta[40];
  std::snprintf(eta, sizeof eta, "%.17g", s.eta);
  const std::string bundled = bundled_name_of(model);  // a name every checkout and install finds
  std::string c = "diffscope sample --model " + shell_quote(bundled.empty() ? absolute_path(model) : bundled) + " --n " + std::to_string(s.n_samples) +
                  " --sampler " + sampler_name(s.sampler) + " --eta " + eta + " --steps " + std::to_string(s.steps) +
                  " --t-start " + std::to_string(s.t_start) + " --seed " + std::to_string(s.seed);
  if (s.spacing != Spacing::Default && s.sampler != Sampler::Ddpm && s.sampler != Sampler::DdpmMean)
    c += std::string(" --spacing ") + spacing_name(s.spacing);
  if (s.from_data) c += " --from-data";
  return c + " --backend " + backend + " --precision " + precision_name(s.precision) + " --out " + shell_quote(out) + more;
}

}  // namespace diffscope
