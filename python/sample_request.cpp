// sample_request.cpp — Model.sample's arguments as a sampling request.
#include "python/sample_request.h"

namespace diffscope::python {

SampleRequest sample_request(const SampleArgs& a) {
  SampleRequest r;
  r.sampler = a.sampler;
  r.spacing = a.spacing;
  r.steps_offset = a.steps_offset;
  r.steps_offset_named = a.steps_offset.has_value();
  r.eta = a.eta;
  r.t_start = a.t_start;
  r.steps = a.steps;
  r.n = a.n;
  r.seed = a.seed;
  r.from_data = a.from_data;
  r.precision = a.precision;
  r.gpu = a.backend == "cuda";
  r.scheduler_config = a.scheduler_config;
  r.keep_frames = a.trajectory;
  r.trajectory_stride = a.trajectory_stride;
  r.model_name = a.model_name;
  r.prediction_type = a.prediction_type;
  r.sigmas = a.sigmas;
  r.flow_shift = a.flow_shift;
  r.flow_mu = a.flow_mu;
  r.guidance = a.guidance;
  return r;
}

}  // namespace diffscope::python
