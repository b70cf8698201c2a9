// family.cpp — model families: parsing, the (x, o) -> (D, eps) maps, network inputs, the one DDIM step and the
// noise-level lists of diffusers' flow and EDM schedulers (see family.h; SEMANTICS §2.1, §3).
#include "model/family.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/errors.h"
#include "base/words.h"

namespace diffscope {
namespace {

struct FamilyName {
  const char* name;
  Family family;
};
constexpr FamilyName kFamilies[] = {
    {"epsilon", Family::Epsilon}, {"sample", Family::Sample},        {"v_prediction", Family::VPrediction},
    {"flow", Family::Flow},       {"flow_prediction", Family::Flow}, {"edm", Family::Edm},
};

struct TimeInputName {
  const char* name;
  TimeInput input;
  Family families[3];  // the families that may read it (unused slots repeat the first)
};
constexpr TimeInputName kTimeInputs[] = {
    {"t/T", TimeInput::TOverT, {Family::Epsilon, Family::Sample, Family::VPrediction}},
    {"t", TimeInput::T, {Family::Epsilon, Family::Sample, Family::VPrediction}},
    {"T*s", TimeInput::TS, {Family::Flow, Family::Flow, Family::Flow}},
    {"s", TimeInput::S, {Family::Flow, Family::Flow, Family::Flow}},
    {"1-s", TimeInput::OneMinusS, {Family::Flow, Family::Flow, Family::Flow}},
    {"c_noise", TimeInput::CNoise, {Family::Edm, Family::Edm, Family::Edm}},
    {"sigma", TimeInput::Sigma, {Family::Edm, Family::Edm, Family::Edm}},
    {"log_sigma", TimeInput::LogSigma, {Family::Edm, Family::Edm, Family::Edm}},
};

bool reads(const TimeInputName& t, Family f) {
  return std::find(std::begin(t.families), std::end(t.families), f) != std::end(t.families);
}

std::string time_inputs_of(Family f) {
  std::string s;
  for (const TimeInputName& t : kTimeInputs)
    if (reads(t, f)) s += (s.empty() ? "" : ", ") + std::string(t.name);
  return s;
}

// The whole string must be one finite number (std::from_chars: no locale, no leading space or '+').
double parse_number(const std::string& label, const std::string& key, const std::string& v) {
  double x = 0;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || r.ec != std::errc() || r.ptr != v.data() + v.size() || !std::isfinite(x))
    throw InvalidInput(label + ": __metadata__ '" + key + "' = '" + v + "' is not a finite number");
  return x;
}

void need_positive(const std::string& what, double v) {
  if (!(v > 0) || !std::isfinite(v))
    throw InvalidInput(what + " = " + std::to_string(v) + " (valid: a finite number > 0)");
}

void need_steps(int n_steps) {
  if (n_steps < 1) throw InvalidInput("steps = " + std::to_string(n_steps) + " (valid: >= 1)");
}

void need_train_steps(int T) {
  if (T < 2) throw InvalidInput("num_train_timesteps = " + std::to_string(T) + " (valid: >= 2)");
}

// FlowMatchEulerDiscreteScheduler.__init__'s sigmas[i] = shift s / (1 + (shift - 1) s) on the float32 tensor
// s = i / T: torch rounds every operation (and the Python scalars shift, shift - 1) to float32.
double shift_float32(double s, double shift) {
  const float sf = static_cast<float>(s);
  const float num = static_cast<float>(shift) * sf;
  const float den = 1.0f + static_cast<float>(shift - 1.0) * sf;
  return static_cast<double>(num / den);
}

}  // namespace

Family parse_family(const std::string& value, const std::string& key) {
  for (const FamilyName& f : kFamilies)
    if (value == f.name) return f.family;
  throw InvalidInput(key + " = '" + value + "' is not a known value; supported: " + family_choices());
}

const char* family_name(Family f) {
  switch (f) {
    case Family::Epsilon: return "epsilon";
    case Family::Sample: return "sample";
    case Family::VPrediction: return "v_prediction";
    case Family::Flow: return "flow";
    case Family::Edm: return "edm";
  }
  return "?";
}

