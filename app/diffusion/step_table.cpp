// step_table.cpp — spacings (step lists) and per-step affine coefficients of every solver (SEMANTICS §3).
#include "diffusion/step_table.h"

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <stdexcept>
#include <string>

#include "base/arg_error.h"
#include "base/errors.h"
#include "base/ranges.h"
#include "diffusion/input_checks.h"

namespace diffscope {
namespace {

template <class E>
struct Named {
  E value;
  const char* name;
};
constexpr Named<Sampler> kSamplers[] = {{Sampler::Ddim, "ddim"},
                                        {Sampler::Ddpm, "ddpm"},
                                        {Sampler::DdpmMean, "ddpm-mean"},
                                        {Sampler::Dpmpp2m, "dpmpp-2m"},
                                        {Sampler::Dpmpp2mSde, "dpmpp-2m-sde"},
                                        {Sampler::EulerAncestral, "euler-ancestral"},
                                        {Sampler::Heun, "heun"},
                                        {Sampler::FlowEuler, "flow-euler"},
                                        {Sampler::FlowHeun, "flow-heun"}};
constexpr Named<Spacing> kSpacings[] = {{Spacing::Default, "default"},
                                        {Spacing::Leading, "leading"},
                                        {Spacing::Linspace, "linspace"},
                                        {Spacing::Trailing, "trailing"},
                                        {Spacing::Karras, "karras"}};

template <class E, size_t N>
E parse_named(const Named<E> (&table)[N], const std::string& name, const char* arg, Arg id, const char* what,
              const char* choices) {
  for (const auto& e : table)
    if (name == e.name) return e.value;
  if (arg) throw InvalidInput(std::string(arg) + " = '" + name + "' is not a " + what + "; valid: " + choices);
  throw ArgumentError(id, name, choices, arg_ref(id) + " = '" + name + "' is not a " + what + "; valid: " + choices);
}

template <class E, size_t N>
const char* name_of(const Named<E> (&table)[N], E value) {
  for (const auto& e : table)
    if (e.value == value) return e.name;
  return "unknown";
}

template <class E, size_t N>
std::vector<std::string> names_of(const Named<E> (&table)[N]) {
  std::vector<std::string> v;
  for (const auto& e : table) v.push_back(e.name);
  return v;
}

// round half to even, as numpy's round (the FE_TONEAREST mode every caller runs in).
double round_half_even(double v) { return std::nearbyint(v); }
}  // namespace

void fill_float_copies(StepTable& tab) {
  tab.for_each_coefficient([](const char*, const std::vector<double>& f64, std::vector<float>& f32) {
    f32.assign(f64.begin(), f64.end());
  });
}

namespace {


// ddpm / ddpm-mean step at t: A = c1, C = -c1 c2, S = sigma (ddpm) or 0 (ddpm-mean).
void push_ddpm_step(StepTable& tab, const Schedule& s, int t, bool with_noise) {
  const double c1 = s.sqrt_recip_alphas[t], c2 = s.coef_eps[t];
  tab.t.push_back(t);
  tab.t_net.push_back(t);
  tab.noise_key.push_back(static_cast<uint32_t>(t));
  tab.abar.push_back(s.alphas_cumprod[t]);
  tab.A.push_back(c1);
  tab.C.push_back(-c1 * c2);
  tab.S.push_back(with_noise ? s.posterior_sigma[t] : 0.0);
}

// ddim (SEMANTICS §3): x0 = (x - sqrt(1-a) eps) / sqrt(a); x <- sqrt(ap) x0 + sqrt(max(0, 1-ap-s^2)) eps + s z,
// written as A = sqrt(ap/a), C = sqrt(max(0, 1-ap-s^2)) - sqrt(ap) sqrt(1-a) / sqrt(a), S = s.
void ddim_coefficients(StepTable& tab, double a, double ap) {
  const double eta = tab.eta;
  const double s = eta * std::sqrt((1.0 - ap) / (1.0 - a)) * std::sqrt(1.0 - a / ap);
  tab.A.push_back(std::sqrt(ap / a));
  tab.C.push_back(std::sqrt(std::max(0.0, 1.0 - ap - s * s)) - std::sqrt(ap) * std::sqrt(1.0 - a) / std::sqrt(a));
  tab.S.push_back(s);
}

double ve_sigma(double abar) { return std::sqrt((1.0 - abar) / abar); }
double log_snr_half(double abar) { return 0.5 * std::log(abar / (1.0 - abar)); }  // lambda = log(alpha/sigma)

}  // namespace

// The new solvers' coefficients over abar[0..N-1] and abar_N = abar_end (SEMANTICS §3, each with its source). A
// step to abar = 1 is the last step of its solver (dpmpp returns the data prediction, heun takes Euler only,
// euler-ancestral adds no noise).
void vp_solver_rows(StepTable& tab, double abar_end) {
  const int N = static_cast<int>(tab.abar.size());
  auto next = [&](int k) { return k + 1 < N ? tab.abar[k + 1] : abar_end; };
  for (int k = 0; k < N; ++k) {
    const double a = tab.abar[k], an = next(k);
    const bool last = an >= 1.0;
    const double s = ve_sigma(a), sn = last ? 0.0 : ve_sigma(an);
    const double dx = 1.0 / std::sqrt(a), de = -std::sqrt(1.0 - a) / std::sqrt(a);  // x0 = dx x + de eps
    double A = 0, C = 0, S = 0, P = 0, H = 0;
    switch (tab.sampler) {
      case Sampler::EulerAncestral: {
        // k-diffusion sample_euler_ancestral, get_ancestral_step(eta = 1), on x_VE = x / sqrt(abar):
        // x_VE <- x_VE + (sigma_down - sigma) eps + sigma_up z; back to x = sqrt(abar_next) x_VE.
        const double su = last ? 0.0 : std::min(sn, std::sqrt(sn * sn * (s * s - sn * sn) / (s * s)));
        const double sd = std::sqrt(std::max(0.0, sn * sn - su * su));
        A = std::sqrt(an) / std::sqrt(a);
        C = std::sqrt(an) * (sd - s);
        S = std::sqrt(an) * su;
        break;
      }
      case Sampler::Heun: {
        // Karras et al. 2022 Alg. 1: Euler to sigma_next, then the trapezoid correction (not on the last step).
        A = std::sqrt(an) / std::sqrt(a);
        C = std::sqrt(an) * (sn - s);
        H = last ? 0.0 : 0.5 * C;
        break;
      }
      case Sampler::Dpmpp2m:
      case Sampler::Dpmpp2mSde: {
        if (last) {  // the step to abar = 1 returns the data prediction
          A = dx, C = de;
          break;
        }
        const double h = log_snr_half(an) - log_snr_half(a);
        const double r = k > 0 ? (log_snr_half(a) - log_snr_half(tab.abar[k - 1])) / h : 0.0;
        const double w_prev = k > 0 ? 0.5 / r : 0.0;  // D = (1 + w) x0 - w prev (second order from step 1)
        double ax, c;
        if (tab.sampler == Sampler::Dpmpp2m) {
          // Lu et al. 2022 (arXiv 2211.01095) Alg. 2: x <- (sigma_n/sigma) x - alpha_n (e^-h - 1) D.
          ax = std::sqrt(1.0 - an) / std::sqrt(1.0 - a);
          c = -std::sqrt(an) * std::expm1(-h);
        } else {
          // k-diffusion sample_dpmpp_2m_sde, midpoint, eta = 1: x_VE <- (s_n/s) e^-h x_VE + (1 - e^-2h) D
          //   + sigma_n sqrt(1 - e^-2h) z.
          const double q = -std::expm1(-2.0 * h);
          ax = std::exp(-h) * std::sqrt(1.0 - an) / std::sqrt(1.0 - a);
          c = std::sqrt(an) * q;
          S = std::sqrt(1.0 - an) * std::sqrt(q);
        }
        A = ax + c * (1.0 + w_prev) * dx;
        C = c * (1.0 + w_prev) * de;
        P = -c * w_prev;
        break;
      }
      default: break;
    }
    tab.A.push_back(A);
    tab.C.push_back(C);
    tab.S.push_back(S);
    if (tab.sampler == Sampler::Dpmpp2m || tab.sampler == Sampler::Dpmpp2mSde) {
      tab.P.push_back(P);
      tab.Dx.push_back(dx);
      tab.De.push_back(de);
    }
    if (tab.sampler == Sampler::Heun) {
      tab.H.push_back(H);
      tab.t_net2.push_back(last ? 0.0 : tab.t_net[k + 1]);
      tab.abar2.push_back(last ? 1.0 : an);
    }
  }
}

Sampler parse_sampler(const std::string& name, const char* arg) {
  return parse_named(kSamplers, name, arg, Arg::Sampler, "sampler", sampler_choices());
}
const char* sampler_name(Sampler s) { return name_of(kSamplers, s); }
const char* sampler_choices() {
  return "ddim, ddpm, ddpm-mean, dpmpp-2m, dpmpp-2m-sde, euler-ancestral, heun, flow-euler, flow-heun";
}
std::vector<std::string> sampler_names() { return names_of(kSamplers); }

Spacing parse_spacing(const std::string& name, const char* arg) {
  return parse_named(kSpacings, name, arg, Arg::Spacing, "spacing", spacing_choices());
}
const char* spacing_name(Spacing s) { return name_of(kSpacings, s); }
const char* spacing_choices() { return "default, leading, linspace, trailing, karras"; }
std::vector<std::string> spacing_names() { return names_of(kSpacings); }

bool ends_clean(const StepTable& table) {
  const bool per_t = table.sampler == Sampler::Ddpm || table.sampler == Sampler::DdpmMean;
  return !per_t || table.t.empty() || table.t.back() == 0;
}

bool is_new_solver(Sampler s) {
  return s == Sampler::Dpmpp2m || s == Sampler::Dpmpp2mSde || s == Sampler::EulerAncestral || s == Sampler::Heun;
}

// An evaluation point whose guidance weight is neither 0 nor 1 evaluates two models (SEMANTICS §12).
int64_t StepTable::evaluations(int k_begin, int k_end) const {
  auto at = [this](double abar) {
    const double w = guidance.weight_at(abar);
    return w == 0.0 || w == 1.0 ? 1 : 2;
  };
  int64_t n = 0;
  for (int k = k_begin; k < k_end; ++k) n += at(abar[k]) + ((!H.empty() && H[k] != 0.0) ? at(abar2[k]) : 0);
  return n;
}

std::vector<NoiseLevel> vp_levels(const StepTable& tab, const Schedule& sched) {
  std::vector<NoiseLevel> levels;
  for (int k = 0; k < tab.steps(); ++k) levels.push_back(NoiseLevel::vp(tab.abar[k], tab.t_net[k]));
  const int t_last = tab.t.empty() ? 0 : tab.t.back();
  levels.push_back(!ends_clean(tab) && t_last > 0 ? NoiseLevel::vp(sched.alphas_cumprod[t_last - 1], t_last - 1)
                                                  : NoiseLevel::vp(1.0, 0.0));
  return levels;
}

void fill_vp_levels(StepTable& tab, const Schedule& sched) { tab.levels = vp_levels(tab, sched); }

namespace {
// A step list's t_start >= 0 and steps in [1, t_start + 1].
void check_t_start_and_steps(int t_start, int n_steps) {
  if (t_start < 0)
    throw ArgumentError(Arg::TStart, std::to_string(t_start), ">= 0",
                        arg_ref(Arg::TStart) + " = " + std::to_string(t_start) + " is out of range; valid: >= 0");
  check_arg_range(Arg::Steps, n_steps, 1, int64_t(t_start) + 1);
}
}  // namespace

// t_i = round(t_start (N-1-i) / (N-1)), half away from zero, in exact integer arithmetic:
// for num, den >= 0, round(num / den) = floor((2 num + den) / (2 den)).
std::vector<int32_t> ddim_timesteps(int t_start, int n_steps) {
  check_t_start_and_steps(t_start, n_steps);
  if (n_steps == 1) return {static_cast<int32_t>(t_start)};
  std::vector<int32_t> t(n_steps);
  const int64_t den = n_steps - 1;
  for (int i = 0; i < n_steps; ++i) {
    const int64_t num = static_cast<int64_t>(t_start) * (n_steps - 1 - i);
    t[i] = static_cast<int32_t>((2 * num + den) / (2 * den));
  }
  return t;
}

// diffusers' DDIMScheduler.set_timesteps with num_train_timesteps = t_start + 1 (SEMANTICS §3), numpy's
// float64 arithmetic reproduced: linspace y_i = i * ((n-1)/(N-1)) with the last set to n-1 exactly;
// arange(n, 0, -n/N) fills n + i * ((n - n/N) - n); rounding half to even.
std::vector<int32_t> spacing_timesteps(Spacing spacing, int t_start, int n_steps, int steps_offset) {
  if (spacing == Spacing::Default) return ddim_timesteps(t_start, n_steps);
  check_t_start_and_steps(t_start, n_steps);
  const int n = t_start + 1, N = n_steps;
  std::vector<int32_t> t(N);
  if (spacing == Spacing::Linspace) {
    const double step = N > 1 ? static_cast<double>(n - 1) / (N - 1) : 0.0;
    for (int i = 0; i < N; ++i) {
      const double y = (N > 1 && i == N - 1) ? n - 1 : i * step;
      t[N - 1 - i] = static_cast<int32_t>(round_half_even(y));
    }
  } else if (spacing == Spacing::Leading) {
    check_arg_range(Arg::StepsOffset, steps_offset, 0, t_start);
    const int ratio = n / N;
    for (int i = 0; i < N; ++i) t[N - 1 - i] = i * ratio + steps_offset;
    if (t[0] > t_start)
      throw ArgumentError(Arg::StepsOffset, std::to_string(steps_offset),
                          "<= " + std::to_string(t_start - (N - 1) * ratio),
                          arg_ref(Arg::StepsOffset) + " = " + std::to_string(steps_offset) +
                              " puts the leading spacing's first step at t = " + std::to_string(t[0]) + " > t_start = " +
                              std::to_string(t_start) + "; valid: " + arg_ref(Arg::StepsOffset) + " <= " +
                              std::to_string(t_start - (N - 1) * ratio));
  } else if (spacing == Spacing::Trailing) {
    const double ratio = static_cast<double>(n) / N;
    const double delta = (n + -ratio) - n;
    for (int i = 0; i < N; ++i) t[i] = static_cast<int32_t>(round_half_even(n + i * delta)) - 1;
  } else {
    throw InvalidInput("spacing_timesteps: karras has continuous timesteps (use build_step_table)");
  }
  return t;
}

double schedule_sigma(const Schedule& sched, int t) { return ve_sigma(sched.alphas_cumprod[t]); }

double timestep_of_sigma(const Schedule& sched, double sigma) {
  const int T = sched.T;
  const double ls = std::log(sigma);
  auto log_sigma = [&](int t) { return std::log(schedule_sigma(sched, t)); };
  if (ls <= log_sigma(0)) return 0.0;
  if (ls >= log_sigma(T - 1)) return T - 1;
  int lo = 0, hi = T - 1;  // log_sigma increases with t: find lo with log_sigma(lo) <= ls < log_sigma(lo + 1)
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    (log_sigma(mid) <= ls ? lo : hi) = mid;
  }
  const double l0 = log_sigma(lo), l1 = log_sigma(lo + 1);
  const double w = (l0 - ls) / (l0 - l1);
  return (1.0 - w) * lo + w * (lo + 1);
}

