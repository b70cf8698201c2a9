// scheduler_config.cpp — diffusers' scheduler_config.json read and written for the VP classes (SEMANTICS §3
// "diffusers scheduler_config.json"), the checked key reads every class shares, and the entry points. Key names,
// defaults and formulas follow diffusers' DDIMScheduler.__init__ and set_timesteps (and DPMSolverMultistep's
// use_flow_sigmas); nlohmann-json parses and writes. The family classes: scheduler_config_family.cpp.
#include "diffusion/scheduler_config.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "base/arg_error.h"

#include "base/errors.h"
#include "diffusion/scheduler_config_keys.h"
#include "formats/json_bounded.h"
#include "model/model_load.h"
#include "platform/file_read.h"

namespace diffscope {
namespace config_keys {

void bad(const std::string& label, const std::string& key, const json& v, const std::string& valid) {
  throw InvalidInput(label + ": '" + key + "' = " + v.dump() + " (valid: " + valid + ")");
}

const json* find(const json& j, const char* key) {
  auto it = j.find(key);
  return it == j.end() || it->is_null() ? nullptr : &*it;
}

int get_int(const json& j, const std::string& label, const char* key, int def, int lo, int hi) {
  const json* v = find(j, key);
  if (!v) return def;
  const std::string valid = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v->is_number_integer()) bad(label, key, *v, valid);
  const int64_t i = v->get<int64_t>();
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) bad(label, key, *v, valid);
  if (i < lo || i > hi) bad(label, key, *v, valid);
  return static_cast<int>(i);
}

bool get_bool(const json& j, const std::string& label, const char* key, bool def) {
  const json* v = find(j, key);
  if (!v) return def;
  if (!v->is_boolean()) bad(label, key, *v, "true or false");
  return v->get<bool>();
}

std::string get_choice(const json& j, const std::string& label, const char* key, const std::string& def,
                       const std::vector<std::string>& choices, const std::string& hint) {
  const json* v = find(j, key);
  if (!v) return def;
  std::string valid;
  for (const auto& c : choices) valid += (valid.empty() ? "" : ", ") + c;
  if (!v->is_string() || std::find(choices.begin(), choices.end(), v->get<std::string>()) == choices.end())
    bad(label, key, *v, valid + hint);
  return v->get<std::string>();
}

double get_number(const json& j, const std::string& label, const char* key, double def, double lo, bool lo_open,
                  double hi, const std::string& valid) {
  const json* v = find(j, key);
  if (!v) return def;
  if (!v->is_number()) bad(label, key, *v, valid);
  const double x = v->get<double>();
  if (!std::isfinite(x) || (lo_open ? !(x > lo) : !(x >= lo)) || !(x < hi)) bad(label, key, *v, valid);
  return x;
}

double get_positive(const json& j, const std::string& label, const char* key, double def) {
  return get_number(j, label, key, def, 0.0, true, HUGE_VAL, "a finite number > 0");
}

void require_false(const json& j, const std::string& label, const char* key, const std::string& what) {
  if (get_bool(j, label, key, false)) bad(label, key, true, "false: " + what + ", which diffscope does not do (SEMANTICS §3)");
}

void refuse_unknown_keys(const json& j, const std::string& label, const std::set<std::string>& known,
                         const std::string& whose) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (known.count(it.key())) continue;
    throw InvalidInput(label + ": '" + it.key() + "' = " + it.value().dump().substr(0, 80) +
                       " is not a scheduler_config key" + whose + " diffscope knows, and it may change the maths; "
                       "valid: the keys SEMANTICS §3 lists (remove it, or ask for it to be supported)");
  }
}

}  // namespace config_keys

