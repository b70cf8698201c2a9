// backend.cpp — DenoiserBackend's host defaults: the start noise and the eps field computed on the CPU
// (a backend that computes them on its device overrides them; SEMANTICS §7).
#include "run/backend.h"

#include "diffusion/field_eval.h"
#include "diffusion/sampling.h"

namespace diffscope {

void DenoiserBackend::start_noise(const DiffusionModel& model, uint64_t seed, int n, float* x) {
  fill_start_noise(model, seed, n, x);
}

void DenoiserBackend::eps_field(const DiffusionModel& model, const float* pts, int n, int t, bool x0, float* out) {
  eval_field_cpu(model, pts, n, t, x0, out);
}

}  // namespace diffscope