const char* family_choices() { return "epsilon, sample, v_prediction, flow (or flow_prediction), edm"; }

TimeInput parse_time_input(const std::string& value, Family family, const std::string& key) {
  for (const TimeInputName& t : kTimeInputs) {
    if (value != t.name) continue;
    if (reads(t, family)) return t.input;
    throw InvalidInput(key + " = '" + value + "' is not a time input of the " + family_name(family) +
                       " family; valid for " + family_name(family) + ": " + time_inputs_of(family));
  }
  throw InvalidInput(key + " = '" + value + "' is not a known value; valid for " + family_name(family) + ": " +
                     time_inputs_of(family));
}

const char* time_input_name(TimeInput t) {
  for (const TimeInputName& n : kTimeInputs)
    if (n.input == t) return n.name;
  return "?";
}

TimeInput default_time_input(Family f) {
  if (f == Family::Flow) return TimeInput::TS;
  if (f == Family::Edm) return TimeInput::CNoise;
  return TimeInput::TOverT;
}

FamilyParams family_from_metadata(const std::map<std::string, std::string>& md, const std::string& label) {
  FamilyParams p;
  const auto get = [&](const char* key) -> const std::string* {
    const auto it = md.find(key);
    return it == md.end() ? nullptr : &it->second;
  };
  const auto wrap = [&](auto&& f) {
    try {
      f();
    } catch (const InvalidInput& e) {
      throw InvalidInput(label + ": __metadata__ " + e.what());
    }
  };
  if (const std::string* v = get("prediction_type")) wrap([&] { p.family = parse_family(*v, "'prediction_type'"); });
  p.time_input = default_time_input(p.family);
  if (const std::string* v = get("time_input"))
    wrap([&] { p.time_input = parse_time_input(*v, p.family, "'time_input'"); });
  // Keys of one family only: on another family's file they would change nothing, so they are refused.
  const auto only = [&](const char* key, Family f) -> const std::string* {
    const std::string* v = get(key);
    if (v && p.family != f)
      throw InvalidInput(label + ": __metadata__ '" + key + "' = '" + *v + "' is read only by the " + family_name(f) +
                         " family; this file's prediction_type is " + family_name(p.family));
    return v;
  };
  if (const std::string* v = only("sigma_data", Family::Edm)) {
    p.sigma_data = parse_number(label, "sigma_data", *v);
    wrap([&] { need_positive("'sigma_data'", p.sigma_data); });
  }
  if (const std::string* v = only("edm_prediction_type", Family::Edm)) {
    if (*v != "epsilon" && *v != "v_prediction")
      throw InvalidInput(label + ": __metadata__ 'edm_prediction_type' = '" + *v + "' (valid: epsilon, v_prediction)");
    p.edm_v = *v == "v_prediction";
  }
  if (const std::string* v = only("flow_velocity", Family::Flow)) {
    if (*v != "eps_minus_x0" && *v != "x0_minus_eps")
      throw InvalidInput(label + ": __metadata__ 'flow_velocity' = '" + *v + "' (valid: eps_minus_x0, x0_minus_eps)");
    p.flow_velocity = *v == "eps_minus_x0" ? FlowVelocity::EpsMinusX0 : FlowVelocity::X0MinusEps;
  }
  if (const std::string* v = only("shift", Family::Flow)) {
    p.flow_shift = parse_number(label, "shift", *v);
    wrap([&] { need_positive("'shift'", p.flow_shift); });
  }
  if (const std::string* v = get("T")) {
    const double T = parse_number(label, "T", *v);
    if (T != std::floor(T) || T < 2 || T > 1e6)
      throw InvalidInput(label + ": __metadata__ 'T' = '" + *v + "' (valid: an integer in [2, 1000000])");
    p.T = static_cast<int>(T);
  }
  return p;
}

