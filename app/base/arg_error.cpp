// arg_error.cpp — argument ids and their spelling in messages.
#include "base/arg_error.h"

namespace diffscope {

namespace {
constexpr Arg kArgs[] = {Arg::N, Arg::Sampler, Arg::Spacing, Arg::StepsOffset, Arg::Eta, Arg::Steps, Arg::TStart,
                         Arg::FromData, Arg::TrajectoryStride, Arg::Frame, Arg::SchedulerConfig, Arg::Config,
                         Arg::Precision, Arg::Backend, Arg::X, Arg::Threads, Arg::PredictionType, Arg::Sigmas,
                         Arg::FlowShift, Arg::FlowMu, Arg::ClassLabel, Arg::GuidanceScale,
                         Arg::GuidanceInterval, Arg::GuidanceRescale};
}  // namespace

const char* arg_id(Arg a) {
  switch (a) {
    case Arg::N: return "n";
    case Arg::Sampler: return "sampler";
    case Arg::Spacing: return "spacing";
    case Arg::StepsOffset: return "steps_offset";
    case Arg::Eta: return "eta";
    case Arg::Steps: return "steps";
    case Arg::TStart: return "t_start";
    case Arg::FromData: return "from_data";
    case Arg::TrajectoryStride: return "trajectory_stride";
    case Arg::Frame: return "frame";
    case Arg::SchedulerConfig: return "scheduler_config";
    case Arg::Config: return "config";
    case Arg::Precision: return "precision";
    case Arg::Backend: return "backend";
    case Arg::X: return "x";
    case Arg::Threads: return "threads";
    case Arg::PredictionType: return "prediction_type";
    case Arg::Sigmas: return "sigmas";
    case Arg::FlowShift: return "flow_shift";
    case Arg::FlowMu: return "flow_mu";
    case Arg::ClassLabel: return "class_label";
    case Arg::GuidanceScale: return "guidance_scale";
    case Arg::GuidanceInterval: return "guidance_interval";
    case Arg::GuidanceRescale: return "guidance_rescale";
  }
  return "?";
}

std::string arg_ref(Arg a) { return std::string("{") + arg_id(a) + "}"; }

std::string snake_case_name(Arg a) { return arg_id(a); }

std::string spell_args(const std::string& text, const ArgSpelling& spell) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    bool replaced = false;
    if (text[i] == '{')
      for (Arg a : kArgs) {
        const std::string ref = arg_ref(a);
        if (text.compare(i, ref.size(), ref) == 0) {
          out += spell(a);
          i += ref.size();
          replaced = true;
          break;
        }
      }
    if (!replaced) out += text[i++];
  }
  return out;
}

ArgumentError::ArgumentError(Arg a, std::string v, std::string ok, const std::string& message_text)
    : InvalidInput(spell_args(message_text, snake_case_name)), arg(a), value(std::move(v)), valid(std::move(ok)),
      text(message_text) {}

void check_arg_range(Arg arg, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return;
  const std::string valid = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  throw ArgumentError(arg, std::to_string(value), valid,
                      arg_ref(arg) + " = " + std::to_string(value) + " is out of range; valid: " + valid);
}

}  // namespace diffscope
