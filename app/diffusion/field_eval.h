// field_eval.h — the eps (or predicted clean point) field of a 2D model at points, on the CPU: what the CPU
// compute path draws as arrows and `diffscope sample --png` draws for a picture with the field on.
#pragma once
#include "model/model.h"

namespace diffscope {

// pts (n, dim), out (n, dim): the network's eps at timestep t, or with x0 the predicted clean point
// x0 = (x - sqrt(1 - abar_t) eps) / sqrt(abar_t) (SEMANTICS §3, ddim's x0). Float32 as the CPU backend.
void eval_field_cpu(const DiffusionModel& model, const float* pts, int n, int t, bool x0, float* out);

}  // namespace diffscope
