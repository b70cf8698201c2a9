// scheduler_config.cpp — diffusers' scheduler_config.json read and written (SEMANTICS §3 "diffusers
// scheduler_config.json"). Key names, defaults and formulas follow diffusers' DDIMScheduler.__init__ and
// set_timesteps; nlohmann-json parses and writes.
#include "core/scheduler_config.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "core/json_bounded.h"
#include "core/errors.h"
#include "core/file_read.h"
#include "core/model_load.h"

namespace diffscope {
namespace {

using nlohmann::json;

constexpr int kMaxTrainTimesteps = 1'000'000;

[[noreturn]] void bad(const std::string& label, const std::string& key, const json& v, const std::string& valid) {
  throw InvalidInput(label + ": '" + key + "' = " + v.dump() + " (valid: " + valid + ")");
}

// The value under `key`, or nullptr when it is missing or null (diffusers writes null for unset options).
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

double get_beta(const json& j, const std::string& label, const char* key, double def) {
  const json* v = find(j, key);
  if (!v) return def;
  if (!v->is_number() || !(v->get<double>() > 0.0 && v->get<double>() < 1.0)) bad(label, key, *v, "a number in (0, 1)");
  return v->get<double>();
}

bool get_bool(const json& j, const std::string& label, const char* key, bool def) {
  const json* v = find(j, key);
  if (!v) return def;
  if (!v->is_boolean()) bad(label, key, *v, "true or false");
  return v->get<bool>();
}

std::string get_choice(const json& j, const std::string& label, const char* key, const std::string& def,
                       const std::vector<std::string>& choices, const std::string& hint = "") {
  const json* v = find(j, key);
  if (!v) return def;
  std::string valid;
  for (const auto& c : choices) valid += (valid.empty() ? "" : ", ") + c;
  if (!v->is_string() || std::find(choices.begin(), choices.end(), v->get<std::string>()) == choices.end())
    bad(label, key, *v, valid + hint);
  return v->get<std::string>();
}

// diffusers' default timestep_spacing by scheduler class: "leading" for DDIM, DDPM and PNDM (and an unknown or
// missing class: DDIMScheduler's defaults), "linspace" for the k-diffusion-style schedulers.
std::string default_spacing(const json& j) {
  static const std::set<std::string> kLinspace = {
      "EulerDiscreteScheduler",  "EulerAncestralDiscreteScheduler", "HeunDiscreteScheduler",
      "DPMSolverMultistepScheduler", "LMSDiscreteScheduler",       "KDPM2DiscreteScheduler",
      "KDPM2AncestralDiscreteScheduler", "UniPCMultistepScheduler", "DEISMultistepScheduler"};
  const json* c = find(j, "_class_name");
  return c && c->is_string() && kLinspace.count(c->get<std::string>()) ? "linspace" : "leading";
}

// Keys this reader knows (the rest are listed in one note as ignored).
const std::set<std::string> kKnownKeys = {
    "_class_name", "_diffusers_version", "num_train_timesteps", "beta_start", "beta_end", "beta_schedule",
    "trained_betas", "timestep_spacing", "steps_offset", "use_karras_sigmas", "prediction_type", "clip_sample",
    "clip_sample_range", "thresholding", "dynamic_thresholding_ratio", "sample_max_value", "set_alpha_to_one",
    "rescale_betas_zero_snr", "use_exponential_sigmas", "use_beta_sigmas",
    // what scheduler_config_json writes for the sampler (the sampler itself comes from --sampler)
    "algorithm_type", "solver_order", "variance_type"};

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
  }
  return "DDIMScheduler";
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
  get_choice(j, label, "prediction_type", "epsilon", {"epsilon"},
             "; diffscope's models predict eps (SEMANTICS §2): v_prediction and sample are not supported");
  for (const char* k : {"use_exponential_sigmas", "use_beta_sigmas"})
    if (get_bool(j, label, k, false)) bad(label, k, true, "false: only use_karras_sigmas is supported");
  const int T = get_int(j, label, "num_train_timesteps", 1000, 2, kMaxTrainTimesteps);
  c.schedule = config_betas(j, label, T);
  if (get_bool(j, label, "rescale_betas_zero_snr", false)) c.schedule = Schedule::rescaled_zero_terminal_snr(c.schedule);
  const std::string spacing = get_choice(j, label, "timestep_spacing", default_spacing(j), {"leading", "linspace", "trailing"},
                                         "; karras is use_karras_sigmas: true");
  c.spacing = parse_spacing(spacing);
  if (get_bool(j, label, "use_karras_sigmas", false)) c.spacing = Spacing::Karras;
  c.steps_offset = get_int(j, label, "steps_offset", 0, 0, T - 1);
  // Read and ignored, each for a reason SEMANTICS §3 gives.
  if (get_bool(j, label, "clip_sample", true) && find(j, "clip_sample"))
    c.notes.push_back(label + ": clip_sample = true ignored: diffscope never clips the x0 prediction");
  if (get_bool(j, label, "thresholding", false))
    c.notes.push_back(label + ": thresholding = true ignored: diffscope never thresholds the x0 prediction");
  if (!get_bool(j, label, "set_alpha_to_one", true))
    c.notes.push_back(label + ": set_alpha_to_one = false ignored: every step list ends at abar = 1");
  std::string unknown;
  for (const auto& [k, v] : j.items())
    if (!kKnownKeys.count(k)) unknown += (unknown.empty() ? "" : ", ") + k;
  if (!unknown.empty()) c.notes.push_back(label + ": keys without meaning here, ignored: " + unknown);
  return c;
}

SchedulerConfig load_scheduler_config(const std::string& path) {
  SchedulerConfig c = parse_scheduler_config(read_file_bytes(path, path, "scheduler config"), path);
  c.path = path;
  return c;
}

void apply_scheduler_config(DiffusionModel& model, const SchedulerConfig& config) {
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
  model.warnings.insert(model.warnings.end(), config.notes.begin(), config.notes.end());
}

std::string scheduler_config_json(const Schedule& s, Sampler sampler, Spacing spacing, int steps_offset) {
  if (spacing == Spacing::Default)
    throw InvalidInput("--spacing = default has no diffusers timestep_spacing; valid for a scheduler_config.json: "
                       "leading, linspace, trailing, karras (linspace is the same list up to the rounding of ties)");
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
  j["prediction_type"] = "epsilon";
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