std::string convention_line(const FamilyParams& p) {
  std::string s = family_name(p.family);
  switch (p.family) {
    case Family::Flow:
      s += ": x_s = (1 - s) x0 + s eps, velocity ";
      s += p.flow_velocity == FlowVelocity::EpsMinusX0 ? "eps - x0" : "x0 - eps";
      s += ", noise at s = 1";
      if (p.flow_shift != 1.0) s += ", shift " + short_number(p.flow_shift);
      break;
    case Family::Edm:
      s += ": x = x0 + sigma eps, D = c_skip x + c_out F(c_in x, time), sigma_data " + short_number(p.sigma_data);
      if (p.edm_v) s += ", c_out negated (v_prediction)";
      break;
    default: s += ": x_t = sqrt(abar) x0 + sqrt(1 - abar) eps, noise at t = T - 1";
  }
  return s + "; time input " + time_input_name(p.time_input) + " (T = " + std::to_string(p.T) + ")";
}

NoiseLevel NoiseLevel::vp(double abar, double t) { return {std::sqrt(abar), std::sqrt(1.0 - abar), t}; }
NoiseLevel NoiseLevel::flow(double s) { return {1.0 - s, s, s}; }
NoiseLevel NoiseLevel::ve(double sigma) { return {1.0, sigma, sigma}; }

NoiseLevel level_at_abar(Family family, double abar) {
  if (family == Family::Flow) {
    const double a = std::sqrt(abar), b = std::sqrt(1.0 - abar);
    return NoiseLevel::flow(b / (a + b));
  }
  if (family == Family::Edm) return NoiseLevel::ve(std::sqrt((1.0 - abar) / abar));
  return NoiseLevel::vp(abar, 0.0);
}

OutputMap output_map(const FamilyParams& p, const NoiseLevel& lv) {
  const double a = lv.alpha, b = lv.sigma;
  switch (p.family) {
    case Family::Epsilon: return {1.0 / a, -b / a, 0.0, 1.0};  // eps = o, D = (x - sigma o) / alpha
    case Family::Sample: return {0.0, 1.0, 1.0 / b, -a / b};   // D = o, eps = (x - alpha o) / sigma
    case Family::VPrediction: return {a, -b, b, a};            // D = alpha x - sigma v, eps = sigma x + alpha v
    case Family::Flow: {                                       // D = x - s v, eps = x + (1 - s) v
      const double sign = p.flow_velocity == FlowVelocity::EpsMinusX0 ? 1.0 : -1.0;
      return {1.0, -b * sign, 1.0, a * sign};
    }
    case Family::Edm: {  // D = c_skip x + c_out F, eps = (x - D) / sigma (Karras et al. 2022 Table 1)
      const double sd = p.sigma_data, r2 = b * b + sd * sd;
      const double c_skip = sd * sd / r2, c_out = (p.edm_v ? -1.0 : 1.0) * b * sd / std::sqrt(r2);
      return {c_skip, c_out, b / r2, -c_out / b};
    }
  }
  return {};
}

EpsToOutput output_from_eps(const FamilyParams& p, const NoiseLevel& lv) {
  // D = (x - sigma eps) / alpha, then each family's output from (x, eps, D).
  const double a = lv.alpha, b = lv.sigma;
  const double Dx = 1.0 / a, De = -b / a;
  switch (p.family) {
    case Family::Epsilon: return {0.0, 1.0};
    case Family::Sample: return {Dx, De};
    case Family::VPrediction: return {-b * Dx, a - b * De};  // v = alpha eps - sigma D
    case Family::Flow: {                                     // v = eps - D
      const double sign = p.flow_velocity == FlowVelocity::EpsMinusX0 ? 1.0 : -1.0;
      return {-Dx * sign, (1.0 - De) * sign};
    }
    case Family::Edm: {  // F = (D - c_skip x) / c_out
      const OutputMap m = output_map(p, lv);
      return {(Dx - m.dx) / m.d_out, De / m.d_out};
    }
  }
  return {};
}

