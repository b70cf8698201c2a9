// sample_request.h — Model.sample's arguments, converted from Python objects, as a sampling request
// (run/run_plan.h). No pybind11 here: the unit tests compare it with the CLI's and the GUI's conversions.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "run/run_plan.h"

namespace diffscope::python {

// Model.sample's keywords as C++ values (None: unset).
struct SampleArgs {
  int64_t n = 4096;
  Sampler sampler = Sampler::Ddim;
  std::optional<Spacing> spacing;
  std::optional<int64_t> steps_offset;
  double eta = 0.0;
  std::optional<int64_t> steps, t_start;
  uint64_t seed = 0;
  bool from_data = false;
  std::string backend = "cpu";
  Precision precision = Precision::Fp32;
  bool trajectory = false;
  int64_t trajectory_stride = 1;
  const SchedulerConfig* scheduler_config = nullptr;
  std::string model_name;
  // Model families (SampleRequest's): None -> unset / empty.
  std::optional<Family> prediction_type;
  std::vector<double> sigmas;
  std::optional<double> flow_shift, flow_mu;
  Guidance guidance;  // class_label and the guidance keywords (SEMANTICS §12)
};

// The request of a Model.sample call: the arguments by Python's names (snake_case_name), every trajectory
// frame kept at trajectory_stride (no trail budget).
SampleRequest sample_request(const SampleArgs& a);

}  // namespace diffscope::python