namespace {

using namespace config_keys;

double get_beta(const json& j, const std::string& label, const char* key, double def) {
  const json* v = find(j, key);
  if (!v) return def;
  if (!v->is_number() || !(v->get<double>() > 0.0 && v->get<double>() < 1.0)) bad(label, key, *v, "a number in (0, 1)");
  return v->get<double>();
}

// diffusers' schedulers whose default timestep_spacing is "linspace" (the k-diffusion-style ones).
const std::set<std::string> kLinspaceClasses = {
    "EulerDiscreteScheduler",  "EulerAncestralDiscreteScheduler", "HeunDiscreteScheduler",
    "DPMSolverMultistepScheduler", "LMSDiscreteScheduler",       "KDPM2DiscreteScheduler",
    "KDPM2AncestralDiscreteScheduler", "UniPCMultistepScheduler", "DEISMultistepScheduler"};
// diffusers' schedulers without clip_sample or with clip_sample defaulting to false: the linspace ones and PNDM.
// Every other class (DDIM, DDPM and their variants) and a config without _class_name take DDIMScheduler's
// defaults, clip_sample = true among them.
bool clips_by_default(const std::string& cls) { return !kLinspaceClasses.count(cls) && cls != "PNDMScheduler"; }

// The class whose defaults fill missing keys, for messages.
std::string defaults_of(const std::string& cls) {
  return cls.empty() ? "DDIMScheduler's default (a config without _class_name takes its defaults)" : cls + "'s default";
}

// diffusers' default timestep_spacing by scheduler class: "leading" for DDIM, DDPM and PNDM (and an unknown or
// missing class: DDIMScheduler's defaults), "linspace" for the k-diffusion-style schedulers.
std::string default_spacing(const std::string& cls) { return kLinspaceClasses.count(cls) ? "linspace" : "leading"; }

// A boolean key that must be `wanted` for SEMANTICS §3's maths: refused when the config says otherwise, or when it
// is missing and the class's default (`class_default`) says otherwise; `what` says what diffusers then does.
void require_bool(const json& j, const std::string& label, const std::string& cls, const char* key, bool class_default,
                  bool wanted, const std::string& what) {
  if (get_bool(j, label, key, class_default) == wanted) return;
  const std::string valid = wanted ? "true" : "false";
  if (find(j, key)) bad(label, key, !wanted, valid + ": " + what + ", which diffscope does not do (SEMANTICS §3)");
  throw InvalidInput(label + ": '" + key + "' is missing, and " + defaults_of(cls) + " is " + (wanted ? "false" : "true") +
                     ": " + what + ", which diffscope does not do (SEMANTICS §3); valid: write \"" + key + "\": " + valid);
}

// Keys read with a fixed meaning elsewhere in parse_scheduler_config.
const std::set<std::string> kReadKeys = {
    "_class_name", "num_train_timesteps", "beta_start", "beta_end", "beta_schedule", "trained_betas",
    "timestep_spacing", "steps_offset", "use_karras_sigmas", "prediction_type", "clip_sample", "thresholding",
    "set_alpha_to_one", "rescale_betas_zero_snr", "use_exponential_sigmas", "use_beta_sigmas",
    "algorithm_type", "solver_order", "solver_type"};

// Keys that change no number of a run here: bookkeeping, options of a step that is refused when it is on
// (clip_sample_range with clip_sample, the thresholding values with thresholding), and the settings of diffusers'
// own algorithms that diffscope does not run (PNDM's warm-up, UniPC's corrector) or that equal SEMANTICS §3's
// dpmpp-2m for a second-order solver ending at sigma = 0 (lower_order_final, euler_at_final).
const std::set<std::string> kInertKeys = {
    "_diffusers_version", "clip_sample_range", "dynamic_thresholding_ratio", "sample_max_value", "skip_prk_steps",
    "lower_order_final", "euler_at_final", "predict_x0", "disable_corrector", "solver_p"};

// Keys that change the maths on a VP class, each with the one value that leaves SEMANTICS §3's maths as it is
// (null and a missing key are that value too) and what another value does. Any other value is refused. The
// flow-sigma keys (use_flow_sigmas and those read with it) are read by read_vp_family instead when
// use_flow_sigmas is true.
struct MathKey {
  const char* key;
  json neutral;      // the value that changes nothing; a discarded json: no value does (any value is refused)
  const char* what;  // what a value other than `neutral` does, for the message
};
const std::vector<MathKey>& math_keys() {
  static const char* const kFlowMatch = "a key of the FlowMatch schedulers (_class_name "
                                        "FlowMatchEulerDiscreteScheduler), which this class does not read";
  static const std::vector<MathKey> kKeys = {
      {"flow_shift", 1.0, "shifts flow sigmas, read only with use_flow_sigmas: true"},
      {"use_dynamic_shifting", false, "shifts flow sigmas by mu, read only with use_flow_sigmas: true"},
      {"time_shift_type", "exponential", "selects the dynamic shift of flow sigmas"},
      {"shift", 1.0, kFlowMatch},
      {"base_shift", json(json::value_t::discarded), kFlowMatch},
      {"max_shift", json(json::value_t::discarded), kFlowMatch},
      {"base_image_seq_len", json(json::value_t::discarded), kFlowMatch},
      {"max_image_seq_len", json(json::value_t::discarded), kFlowMatch},
      {"shift_terminal", json(json::value_t::discarded), kFlowMatch},
      {"stochastic_sampling", false, kFlowMatch},
      {"invert_sigmas", false, "inverts the sigmas (a FlowMatch option)"},
      {"use_lu_lambdas", false, "spaces the steps uniformly in log-SNR"},
      {"final_sigmas_type", "zero", "ends the steps at sigma_min instead of sigma = 0 (abar = 1)"},
      {"sigma_min", json(json::value_t::discarded), "sets the smallest sigma of the steps"},
      {"sigma_max", json(json::value_t::discarded), "sets the largest sigma of the steps"},
      {"interpolation_type", "linear", "interpolates sigmas other than linearly in t"},
      {"timestep_type", "discrete", "feeds the network continuous timesteps"},
      {"lambda_min_clipped", json(json::value_t::discarded), "clips the log-SNR of the steps"},
      {"variance_type", "fixed_small", "selects a ddpm noise variance other than the posterior's (SEMANTICS §1 sigma)"},
  };
  return kKeys;
}

// The keys read with use_flow_sigmas: true (read_vp_family), exempt from math_keys' neutral values then.
const std::set<std::string> kFlowSigmaKeys = {"use_flow_sigmas", "flow_shift", "use_dynamic_shifting",
                                              "time_shift_type", "final_sigmas_type"};

Schedule config_betas(const json& j, const std::string& label, int T) {
  if (const json* tb = find(j, "trained_betas")) {
    const std::string valid = "an array of " + std::to_string(T) + " numbers (num_train_timesteps), each in (0, 1)"
                              "; the last may be 1 (zero terminal SNR)";
    if (!tb->is_array() || tb->size() != static_cast<size_t>(T))
      bad(label, "trained_betas", tb->is_array() ? json("array of length " + std::to_string(tb->size())) : *tb, valid);
    std::vector<double> betas;
    for (size_t i = 0; i < tb->size(); ++i) {
      const json& b = (*tb)[i];
      const bool last_one = i + 1 == tb->size() && b.is_number() && b.get<double>() == 1.0;
      if (!b.is_number() || !((b.get<double>() > 0.0 && b.get<double>() < 1.0) || last_one))
        bad(label, "trained_betas[" + std::to_string(i) + "]", b, "a number in (0, 1); the last may be 1");
      betas.push_back(b.get<double>());
    }
    return Schedule::from_betas(std::move(betas), label + " trained_betas", true);
  }
  const double b0 = get_beta(j, label, "beta_start", 1e-4), b1 = get_beta(j, label, "beta_end", 0.02);
  const std::string kind =
      get_choice(j, label, "beta_schedule", "linear", {"linear", "scaled_linear", "squaredcos_cap_v2"});
  Schedule s = kind == "linear"          ? Schedule::linear(T, b0, b1)
               : kind == "scaled_linear" ? Schedule::scaled_linear(T, b0, b1)
                                         : Schedule::cosine(T);  // betas_for_alpha_bar, max_beta 0.999
  s.source = label + " " + (kind == "squaredcos_cap_v2" ? "squaredcos_cap_v2 = " : "") + s.source;
  return s;
}

// Largest relative difference of two beta vectors of one length.
double max_rel_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
  return worst;
}