std::vector<double> karras_sigmas(double sigma_min, double sigma_max, int n_steps, double rho) {
  if (n_steps == 1) return {sigma_max};
  std::vector<double> s(n_steps);
  const double a = std::pow(sigma_max, 1.0 / rho), b = std::pow(sigma_min, 1.0 / rho);
  for (int i = 0; i < n_steps; ++i) {
    const double ramp = static_cast<double>(i) / (n_steps - 1);
    s[i] = std::pow(a + ramp * (b - a), rho);
  }
  return s;
}

StepTable build_step_table(const Schedule& sched, Sampler sampler, int t_start, int n_steps, double eta,
                           Spacing spacing, int steps_offset) {
  check_arg_range(Arg::TStart, t_start, 0, sched.T - 1);
  check_arg_range(Arg::Steps, n_steps, 1, int64_t(t_start) + 1);
  if (sampler == Sampler::Ddim) check_eta(eta);
  if ((sampler == Sampler::Ddpm || sampler == Sampler::DdpmMean) && spacing != Spacing::Default)
    throw ArgumentError(Arg::Spacing, spacing_name(spacing), "default",
                        arg_ref(Arg::Spacing) + " = " + spacing_name(spacing) + " does not apply to " +
                            arg_ref(Arg::Sampler) + " " + sampler_name(sampler) + " (one timestep per step); valid: default");

  if (sampler == Sampler::FlowHeun)
    throw ArgumentError(Arg::Sampler, sampler_name(sampler), "a flow model's sampler",
                        arg_ref(Arg::Sampler) + " = flow-heun steps in the flow level s: it runs flow models only; "
                                                "valid here: heun (the same method in the VP model's level)");
  StepTable tab;
  tab.sampler = sampler;
  tab.spacing = spacing;
  tab.T = sched.T;
  tab.eta = sampler == Sampler::Ddim ? eta : 0.0;  // flow-euler: ddim's step with eta 0
  tab.steps_offset = spacing == Spacing::Leading ? steps_offset : 0;
  if (sampler == Sampler::Ddpm || sampler == Sampler::DdpmMean) {
    for (int k = 0; k < n_steps; ++k) push_ddpm_step(tab, sched, t_start - k, sampler == Sampler::Ddpm);
    fill_float_copies(tab);
    fill_vp_levels(tab, sched);
    return tab;
  }
  // The step list: integer timesteps with abar from the schedule, or karras sigmas with continuous t.
  const bool continuous = spacing == Spacing::Karras;
  if (continuous) {
    const std::vector<double> sig =
        karras_sigmas(schedule_sigma(sched, 0), schedule_sigma(sched, t_start), n_steps);
    for (double s : sig) {
      const double tc = timestep_of_sigma(sched, s);
      tab.t_net.push_back(tc);
      tab.t.push_back(static_cast<int32_t>(std::lround(tc)));
      tab.abar.push_back(1.0 / (1.0 + s * s));
    }
  } else {
    tab.t = spacing_timesteps(spacing, t_start, n_steps, steps_offset);
    for (int32_t t : tab.t) {
      tab.t_net.push_back(t);
      tab.abar.push_back(sched.alphas_cumprod[t]);
    }
  }
  // SEMANTICS §7: an integer spacing (distinct timesteps) keys step k's noise by t[k]; karras by T + 2 + k.
  for (int k = 0; k < n_steps; ++k)
    tab.noise_key.push_back(continuous ? static_cast<uint32_t>(sched.T + 2 + k) : static_cast<uint32_t>(tab.t[k]));
  if (sampler == Sampler::Ddim || sampler == Sampler::FlowEuler) {
    for (int i = 0; i < n_steps; ++i) ddim_coefficients(tab, tab.abar[i], i + 1 < n_steps ? tab.abar[i + 1] : 1.0);
  } else {
    vp_solver_rows(tab);
  }
  fill_float_copies(tab);
  fill_vp_levels(tab, sched);
  return tab;
}

