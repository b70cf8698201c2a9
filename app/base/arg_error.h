// arg_error.h — errors that name an argument by what it means, not by how a front end spells it: the core
// throws ArgumentError with an argument id, the value and the valid range or choices; the CLI says --t-start,
// Python t_start, the app and a headless script the setting key t_start (SEMANTICS §9).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "base/errors.h"

namespace diffscope {

// The arguments the core's checks name.
enum class Arg { N, Sampler, Spacing, StepsOffset, Eta, Steps, TStart, FromData, TrajectoryStride, Frame,
                 SchedulerConfig, Config, Precision, Backend, X, Threads, PredictionType, Sigmas, FlowShift, FlowMu,
                 ClassLabel, GuidanceScale, GuidanceInterval, GuidanceRescale };

// The id of an argument in snake_case ("t_start", "steps_offset"): Python's keyword and the script's setting key.
const char* arg_id(Arg a);
// How one front end names an argument in its messages.
using ArgSpelling = std::function<std::string(Arg)>;
// The mention of an argument inside an ArgumentError's text, "{t_start}", which spell_args replaces.
std::string arg_ref(Arg a);
// `text` with every "{id}" of an argument replaced by spell(argument).
std::string spell_args(const std::string& text, const ArgSpelling& spell);
// The spelling of what(): the id itself.
std::string snake_case_name(Arg a);

// Bad input that names its argument: `arg`, the `value` as given, the `valid` range or choices, and the message
// `text` with arg_ref mentions ("{t_start} = 5000 is out of range; valid: [0, 999]"). what() spells the ids
// (snake_case_name); a front end shows message(its spelling).
struct ArgumentError : InvalidInput {
  ArgumentError(Arg arg, std::string value, std::string valid, const std::string& text);
  std::string message(const ArgSpelling& spell) const { return spell_args(text, spell); }
  Arg arg;
  std::string value, valid, text;
};

// Throws ArgumentError "<arg> = <value> is out of range; valid: [lo, hi]" when value is outside [lo, hi].
void check_arg_range(Arg arg, int64_t value, int64_t lo, int64_t hi);

}  // namespace diffscope