// v itself, or, when v is a float32 value, the shortest decimal that reads back as that float (0.02f -> 0.02).
double float_shortest(double v) {
  const float f = static_cast<float>(v);
  if (static_cast<double>(f) != v) return v;
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

const char* diffusers_class(Sampler s) {
  switch (s) {
    case Sampler::Ddim: return "DDIMScheduler";
    case Sampler::Ddpm:
    case Sampler::DdpmMean: return "DDPMScheduler";
    case Sampler::Dpmpp2m:
    case Sampler::Dpmpp2mSde: return "DPMSolverMultistepScheduler";
    case Sampler::EulerAncestral: return "EulerAncestralDiscreteScheduler";
    case Sampler::Heun: return "HeunDiscreteScheduler";
    case Sampler::FlowEuler: return "DDIMScheduler";  // the same deterministic step (eta 0) on VP levels
    case Sampler::FlowHeun: break;
  }
  throw InvalidInput(std::string("sampler ") + sampler_name(s) + " runs flow models only: it has no VP scheduler config");
}

// prediction_type, and DPM-Solver / UniPC's use_flow_sigmas list (with flow_shift, use_dynamic_shifting,
// time_shift_type, final_sigmas_type) of a VP class. Returns whether use_flow_sigmas is on.
bool read_vp_family(const json& j, const std::string& label, SchedulerConfig& c) {
  const json* pt = find(j, "prediction_type");
  if (pt)
    c.prediction_type = parse_family(get_choice(j, label, "prediction_type", "epsilon",
                                                {"epsilon", "sample", "v_prediction", "flow_prediction"}));
  if (!get_bool(j, label, "use_flow_sigmas", false)) {
    if (c.prediction_type == Family::Flow)
      bad(label, "prediction_type", *pt, "epsilon, sample, v_prediction; flow_prediction needs \"use_flow_sigmas\": "
          "true (DPMSolverMultistepScheduler, UniPCMultistepScheduler) or a FlowMatch _class_name");
    return false;
  }
  if (c.class_name != "DPMSolverMultistepScheduler" && c.class_name != "UniPCMultistepScheduler")
    bad(label, "use_flow_sigmas", true, "false with _class_name " + (c.class_name.empty() ? "missing" : c.class_name) +
        "; flow sigmas are read for DPMSolverMultistepScheduler and UniPCMultistepScheduler");
  if (!pt)
    throw InvalidInput(label + ": 'prediction_type' is missing with 'use_flow_sigmas' = true, and " + c.class_name +
                       "'s default is epsilon (an eps network on flow levels, not a family diffscope runs); valid: "
                       "\"prediction_type\": \"flow_prediction\"");
  if (c.prediction_type != Family::Flow)
    bad(label, "prediction_type", *pt, "flow_prediction with use_flow_sigmas: true (an eps, x0 or v network on flow "
        "levels is not a family diffscope runs)");
  c.flow_sigmas_shift = get_positive(j, label, "flow_shift", 1.0);
  c.flow_sigmas_dynamic = get_bool(j, label, "use_dynamic_shifting", false);
  get_choice(j, label, "time_shift_type", "exponential", {"exponential"}, "; diffusers' flow sigmas shift by e^mu");
  get_choice(j, label, "final_sigmas_type", "zero", {"zero"},
             "; sigma_min is refused on flow lists (its level differs between diffusers' classes and versions)");
  require_false(j, label, "use_karras_sigmas", "with use_flow_sigmas diffusers then takes Karras sigmas of the betas");
  return true;
}

// The keys of a VP class that change the maths: refused unless they hold their neutral value (math_keys), the
// x0 clipping / thresholding and the last step's abar (require_bool, also through the class's default).
void refuse_vp_math_keys(const json& j, const std::string& label, const SchedulerConfig& c, bool flow_sigmas) {
  for (const MathKey& k : math_keys()) {
    const json* v = find(j, k.key);
    if (!v || (!k.neutral.is_discarded() && *v == k.neutral) || (flow_sigmas && kFlowSigmaKeys.count(k.key))) continue;
    bad(label, k.key, *v,
        (k.neutral.is_discarded() ? std::string("no value (the key absent or null)") : k.neutral.dump()) + ": " + k.key +
            " " + k.what + ", which diffscope does not run (SEMANTICS §3)");
  }
  for (const char* k : {"use_exponential_sigmas", "use_beta_sigmas"})
    if (get_bool(j, label, k, false)) bad(label, k, true, "false: only use_karras_sigmas is supported");
  // The x0 prediction is never clipped or thresholded here, and every step list ends at abar = 1 (SEMANTICS §3):
  // a config that asks otherwise, itself or through its class's default, is refused.
  require_bool(j, label, c.class_name, "clip_sample", clips_by_default(c.class_name), false,
               "diffusers then clips the x0 prediction to [-clip_sample_range, clip_sample_range] (default 1) every step");
  require_bool(j, label, c.class_name, "thresholding", false, false,
               "diffusers then thresholds the x0 prediction (dynamic thresholding) every step");
  require_bool(j, label, c.class_name, "set_alpha_to_one", c.class_name != "PNDMScheduler", true,
               "with false diffusers' last step ends at alphas_cumprod[0] instead of 1 (abar = 1 here)");
}

// A VP class's config (DDIM, DDPM, DPM-Solver, Euler, ...): the family, the betas, the spacing; with
// use_flow_sigmas the flow list instead of the spacing.
void parse_vp_config(const json& j, const std::string& label, SchedulerConfig& c) {
  const bool flow_sigmas = read_vp_family(j, label, c);
  refuse_vp_math_keys(j, label, c, flow_sigmas);
  if (const json* v = find(j, "algorithm_type")) {
    if (!v->is_string()) bad(label, "algorithm_type", *v, "a DPM-Solver algorithm name");
    c.algorithm_type = v->get<std::string>();
  }
  if (const json* v = find(j, "solver_type")) {
    if (!v->is_string()) bad(label, "solver_type", *v, "a solver type name");
    c.solver_type = v->get<std::string>();
  }
  c.solver_order = get_int(j, label, "solver_order", 2, 1, 3);
  const int T = get_int(j, label, "num_train_timesteps", 1000, 2, kMaxTrainTimesteps);
  c.schedule = config_betas(j, label, T);
  if (get_bool(j, label, "rescale_betas_zero_snr", false)) c.schedule = Schedule::rescaled_zero_terminal_snr(c.schedule);
  const std::string spacing = get_choice(j, label, "timestep_spacing", default_spacing(c.class_name),
                                         {"leading", "linspace", "trailing"}, "; karras is use_karras_sigmas: true");
  c.spacing = parse_spacing(spacing);
  if (get_bool(j, label, "use_karras_sigmas", false)) c.spacing = Spacing::Karras;
  c.steps_offset = get_int(j, label, "steps_offset", 0, 0, T - 1);
  if (flow_sigmas) c.spacing = Spacing::Default;  // the flow list has no timestep spacing
  std::set<std::string> known = kReadKeys;
  known.insert(kInertKeys.begin(), kInertKeys.end());
  known.insert(kFlowSigmaKeys.begin(), kFlowSigmaKeys.end());
  for (const MathKey& m : math_keys()) known.insert(m.key);
  refuse_unknown_keys(j, label, known, "");
}

}  // namespace

