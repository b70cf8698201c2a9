// guidance_checks.cpp — the run plan's checks of the class and the guidance settings (SEMANTICS §2, §12).
#include <cmath>
#include <cstdio>
#include <string>

#include "base/arg_error.h"
#include "base/words.h"
#include "run/guidance_checks.h"
#include "run/run_plan.h"

namespace diffscope {
namespace {

void check_class(const SampleRequest& r, const DiffusionModel& model) {
  const int c = r.guidance.class_label, C = model.classes();
  if (c < 0) return;
  if (C == 0)
    throw ArgumentError(Arg::ClassLabel, std::to_string(c), "none",
                        r.name(Arg::ClassLabel) + " = " + std::to_string(c) + ": the model '" + r.model_name +
                            "' has no classes (no class_emb.weight, no mixture classes; SEMANTICS §2, §6); valid: none");
  if (c >= C)
    throw ArgumentError(Arg::ClassLabel, std::to_string(c), "[0, " + std::to_string(C - 1) + "]",
                        r.name(Arg::ClassLabel) + " = " + std::to_string(c) + " is out of range; valid: [0, " +
                            std::to_string(C - 1) + "] (the model has " + std::to_string(C) + " classes)");
}

void check_scale(const Guidance& g, const SampleRequest& r) {
  const std::string range = "[" + round_trip_number(kMinGuidanceScale) + ", " + round_trip_number(kMaxGuidanceScale) + "]";
  if (!(g.scale >= kMinGuidanceScale && g.scale <= kMaxGuidanceScale))
    throw ArgumentError(Arg::GuidanceScale, round_trip_number(g.scale), range,
                        r.name(Arg::GuidanceScale) + " = " + round_trip_number(g.scale) + " is out of range; valid: " + range);
  if (g.scale != 1.0 && g.class_label < 0)
    throw ArgumentError(Arg::GuidanceScale, round_trip_number(g.scale), "1 without a class",
                        r.name(Arg::GuidanceScale) + " = " + round_trip_number(g.scale) + " needs " + r.name(Arg::ClassLabel) +
                            " (classifier-free guidance mixes the class's output with the null class's; SEMANTICS "
                            "§12); valid: 1 without a class");
}

void check_interval_and_rescale(const Guidance& g, const SampleRequest& r) {
  const bool unguided = g.scale == 1.0;
  if (g.has_interval()) {
    const std::string value = round_trip_number(g.sigma_lo) + "," + round_trip_number(g.sigma_hi);
    const std::string range = "LO,HI with 0 <= LO < HI (HI may be inf)";
    if (!(g.sigma_lo >= 0.0 && g.sigma_lo < g.sigma_hi) || std::isnan(g.sigma_hi))
      throw ArgumentError(Arg::GuidanceInterval, value, range,
                          r.name(Arg::GuidanceInterval) + " = " + value + " is not valid; valid: " + range);
    if (unguided)
      throw ArgumentError(Arg::GuidanceInterval, value, "none at guidance scale 1",
                          r.name(Arg::GuidanceInterval) + " = " + value + " changes nothing at " +
                              r.name(Arg::GuidanceScale) + " 1 (SEMANTICS §12); valid: none at guidance scale 1");
  }
  if (g.rescale != 0.0) {
    if (!(g.rescale >= 0.0 && g.rescale <= 1.0))
      throw ArgumentError(Arg::GuidanceRescale, round_trip_number(g.rescale), "[0, 1]",
                          r.name(Arg::GuidanceRescale) + " = " + round_trip_number(g.rescale) + " is out of range; valid: [0, 1]");
    if (unguided)
      throw ArgumentError(Arg::GuidanceRescale, round_trip_number(g.rescale), "0 at guidance scale 1",
                          r.name(Arg::GuidanceRescale) + " = " + round_trip_number(g.rescale) + " changes nothing at " +
                              r.name(Arg::GuidanceScale) + " 1 (SEMANTICS §12); valid: 0 at guidance scale 1");
  }
}

}  // namespace

void check_guidance(const SampleRequest& r, const DiffusionModel& model) {
  check_class(r, model);
  check_scale(r.guidance, r);
  check_interval_and_rescale(r.guidance, r);
  if (r.gpu && (model.classes() > 0 || r.guidance.scale != 1.0))
    throw ArgumentError(Arg::Backend, "cuda", "cpu",
                        r.name(Arg::Backend) + " cuda does not run " +
                            (model.classes() > 0 ? "class-conditional models" : "guidance") +
                            " yet (SEMANTICS §2, §12); valid: " + r.name(Arg::Backend) + " cpu");
}

void check_backend_classes(const DiffusionModel& model, bool gpu) {
  if (gpu && model.classes() > 0)
    throw ArgumentError(Arg::Backend, "cuda", "cpu",
                        arg_ref(Arg::Backend) + " cuda does not run class-conditional models yet (SEMANTICS §2); "
                                                "valid: " + arg_ref(Arg::Backend) + " cpu");
}

}  // namespace diffscope
