// step_table.cpp — step lists and per-step affine coefficients of the samplers (SEMANTICS §3).
#include "core/step_table.h"

#include <algorithm>
#include <cmath>

#include "core/errors.h"
#include "core/ranges.h"

namespace diffscope {

Sampler parse_sampler(const std::string& name) {
  if (name == "ddim") return Sampler::Ddim;
  if (name == "ddpm") return Sampler::Ddpm;
  if (name == "ddpm-mean") return Sampler::DdpmMean;
  throw InvalidInput("--sampler = '" + name + "' is not a sampler; valid: ddim, ddpm, ddpm-mean");
}

const char* sampler_name(Sampler s) {
  switch (s) {
    case Sampler::Ddim: return "ddim";
    case Sampler::Ddpm: return "ddpm";
    case Sampler::DdpmMean: return "ddpm-mean";
  }
  return "unknown";
}

// t_i = round(t_start (N-1-i) / (N-1)), half away from zero, in exact integer arithmetic:
// for num, den >= 0, round(num / den) = floor((2 num + den) / (2 den)).
std::vector<int32_t> ddim_timesteps(int t_start, int n_steps) {
  if (t_start < 0) throw InvalidInput("--t-start = " + std::to_string(t_start) + " is out of range; valid: >= 0");
  check_range("--steps", n_steps, sample_steps_range(t_start));
  if (n_steps == 1) return {static_cast<int32_t>(t_start)};
  std::vector<int32_t> t(n_steps);
  const int64_t den = n_steps - 1;
  for (int i = 0; i < n_steps; ++i) {
    const int64_t num = static_cast<int64_t>(t_start) * (n_steps - 1 - i);
    t[i] = static_cast<int32_t>((2 * num + den) / (2 * den));
  }
  return t;
}

namespace {

void fill_float_copies(StepTable& tab) {
  tab.for_each_coefficient([](const char*, const std::vector<double>& f64, std::vector<float>& f32) {
    f32.assign(f64.begin(), f64.end());
  });
}

// ddpm / ddpm-mean step at t: A = c1, B = -c1 c2, S = sigma (ddpm) or 0 (ddpm-mean).
void push_ddpm_step(StepTable& tab, const Schedule& s, int t, bool with_noise) {
  const double c1 = s.sqrt_recip_alphas[t], c2 = s.coef_eps[t];
  tab.t.push_back(t);
  tab.A.push_back(c1);
  tab.B.push_back(-c1 * c2);
  tab.S.push_back(with_noise ? s.posterior_sigma[t] : 0.0);
}

}  // namespace

StepTable build_step_table(const Schedule& sched, Sampler sampler, int t_start, int n_steps, double eta) {
  check_range("--t-start", t_start, t_start_range(sched));
  check_range("--steps", n_steps, sample_steps_range(t_start));
  if (sampler == Sampler::Ddim) check_eta(eta);

  StepTable tab;
  tab.sampler = sampler;
  tab.T = sched.T;
  tab.eta = sampler == Sampler::Ddim ? eta : 0.0;
  if (sampler != Sampler::Ddim) {
    for (int k = 0; k < n_steps; ++k) push_ddpm_step(tab, sched, t_start - k, sampler == Sampler::Ddpm);
  } else {
    // x0 = (x - sqrt(1-a) eps) / sqrt(a); x <- sqrt(ap) x0 + sqrt(max(0, 1-ap-s^2)) eps + s z, written as
    // A = sqrt(ap/a), B = sqrt(max(0, 1-ap-s^2)) - sqrt(ap) sqrt(1-a) / sqrt(a), S = s.
    tab.t = ddim_timesteps(t_start, n_steps);
    for (int i = 0; i < n_steps; ++i) {
      const double a = sched.alphas_cumprod[tab.t[i]];
      const double ap = i + 1 < n_steps ? sched.alphas_cumprod[tab.t[i + 1]] : 1.0;
      const double s = eta * std::sqrt((1.0 - ap) / (1.0 - a)) * std::sqrt(1.0 - a / ap);
      tab.A.push_back(std::sqrt(ap / a));
      tab.B.push_back(std::sqrt(std::max(0.0, 1.0 - ap - s * s)) - std::sqrt(ap) * std::sqrt(1.0 - a) / std::sqrt(a));
      tab.S.push_back(s);
    }
  }
  fill_float_copies(tab);
  return tab;
}

StepTable build_t_indexed_ddpm_mean(const Schedule& sched) {
  StepTable tab;
  tab.sampler = Sampler::DdpmMean;
  tab.T = sched.T;
  for (int t = 0; t < sched.T; ++t) push_ddpm_step(tab, sched, t, false);
  fill_float_copies(tab);
  return tab;
}

}  // namespace diffscope