NetworkInput network_input(const FamilyParams& p, const NoiseLevel& lv) {
  NetworkInput in;
  if (p.family == Family::Edm) in.c_in = 1.0 / std::sqrt(lv.sigma * lv.sigma + p.sigma_data * p.sigma_data);
  switch (p.time_input) {
    case TimeInput::TOverT: in.time = lv.time / p.T; break;
    case TimeInput::T: in.time = lv.time; break;
    case TimeInput::TS: in.time = p.T * lv.time; break;
    case TimeInput::S: in.time = lv.time; break;
    case TimeInput::OneMinusS: in.time = 1.0 - lv.time; break;
    case TimeInput::CNoise: in.time = 0.25 * std::log(lv.time); break;
    case TimeInput::Sigma: in.time = lv.time; break;
    case TimeInput::LogSigma: in.time = std::log(lv.time); break;
  }
  return in;
}

DdimCoefficients ddim_coefficients(const NoiseLevel& cur, const NoiseLevel& next, double eta) {
  DdimCoefficients c;
  c.d = next.alpha;
  double z = 0.0;
  if (eta > 0 && next.sigma > 0) {
    const double S1 = next.sigma / next.alpha;
    // sqrt(S^2 - S'^2) / S, which tends to 1 as the current level's alpha tends to 0 (S -> infinity).
    const double ratio =
        cur.alpha > 0 ? std::sqrt(std::max(0.0, 1.0 - (S1 * cur.alpha / cur.sigma) * (S1 * cur.alpha / cur.sigma)))
                      : 1.0;
    z = eta * next.alpha * S1 * ratio;
  }
  c.z = z;
  c.e = std::sqrt(std::max(0.0, next.sigma * next.sigma - z * z));
  return c;
}

StepRow family_ddim_row(const FamilyParams& p, const NoiseLevel& cur, const NoiseLevel& next, double eta) {
  const OutputMap m = output_map(p, cur);
  const DdimCoefficients c = ddim_coefficients(cur, next, eta);
  return {c.d * m.dx + c.e * m.ex, c.d * m.d_out + c.e * m.e_out, c.z};
}

StepRow fold_vp_row(const FamilyParams& p, const NoiseLevel& cur, const NoiseLevel& next, const StepRow& vp) {
  const OutputMap m = output_map(p, cur);
  const double k = cur.vp_scale(), k1 = next.vp_scale();
  return {(vp.A * k + vp.C * m.ex) / k1, vp.C * m.e_out / k1, vp.S / k1, vp.P / k1};
}

double flow_euler_update(double x, double v, double s, double s_next) { return x + (s_next - s) * v; }

double edm_euler_update(double x, double D, double sigma, double sigma_next) {
  return x + (sigma_next - sigma) * ((x - D) / sigma);
}

double flow_shift(double s, double shift) { return shift * s / (1.0 + (shift - 1.0) * s); }

double flow_time_shift(double s, double mu) { return std::exp(mu) / (std::exp(mu) + (1.0 / s - 1.0)); }

std::vector<double> numpy_linspace(double start, double stop, int num) {
  std::vector<double> y(std::max(num, 0));
  if (num == 1) y[0] = start;
  if (num < 2) return y;
  const double step = (stop - start) / (num - 1);
  for (int i = 0; i < num; ++i) y[i] = step == 0 ? i / double(num - 1) * (stop - start) + start : i * step + start;
  y[num - 1] = stop;
  return y;
}

std::vector<double> torch_linspace(double start, double stop, int num) {
  std::vector<double> y(std::max(num, 0));
  if (num == 1) y[0] = start;
  if (num < 2) return y;
  const double step = (stop - start) / (num - 1);
  const int halfway = num / 2;
  for (int i = 0; i < num; ++i) y[i] = i < halfway ? start + step * i : stop - step * (num - i - 1);
  return y;
}

