// guidance_options.cpp — --class, --guidance-scale, --guidance-interval, --guidance-rescale, --guide-model (see
// guidance_options.h).
#include "cli/guidance_options.h"

#include <CLI/CLI.hpp>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>

#include "base/errors.h"

namespace diffscope::cli {
namespace {

// One number of the interval, the whole text ("inf" allowed); nullopt-like failure by `ok`.
bool parse_bound(const std::string& t, double* out) {
  const char* first = t.data() + (t.size() > 1 && t[0] == '+' ? 1 : 0);
  const auto r = std::from_chars(first, t.data() + t.size(), *out);
  return !t.empty() && r.ec == std::errc() && r.ptr == t.data() + t.size() && !std::isnan(*out);
}

}  // namespace

void add_guidance_options(CLI::App* sub, GuidanceOptions& g) {
  sub->add_option("--class", g.class_label,
                  "the class of a class-conditional model (class_emb.weight), in [0, C-1]; without it the null class "
                  "(SEMANTICS §2)");
  sub->add_option("--guidance-scale", g.scale,
                  "classifier-free guidance scale w (diffusers' guidance_scale): o_u + w (o_c - o_u), in [-20, 100]; "
                  "1 (default) the class alone; needs --class (SEMANTICS §12)");
  sub->add_option("--guidance-interval", g.interval,
                  "LO,HI: guide only where the VE sigma is in [LO, HI] (0 <= LO < HI, HI may be inf), elsewhere w = 1");
  sub->add_option("--guidance-rescale", g.rescale,
                  "guidance rescale phi (Lin et al. 2024), in [0, 1]; 0 (default) none");
  sub->add_option("--guide-model", g.guide_model, "autoguidance's guide model (not implemented yet: refused)");
}

Guidance parse_guidance_options(const GuidanceOptions& o) {
  Guidance g;
  if (o.class_label != -1 && (o.class_label < 0 || o.class_label > INT_MAX))
    throw InvalidInput("--class = " + std::to_string(o.class_label) +
                       " is out of range; valid: [0, C-1], C the model's classes (SEMANTICS §2)");
  g.class_label = static_cast<int>(o.class_label);
  g.scale = o.scale;
  g.rescale = o.rescale;
  if (!o.interval.empty()) {
    const size_t comma = o.interval.find(',');
    const bool two = comma != std::string::npos && o.interval.find(',', comma + 1) == std::string::npos;
    if (!two || !parse_bound(o.interval.substr(0, comma), &g.sigma_lo) ||
        !parse_bound(o.interval.substr(comma + 1), &g.sigma_hi))
      throw InvalidInput("--guidance-interval = '" + o.interval +
                         "' is not two numbers; valid: LO,HI with 0 <= LO < HI (HI may be inf), e.g. 0.28,5.42");
  }
  if (!o.guide_model.empty())
    throw InvalidInput("--guide-model = '" + o.guide_model +
                       "': autoguidance is not implemented yet (SEMANTICS §12); valid: none");
  return g;
}

std::string guidance_interval_text(double lo, double hi) {
  char b[80];
  std::snprintf(b, sizeof b, "%.17g,%.17g", lo, hi);
  return b;
}

}  // namespace diffscope::cli