bool denoise_takes(const FamilyParams& family) {
  const Family f = family.family;
  return (f == Family::Epsilon || f == Family::Sample || f == Family::VPrediction) &&
         family.time_input == TimeInput::TOverT;
}

StepTable t_indexed_run(const StepTable& ti, int t_start, int S) {
  if (t_start < 0 || t_start >= ti.steps() || S < 1 || S > t_start + 1)
    throw std::invalid_argument("t_indexed_run: t_start = " + std::to_string(t_start) + ", S = " + std::to_string(S) +
                                "; valid: t_start in [0, " + std::to_string(ti.steps() - 1) + "], S in [1, t_start + 1]");
  StepTable run;
  run.sampler = ti.sampler;
  run.T = ti.T;
  run.family = ti.family;
  for (int t = t_start; t > t_start - S; --t) {
    run.t.push_back(ti.t[t]);
    run.t_net.push_back(ti.t_net[t]);
    run.noise_key.push_back(ti.noise_key[t]);
    run.abar.push_back(ti.abar[t]);
    run.A.push_back(ti.A[t]);
    run.C.push_back(ti.C[t]);
    run.S.push_back(ti.S[t]);
  }
  fill_float_copies(run);
  return run;
}

StepTable build_t_indexed_ddpm_mean(const Schedule& sched, const FamilyParams& family) {
  const Family f = family.family;
  if (!denoise_takes(family))
    throw ArgumentError(Arg::PredictionType, family_name(f), "epsilon, sample or v_prediction with time input t/T",
                        std::string("denoise steps t -> t - 1 on the schedule with a network fed t / T: a ") +
                            family_name(f) + " model with time input " + time_input_name(family.time_input) +
                            " does not run there; valid: " + arg_ref(Arg::PredictionType) +
                            " epsilon, sample or v_prediction with time input t/T (sample runs every family, "
                            "SEMANTICS §4)");
  StepTable tab;
  tab.sampler = Sampler::DdpmMean;
  tab.T = sched.T;
  for (int t = 0; t < sched.T; ++t) {
    push_ddpm_step(tab, sched, t, false);
    if (f == Family::Epsilon) continue;
    // The posterior mean in the family: the DDIM step with eta 1 between abar[t] and abar[t-1] without its noise
    // (SEMANTICS §2 "The tables").
    const NoiseLevel cur = NoiseLevel::vp(sched.alphas_cumprod[t], t);
    const NoiseLevel next = NoiseLevel::vp(t > 0 ? sched.alphas_cumprod[t - 1] : 1.0, t - 1);
    const StepRow r = family_ddim_row(family, cur, next, 1.0);
    tab.A.back() = r.A;
    tab.C.back() = r.C;
  }
  tab.family = family;
  fill_float_copies(tab);
  return tab;
}

}  // namespace diffscope