SchedulerConfig parse_scheduler_config(const std::string& text, const std::string& label) {
  json j;
  try {
    j = parse_json_bounded(text);
  } catch (const std::exception& e) {
    throw InvalidInput(label + ": not valid JSON (" + e.what() + ")");
  }
  if (!j.is_object()) throw InvalidInput(label + ": a scheduler_config.json holds a JSON object, not " + j.dump().substr(0, 40));
  SchedulerConfig c;
  if (const json* cls = find(j, "_class_name")) {
    if (!cls->is_string()) bad(label, "_class_name", *cls, "a diffusers scheduler class name");
    c.class_name = cls->get<std::string>();
  }
  if (is_family_class(c.class_name)) {
    parse_family_class(j, label, c);
  } else {
    for (const char* prefix : {"FlowMatch", "EDM"})
      if (c.class_name.rfind(prefix, 0) == 0)
        bad(label, "_class_name", c.class_name, family_classes(prefix) + " (the " + prefix + " schedulers diffscope reads)");
    parse_vp_config(j, label, c);
  }
  return c;
}

std::vector<Sampler> config_samplers(const SchedulerConfig& c) {
  const std::string& cls = c.class_name;
  if (cls == "DDIMScheduler") return {Sampler::Ddim};
  if (cls == "DDPMScheduler") return {Sampler::Ddpm, Sampler::DdpmMean};
  if (cls == "EulerAncestralDiscreteScheduler") return {Sampler::EulerAncestral};
  if (cls == "HeunDiscreteScheduler") return {Sampler::Heun};
  if (cls == "FlowMatchEulerDiscreteScheduler") return {Sampler::FlowEuler};
  if (cls == "FlowMatchHeunDiscreteScheduler") return {Sampler::FlowHeun};
  if (cls == "EDMEulerScheduler") return {Sampler::FlowEuler, Sampler::Ddim};  // its step: the deterministic one
  const bool dpm = cls == "DPMSolverMultistepScheduler" || cls == "EDMDPMSolverMultistepScheduler";
  if (dpm && c.solver_order == 2 && (c.solver_type.empty() || c.solver_type == "midpoint")) {
    if (c.algorithm_type.empty() || c.algorithm_type == "dpmsolver++") return {Sampler::Dpmpp2m};
    if (c.algorithm_type == "sde-dpmsolver++") return {Sampler::Dpmpp2mSde};
  }
  return {};
}