LevelList flow_match_euler_levels(const FlowMatchEulerConfig& c, int n_steps) {
  need_steps(n_steps);
  need_train_steps(c.T);
  if (!c.use_dynamic_shifting) need_positive("shift", c.shift);
  if (c.use_dynamic_shifting && !std::isfinite(c.mu))
    throw InvalidInput("mu = " + std::to_string(c.mu) + " (valid: finite)");
  if (!(c.shift_terminal >= 0 && c.shift_terminal < 1))
    throw InvalidInput("shift_terminal = " + std::to_string(c.shift_terminal) + " (valid: [0, 1); 0 for none)");
  // __init__: the training levels 1/T .. 1 in float32, shifted there unless the shift is dynamic.
  const double s_min0 = static_cast<double>(1.0f / static_cast<float>(c.T));
  const double sigma_min = c.use_dynamic_shifting ? s_min0 : shift_float32(s_min0, c.shift);
  const double sigma_max = c.use_dynamic_shifting ? 1.0 : shift_float32(1.0, c.shift);
  // set_timesteps: linspace in timesteps, back to levels, shifted (again), stretched, then the final 0.
  LevelList out;
  out.levels = numpy_linspace(sigma_max * c.T, sigma_min * c.T, n_steps);
  for (double& s : out.levels) {
    s /= c.T;
    s = c.use_dynamic_shifting ? flow_time_shift(s, c.mu) : flow_shift(s, c.shift);
  }
  if (c.shift_terminal > 0) {
    const double scale = (1.0 - out.levels.back()) / (1.0 - c.shift_terminal);
    for (double& s : out.levels) s = 1.0 - (1.0 - s) / scale;
  }
  for (double s : out.levels) out.timesteps.push_back(s * c.T);
  out.levels.push_back(0.0);
  return out;
}

LevelList dpm_flow_levels(int T, double shift, int n_steps) {
  need_steps(n_steps);
  need_train_steps(T);
  need_positive("flow_shift", shift);
  const std::vector<double> alphas = numpy_linspace(1.0, 1.0 / T, n_steps + 1);
  LevelList out;
  for (int i = n_steps; i >= 1; --i) {  // reversed, without the first alpha's level (1 - 1 = 0)
    const double s = flow_shift(1.0 - alphas[i], shift);
    out.levels.push_back(s);
    out.timesteps.push_back(std::trunc(s * T));
  }
  out.levels.push_back(0.0);
  return out;
}

LevelList edm_levels(const EdmConfig& c, int n_steps) {
  need_steps(n_steps);
  need_positive("sigma_min", c.sigma_min);
  need_positive("rho", c.rho);
  if (!(c.sigma_max > c.sigma_min) || !std::isfinite(c.sigma_max))
    throw InvalidInput("sigma_max = " + std::to_string(c.sigma_max) +
                       " (valid: finite, above sigma_min = " + std::to_string(c.sigma_min) + ")");
  LevelList out;
  if (c.schedule == EdmSchedule::Karras) {
    const double min_inv = std::pow(c.sigma_min, 1.0 / c.rho), max_inv = std::pow(c.sigma_max, 1.0 / c.rho);
    for (double r : torch_linspace(0.0, 1.0, n_steps))
      out.levels.push_back(std::pow(max_inv + r * (min_inv - max_inv), c.rho));
  } else {
    for (double l : torch_linspace(std::log(c.sigma_min), std::log(c.sigma_max), n_steps))
      out.levels.push_back(std::exp(l));
    std::reverse(out.levels.begin(), out.levels.end());
  }
  for (double s : out.levels) out.timesteps.push_back(0.25 * std::log(s));
  out.levels.push_back(c.final_sigma_zero ? 0.0 : out.levels.back());
  return out;
}

std::vector<NoiseLevel> noise_levels(Family family, const std::vector<double>& levels) {
  std::vector<NoiseLevel> out;
  for (double l : levels) {
    if (family == Family::Flow)
      out.push_back(NoiseLevel::flow(l));
    else if (family == Family::Edm)
      out.push_back(NoiseLevel::ve(l));
    else
      out.push_back(NoiseLevel::vp(1.0 / (1.0 + l * l), 0.0));
  }
  return out;
}

}  // namespace diffscope
