// field_eval.cpp — see field_eval.h.
#include "diffusion/field_eval.h"

#include <cmath>

#include "diffusion/cpu_reference.h"

namespace diffscope {

void eval_field_cpu(const DiffusionModel& model, const float* pts, int n, int t, bool x0, float* out) {
  if (n <= 0) return;
  const cpu_ref::EpsModelT<float> net(model);
  cpu_ref::eps_batch(net, model.schedule, pts, n, t, out);
  if (x0) {
    const double abar = model.schedule.alphas_cumprod[t];
    const float a = static_cast<float>(1.0 / std::sqrt(abar)), b = static_cast<float>(std::sqrt(1.0 - abar));
    for (int i = 0; i < n * net.dim; ++i) out[i] = a * (pts[i] - b * out[i]);  // SEMANTICS §3 ddim x0
  }
}

}  // namespace diffscope
