// guidance_options.h — `sample`'s class and guidance options (SEMANTICS §2, §12): --class, --guidance-scale,
// --guidance-interval, --guidance-rescale, --guide-model. Bad values are InvalidInput (exit 2) naming the flag,
// the value and the valid range; the checks against the model are the run plan's (run/run_plan.h check_guidance).
#pragma once
#include <cstdint>
#include <string>

#include "diffusion/guidance.h"

namespace CLI {
class App;
}  // namespace CLI

namespace diffscope::cli {

// The options as typed; given_* say which came from --config (a sidecar's keys) where no flag was given.
struct GuidanceOptions {
  int64_t class_label = -1;  // -1: not given
  double scale = 1.0, rescale = 0.0;
  std::string interval;      // "LO,HI" ("" not given); HI may be inf
  std::string guide_model;   // autoguidance's guide (refused: not implemented yet)
};

// Adds the options to `sub`.
void add_guidance_options(CLI::App* sub, GuidanceOptions& g);

// The options as the run's Guidance: --class below 0 or above 2^31 - 1, an interval that is not two numbers and a
// --guide-model are refused here (InvalidInput naming the flag, the value and the valid values).
Guidance parse_guidance_options(const GuidanceOptions& g);

// "LO,HI" as --guidance-interval takes it back (17 significant digits, "inf").
std::string guidance_interval_text(double lo, double hi);

}  // namespace diffscope::cli