std::string sampler_mismatch_note(const SchedulerConfig& c, Sampler sampler) {
  if (c.class_name.empty()) return "";
  const std::vector<Sampler> named = config_samplers(c);
  if (std::find(named.begin(), named.end(), sampler) != named.end()) return "";
  std::string what = c.class_name;
  if (c.class_name == "DPMSolverMultistepScheduler" || c.class_name == "EDMDPMSolverMultistepScheduler")
    what += " (algorithm_type " + (c.algorithm_type.empty() ? std::string("dpmsolver++") : c.algorithm_type) +
            ", solver_order " + std::to_string(c.solver_order) + ")";
  std::string ours;
  for (Sampler s : named) ours += (ours.empty() ? "" : " / ") + std::string(sampler_name(s));
  const std::string label = c.path.empty() ? "the scheduler config" : c.path;
  return label + " names " + what + (ours.empty() ? ", which diffscope does not run" : ", diffscope's " + ours) +
         "; the sampler that runs is " + sampler_name(sampler) + " (the config gives the " +
         (has_family_list(c) ? "noise-level list" : "schedule and spacing") + ", never the sampler)";
}

SchedulerConfig load_scheduler_config(const std::string& path) {
  SchedulerConfig c = parse_scheduler_config(read_file_bytes(path, path, "scheduler config"), path);
  c.path = path;
  return c;
}

