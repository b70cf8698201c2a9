// scheduler_config_family.cpp — the scheduler configs of the families' noise-level lists (SEMANTICS §3 "diffusers
// scheduler_config.json", "Noise-level lists of the families"): FlowMatchEulerDiscreteScheduler and
// FlowMatchHeunDiscreteScheduler (scheduling_flow_match_euler_discrete.py, scheduling_flow_match_heun_discrete.py),
// EDMEulerScheduler and EDMDPMSolverMultistepScheduler (scheduling_edm_euler.py,
// scheduling_edm_dpmsolver_multistep.py) read and written; the family check against a model; the lists
// themselves (model/family.h) for a config and a run's mu.
#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>

#include "base/errors.h"
#include "diffusion/scheduler_config.h"
#include "diffusion/scheduler_config_keys.h"

namespace diffscope {
namespace config_keys {
namespace {

constexpr double kMaxAbsMu = 700.0;  // e^mu stays a finite float64

const char* const kFlowMatchEuler = "FlowMatchEulerDiscreteScheduler";
const char* const kFlowMatchHeun = "FlowMatchHeunDiscreteScheduler";
const char* const kEdmEuler = "EDMEulerScheduler";
const char* const kEdmDpm = "EDMDPMSolverMultistepScheduler";

std::string label_of(const SchedulerConfig& c) { return c.path.empty() ? "scheduler config" : c.path; }

// Short decimal of a number for messages (up to 10 significant digits).
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// FlowMatchEulerDiscreteScheduler's keys (FlowMatchHeunDiscreteScheduler has num_train_timesteps and shift only:
// the others are accepted there at the values that change nothing, as diffusers ignores them).
void parse_flow_match(const json& j, const std::string& label, SchedulerConfig& c) {
  const bool heun = c.class_name == kFlowMatchHeun;
  FlowMatchEulerConfig f;
  f.T = get_int(j, label, "num_train_timesteps", 1000, 2, kMaxTrainTimesteps);
  f.shift = get_positive(j, label, "shift", 1.0);  // read without effect when use_dynamic_shifting (Flux's 3.0)
  f.use_dynamic_shifting = get_bool(j, label, "use_dynamic_shifting", false);
  // They give mu from an image's sequence length, which diffscope has not: checked, without effect (mu: flow_mu).
  for (const char* k : {"base_shift", "max_shift"}) get_number(j, label, k, 0.0, -HUGE_VAL, true, HUGE_VAL, "a finite number");
  for (const char* k : {"base_image_seq_len", "max_image_seq_len"}) get_int(j, label, k, 1, 1, 1 << 30);
  f.shift_terminal = get_number(j, label, "shift_terminal", 0.0, 0.0, false, 1.0, "a number in [0, 1) (0 or null: none)");
  require_false(j, label, "invert_sigmas", "diffusers then runs the levels 1 - s towards s = 1 (Mochi)");
  require_false(j, label, "stochastic_sampling", "diffusers then re-noises x0 with fresh noise every step");
  for (const char* k : {"use_karras_sigmas", "use_exponential_sigmas", "use_beta_sigmas"})
    require_false(j, label, k, "diffusers then respaces the flow levels");
  const std::string tst = get_choice(j, label, "time_shift_type", "exponential", {"exponential", "linear"});
  if (tst == "linear" && f.use_dynamic_shifting)
    bad(label, "time_shift_type", tst, "exponential: the linear dynamic shift mu / (mu + 1/s - 1) is not supported");
  get_choice(j, label, "prediction_type", "flow_prediction", {"flow_prediction"},
             " (a FlowMatch model predicts the flow velocity; the class has no prediction_type)");
  if (heun && f.use_dynamic_shifting)
    bad(label, "use_dynamic_shifting", true, std::string("false: ") + kFlowMatchHeun + " has no dynamic shifting "
        "(diffusers ignores the key there); valid for it: the key absent or false, or _class_name " + kFlowMatchEuler);
  if (heun && f.shift_terminal > 0)
    bad(label, "shift_terminal", f.shift_terminal, std::string("null: ") + kFlowMatchHeun + " has no shift_terminal "
        "(diffusers ignores the key there); valid for it: null or absent, or _class_name " + kFlowMatchEuler);
  c.prediction_type = Family::Flow;
  c.flow_match = f;
  refuse_unknown_keys(j, label,
                      {"_class_name", "_diffusers_version", "num_train_timesteps", "shift", "use_dynamic_shifting",
                       "base_shift", "max_shift", "base_image_seq_len", "max_image_seq_len", "shift_terminal",
                       "invert_sigmas", "stochastic_sampling", "use_karras_sigmas", "use_exponential_sigmas",
                       "use_beta_sigmas", "time_shift_type", "prediction_type"},
                      " of " + c.class_name);
}

// EDMEulerScheduler's keys; EDMDPMSolverMultistepScheduler's add the solver's (which only name the sampler, as
// DPMSolverMultistepScheduler's do) and thresholding (refused when true).
void parse_edm(const json& j, const std::string& label, SchedulerConfig& c) {
  const bool dpm = c.class_name == kEdmDpm;
  EdmConfig e;
  e.sigma_min = get_positive(j, label, "sigma_min", 0.002);
  e.sigma_max = get_number(j, label, "sigma_max", 80.0, e.sigma_min, true, HUGE_VAL,
                           "a finite number above sigma_min = " + num(e.sigma_min));
  if (!find(j, "sigma_max") && !(e.sigma_max > e.sigma_min))
    bad(label, "sigma_min", e.sigma_min, "a finite number > 0 below sigma_max = 80 (" + c.class_name + "'s default)");
  e.sigma_data = get_positive(j, label, "sigma_data", 0.5);
  e.rho = get_positive(j, label, "rho", 7.0);
  e.schedule = get_choice(j, label, "sigma_schedule", "karras", {"karras", "exponential"}) == "karras"
                   ? EdmSchedule::Karras
                   : EdmSchedule::Exponential;
  e.final_sigma_zero = get_choice(j, label, "final_sigmas_type", "zero", {"zero", "sigma_min"}) == "zero";
  get_int(j, label, "num_train_timesteps", 1000, 2, kMaxTrainTimesteps);  // only __init__'s training sigmas use it
  c.edm_v_prediction = get_choice(j, label, "prediction_type", "epsilon", {"epsilon", "v_prediction"},
                                  " (an EDM config's prediction_type is the sign of c_out)") == "v_prediction";
  std::set<std::string> known = {"_class_name", "_diffusers_version", "sigma_min", "sigma_max", "sigma_data",
                                 "sigma_schedule", "num_train_timesteps", "prediction_type", "rho", "final_sigmas_type"};
  if (dpm) {
    c.solver_order = get_int(j, label, "solver_order", 2, 1, 3);
    c.algorithm_type = get_choice(j, label, "algorithm_type", "dpmsolver++", {"dpmsolver++", "sde-dpmsolver++"});
    c.solver_type = get_choice(j, label, "solver_type", "midpoint", {"midpoint", "heun"});
    require_false(j, label, "thresholding", "diffusers then thresholds the x0 prediction (dynamic thresholding) every step");
    known.insert({"solver_order", "algorithm_type", "solver_type", "thresholding", "dynamic_thresholding_ratio",
                  "sample_max_value", "lower_order_final", "euler_at_final"});
  }
  c.prediction_type = Family::Edm;
  c.edm = e;
  refuse_unknown_keys(j, label, known, " of " + c.class_name);
}

}  // namespace

bool is_family_class(const std::string& cls) {
  return cls == kFlowMatchEuler || cls == kFlowMatchHeun || cls == kEdmEuler || cls == kEdmDpm;
}

std::string family_classes(const std::string& prefix) {
  std::string out;
  for (const char* cls : {kFlowMatchEuler, kFlowMatchHeun, kEdmEuler, kEdmDpm})
    if (std::string(cls).rfind(prefix, 0) == 0) out += (out.empty() ? "" : ", ") + std::string(cls);
  return out;
}

void parse_family_class(const json& j, const std::string& label, SchedulerConfig& c) {
  c.spacing = Spacing::Default;  // the lists have no timestep spacing; schedule stays empty (no betas)
  if (c.class_name == kFlowMatchEuler || c.class_name == kFlowMatchHeun)
    parse_flow_match(j, label, c);
  else
    parse_edm(j, label, c);
}

}  // namespace config_keys

using config_keys::json;
using config_keys::num;

bool has_family_list(const SchedulerConfig& c) { return c.flow_match || c.flow_sigmas_shift || c.edm; }

bool config_uses_flow_mu(const SchedulerConfig& c) {
  return (c.flow_match && c.flow_match->use_dynamic_shifting) || (c.flow_sigmas_shift && c.flow_sigmas_dynamic);
}

namespace {

// The run's mu for a config whose list takes it: flow_mu, required, in [-kMaxAbsMu, kMaxAbsMu].
double need_mu(const SchedulerConfig& c, std::optional<double> flow_mu) {
  const std::string range = "a number in [-700, 700] (e^mu must be finite)";
  if (!flow_mu)
    throw InvalidInput(config_keys::label_of(c) + ": 'use_dynamic_shifting' = true needs flow_mu (diffusers computes mu "
                       "from the image's size, which diffscope has not); valid: give flow_mu, " + range);
  if (!(std::abs(*flow_mu) <= config_keys::kMaxAbsMu))
    throw InvalidInput("flow_mu = " + num(*flow_mu) + " is out of range; valid: " + range);
  return *flow_mu;
}

// The list's levels must be finite and non-increasing: extreme values (a shift whose float32 rounding leaves
// 0 / 0, sigma_max^(1/rho) beyond float64) are refused naming the level.
const LevelList& checked(const SchedulerConfig& c, const LevelList& l) {
  for (size_t i = 0; i < l.levels.size(); ++i)
    if (!std::isfinite(l.levels[i]) || (i > 0 && !(l.levels[i] <= l.levels[i - 1])))
      throw InvalidInput(config_keys::label_of(c) + ": its noise-level list for " + std::to_string(l.levels.size() - 1) +
                         " steps has level " + std::to_string(i) + " = " + num(l.levels[i]) + " (valid: finite levels "
                         "that do not increase; the config's shift, sigma_min, sigma_max or rho are too extreme)");
  return l;
}

LevelList levels_of(const SchedulerConfig& c, int n_steps, std::optional<double> flow_mu) {
  if (c.flow_match) {
    FlowMatchEulerConfig f = *c.flow_match;
    if (f.use_dynamic_shifting) f.mu = need_mu(c, flow_mu);
    return flow_match_euler_levels(f, n_steps);
  }
  if (c.flow_sigmas_shift) {
    // DPMSolverMultistepScheduler.set_timesteps(mu=...) sets flow_shift = e^mu (time_shift_type exponential).
    const double shift = c.flow_sigmas_dynamic ? std::exp(need_mu(c, flow_mu)) : *c.flow_sigmas_shift;
    return dpm_flow_levels(c.schedule.T, shift, n_steps);
  }
  if (c.edm) return edm_levels(*c.edm, n_steps);
  throw std::logic_error("config_family_levels: the scheduler config has no family list");
}

}  // namespace

LevelList config_family_levels(const SchedulerConfig& c, int n_steps, std::optional<double> flow_mu) {
  const LevelList l = levels_of(c, n_steps, flow_mu);
  checked(c, l);
  return l;
}

namespace {

// What the config says its family is, for messages.
std::string config_family_source(const SchedulerConfig& c) {
  if (c.flow_match || c.edm) return "_class_name " + c.class_name;
  if (c.flow_sigmas_shift) return "prediction_type flow_prediction with use_flow_sigmas";
  return "its prediction_type";
}

}  // namespace

void check_config_family(const SchedulerConfig& c, const FamilyParams& m, bool family_in_file) {
  const std::string label = config_keys::label_of(c);
  const std::string model = std::string("the model's family ") + family_name(m.family) +
                            (family_in_file ? " (its file's prediction_type)"
                                            : " (the default of a model that names none; a prediction_type override "
                                              "sets another)");
  const bool model_vp = m.family != Family::Flow && m.family != Family::Edm;
  if (!c.prediction_type) {
    if (model_vp) return;
    throw InvalidInput(label + ": a VP scheduler config (betas and a timestep spacing, no prediction_type) does not go "
                       "with " + model + "; valid: a config of the " + family_name(m.family) + " family (" +
                       (m.family == Family::Flow ? config_keys::family_classes("FlowMatch") +
                                                       ", or use_flow_sigmas with prediction_type flow_prediction"
                                                 : config_keys::family_classes("EDM")) + ")");
  }
  if (*c.prediction_type != m.family)
    throw InvalidInput(label + ": prediction_type = " + family_name(*c.prediction_type) + " (" + config_family_source(c) +
                       ") does not go with " + model + "; valid: a config of the " + family_name(m.family) +
                       " family, or a model of the " + family_name(*c.prediction_type) + " family");
  if (c.edm && c.edm->sigma_data != m.sigma_data)
    throw InvalidInput(label + ": 'sigma_data' = " + num(c.edm->sigma_data) + " differs from the model's sigma_data " +
                       num(m.sigma_data) + " (its preconditioning); valid: " + num(m.sigma_data));
  if (c.edm && c.edm_v_prediction != m.edm_v)
    throw InvalidInput(label + ": 'prediction_type' = " + (c.edm_v_prediction ? "v_prediction" : "epsilon") +
                       " (the sign of c_out) differs from the model's edm_prediction_type; valid: " +
                       (m.edm_v ? "v_prediction" : "epsilon"));
  const int list_T = c.flow_match ? c.flow_match->T : c.flow_sigmas_shift ? c.schedule.T : m.T;
  if (m.family == Family::Flow && m.time_input == TimeInput::TS && list_T != m.T)
    throw InvalidInput(label + ": 'num_train_timesteps' = " + std::to_string(list_T) + " differs from the model's T = " +
                       std::to_string(m.T) + " (its time input T*s); valid: " + std::to_string(m.T));
}

namespace {

bool is_dpm(Sampler s) { return s == Sampler::Dpmpp2m || s == Sampler::Dpmpp2mSde; }

void need_family(const FamilyParams& p, Family list_family, const char* list) {
  if (p.family != list_family)
    throw InvalidInput(std::string("a ") + list + " list is the " + family_name(list_family) + " family's; the model's "
                       "family is " + family_name(p.family) + " (valid: a " + family_name(list_family) + " model)");
}

json flow_match_json(const SchedulerConfig& list, Sampler sampler, std::optional<double> flow_mu) {
  const FlowMatchEulerConfig& f = *list.flow_match;
  json j;
  const bool heun = sampler == Sampler::FlowHeun;
  if (heun && (f.use_dynamic_shifting || f.shift_terminal > 0))
    throw InvalidInput("sampler flow-heun: FlowMatchHeunDiscreteScheduler has neither use_dynamic_shifting nor "
                       "shift_terminal, so diffusers cannot run this list with it; valid: another sampler (its config "
                       "is FlowMatchEulerDiscreteScheduler's)");
  j["_class_name"] = heun ? config_keys::kFlowMatchHeun : config_keys::kFlowMatchEuler;
  j["num_train_timesteps"] = f.T;
  j["shift"] = f.shift;
  if (heun) return j;
  j["use_dynamic_shifting"] = f.use_dynamic_shifting;
  if (f.use_dynamic_shifting) {
    // diffusers' pipelines compute mu linearly in the image's sequence length between base_shift and max_shift:
    // both at mu give mu for every size.
    const double mu = need_mu(list, flow_mu);
    j["base_shift"] = mu;
    j["max_shift"] = mu;
    j["base_image_seq_len"] = 256;
    j["max_image_seq_len"] = 4096;
  }
  j["shift_terminal"] = f.shift_terminal > 0 ? json(f.shift_terminal) : json(nullptr);
  j["time_shift_type"] = "exponential";
  for (const char* k : {"invert_sigmas", "stochastic_sampling", "use_karras_sigmas", "use_exponential_sigmas",
                        "use_beta_sigmas"})
    j[k] = false;
  return j;
}

json dpm_flow_json(const SchedulerConfig& list, Sampler sampler, std::optional<double> flow_mu) {
  json j;
  j["_class_name"] = "DPMSolverMultistepScheduler";
  j["num_train_timesteps"] = list.schedule.T;
  j["prediction_type"] = "flow_prediction";
  j["use_flow_sigmas"] = true;
  // A dynamic shift is written as its value: set_timesteps(mu) sets flow_shift = e^mu.
  j["flow_shift"] = list.flow_sigmas_dynamic ? std::exp(need_mu(list, flow_mu)) : *list.flow_sigmas_shift;
  j["use_dynamic_shifting"] = false;
  j["final_sigmas_type"] = "zero";
  j["use_karras_sigmas"] = false;
  j["algorithm_type"] = sampler == Sampler::Dpmpp2mSde ? "sde-dpmsolver++" : "dpmsolver++";
  j["solver_order"] = 2;
  j["solver_type"] = "midpoint";
  j["thresholding"] = false;
  return j;
}

json edm_json(const FamilyParams& p, const EdmConfig& e, Sampler sampler) {
  json j;
  j["_class_name"] = is_dpm(sampler) ? config_keys::kEdmDpm : config_keys::kEdmEuler;
  j["num_train_timesteps"] = p.T;
  j["sigma_min"] = e.sigma_min;
  j["sigma_max"] = e.sigma_max;
  j["sigma_data"] = p.sigma_data;
  j["rho"] = e.rho;
  j["sigma_schedule"] = e.schedule == EdmSchedule::Karras ? "karras" : "exponential";
  j["final_sigmas_type"] = e.final_sigma_zero ? "zero" : "sigma_min";
  j["prediction_type"] = p.edm_v ? "v_prediction" : "epsilon";
  if (is_dpm(sampler)) {
    j["algorithm_type"] = sampler == Sampler::Dpmpp2mSde ? "sde-dpmsolver++" : "dpmsolver++";
    j["solver_order"] = 2;
    j["solver_type"] = "midpoint";
    j["thresholding"] = false;
  }
  return j;
}

}  // namespace

std::string family_scheduler_config_json(const FamilyParams& p, Sampler sampler, const SchedulerConfig& list,
                                         std::optional<double> flow_mu) {
  json j;
  if (list.flow_match) {
    need_family(p, Family::Flow, "FlowMatchEuler");
    j = flow_match_json(list, sampler, flow_mu);
  } else if (list.flow_sigmas_shift) {
    need_family(p, Family::Flow, "use_flow_sigmas");
    j = dpm_flow_json(list, sampler, flow_mu);
  } else if (list.edm) {
    need_family(p, Family::Edm, "EDM");
    j = edm_json(p, *list.edm, sampler);
  } else {
    throw InvalidInput(std::string("prediction_type ") + family_name(p.family) + ": no noise-level list to write (a "
                       "typed sigmas list has no diffusers scheduler config)");
  }
  return j.dump(2) + "\n";
}

}  // namespace diffscope