void apply_scheduler_config(DiffusionModel& model, const SchedulerConfig& config) {
  check_config_family(config, model.family, model.family_in_file);
  if (has_family_list(config)) return;  // no betas: the model keeps its schedule, the list is the config's
  const Schedule& own = model.schedule;
  const Schedule& cfg = config.schedule;
  const std::string label = config.path.empty() ? "scheduler config" : config.path;
  if (model.mixture || !model.schedule_in_file) {
    model.schedule = cfg;
  } else if (own.T != cfg.T) {
    model.warnings.push_back(label + ": num_train_timesteps = " + std::to_string(cfg.T) + " differs from the model file's T = " +
                             std::to_string(own.T) + "; the model file's schedule is used (SEMANTICS §3)");
  } else if (const double d = max_rel_diff(cfg.betas, own.betas); d > kScheduleWarnRelDiff) {
    char rel[32];
    std::snprintf(rel, sizeof rel, "%.3g", d);
    model.warnings.push_back(label + ": its betas differ from the model file's by up to " + rel +
                             " (relative); the model file's schedule is used (SEMANTICS §3)");
  }
}

std::string scheduler_config_json(const Schedule& s, Sampler sampler, Spacing spacing, int steps_offset,
                                  Family family) {
  if (family == Family::Flow || family == Family::Edm)
    throw InvalidInput(std::string("prediction_type ") + family_name(family) + " has no VP scheduler config (betas "
                       "and a timestep spacing); its config is written from its noise-level list");
  if (spacing == Spacing::Default)
    throw ArgumentError(Arg::Spacing, "default", "leading, linspace, trailing, karras",
                        arg_ref(Arg::Spacing) + " = default has no diffusers timestep_spacing; valid for a "
                        "scheduler_config.json: leading, linspace, trailing, karras (linspace is the same list up to "
                        "the rounding of ties)");
  json j;
  j["_class_name"] = diffusers_class(sampler);
  j["num_train_timesteps"] = s.T;
  // A named beta_schedule when the betas match one (1e-6 relative: file betas stored in float32 still match),
  // with end points written as the shortest decimals of their float32 values when those still match (a file's
  // float32 0.02 is written 0.02, not 0.019999999552965164).
  const double b0 = s.betas.front(), b1 = s.betas.back();
  const auto matches = [&](const Schedule& cand) { return max_rel_diff(cand.betas, s.betas) <= 1e-6; };
  double e0 = b0, e1 = b1;
  auto try_named = [&]() -> std::string {
    if (s.T < 2 || !(b1 < 1.0)) return "";
    for (const auto& [a, b] : {std::pair{float_shortest(b0), float_shortest(b1)}, std::pair{b0, b1}}) {
      e0 = a, e1 = b;
      if (matches(Schedule::linear(s.T, a, b))) return "linear";
      if (matches(Schedule::scaled_linear(s.T, a, b))) return "scaled_linear";
    }
    if (matches(Schedule::cosine(s.T))) return "squaredcos_cap_v2";
    return "";
  };
  const std::string named = try_named();
  const bool has_ends = named == "linear" || named == "scaled_linear";
  j["beta_schedule"] = named.empty() ? "linear" : named;
  j["beta_start"] = has_ends ? e0 : 1e-4;
  j["beta_end"] = has_ends ? e1 : 0.02;
  j["trained_betas"] = named.empty() ? json(s.betas) : json(nullptr);
  j["timestep_spacing"] = spacing == Spacing::Karras ? "linspace" : spacing_name(spacing);
  j["use_karras_sigmas"] = spacing == Spacing::Karras;
  j["steps_offset"] = steps_offset;
  j["prediction_type"] = family_name(family);
  j["clip_sample"] = false;
  j["thresholding"] = false;
  j["set_alpha_to_one"] = true;
  j["rescale_betas_zero_snr"] = false;
  if (sampler == Sampler::Dpmpp2m || sampler == Sampler::Dpmpp2mSde) {
    j["algorithm_type"] = sampler == Sampler::Dpmpp2m ? "dpmsolver++" : "sde-dpmsolver++";
    j["solver_order"] = 2;
  }
  if (sampler == Sampler::Ddpm) j["variance_type"] = "fixed_small";
  return j.dump(2) + "\n";
}

}  // namespace diffscope
