// train_config.cpp — names, ranges, metadata and the learning-rate schedule of a training run.
#include "train/train_config.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/errors.h"
#include "base/words.h"

namespace diffscope::train {
namespace {

template <class E>
struct Names {
  E value;
  const char* name;
};
const Names<Objective> kObjectives[] = {{Objective::Epsilon, "epsilon"}, {Objective::Sample, "sample"},
                                        {Objective::VPrediction, "v_prediction"}, {Objective::Flow, "flow"}};
const Names<TimeSampling> kTimeSampling[] = {{TimeSampling::Uniform, "uniform"},
                                             {TimeSampling::LogitNormal, "logit_normal"}};
const Names<LossWeighting> kWeighting[] = {{LossWeighting::None, "none"}, {LossWeighting::MinSnr, "min_snr"}};

template <class E, size_t N>
E parse_name(const Names<E> (&table)[N], const std::string& s, const std::string& arg) {
  std::string valid;
  for (const auto& e : table) {
    if (s == e.name) return e.value;
    valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  }
  throw InvalidInput(arg + " '" + s + "' is not known; valid: " + valid);
}
template <class E, size_t N>
const char* name_of(const Names<E> (&table)[N], E v) {
  for (const auto& e : table)
    if (e.value == v) return e.name;
  return "?";
}

void range(bool ok, const std::string& arg, const std::string& value, const std::string& valid) {
  if (!ok) throw InvalidInput(arg + " = " + value + " is out of range; valid: " + valid);
}

}  // namespace

const char* objective_name(Objective o) { return name_of(kObjectives, o); }
Objective parse_objective(const std::string& s, const std::string& arg) {
  return s == "flow_prediction" ? Objective::Flow : parse_name(kObjectives, s, arg);
}
const char* time_sampling_name(TimeSampling t) { return name_of(kTimeSampling, t); }
TimeSampling parse_time_sampling(const std::string& s, const std::string& arg) {
  return parse_name(kTimeSampling, s == "logit-normal" ? "logit_normal" : s, arg);
}
const char* loss_weighting_name(LossWeighting w) { return name_of(kWeighting, w); }
LossWeighting parse_loss_weighting(const std::string& s, const std::string& arg) {
  return parse_name(kWeighting, s == "min-snr" ? "min_snr" : s, arg);
}

void check_train_config(const TrainConfig& c, const std::function<std::string(const std::string&)>& arg) {
  range(c.hidden >= 64 && c.hidden <= 512, arg("hidden"), std::to_string(c.hidden), "[64, 512]");
  range(c.steps >= 1 && c.steps <= 10000000, arg("steps"), std::to_string(c.steps), "[1, 10000000]");
  range(c.batch >= 1 && c.batch <= 65536, arg("batch"), std::to_string(c.batch), "[1, 65536]");
  range(std::isfinite(c.lr) && c.lr > 0 && c.lr <= 1, arg("lr"), round_trip_number(c.lr), "(0, 1]");
  range(c.warmup >= -1 && c.warmup <= c.steps, arg("warmup"), std::to_string(c.warmup),
        "[-1, " + std::to_string(c.steps) + "] (at most the steps; -1: min(500, steps / 10))");
  range(c.final_lr_frac >= 0 && c.final_lr_frac <= 1, arg("final_lr_frac"), round_trip_number(c.final_lr_frac), "[0, 1]");
  range(c.ema >= 0 && c.ema < 1, arg("ema"), round_trip_number(c.ema), "[0, 1)");
  range(c.beta1 >= 0 && c.beta1 < 1, arg("beta1"), round_trip_number(c.beta1), "[0, 1)");
  range(c.beta2 >= 0 && c.beta2 < 1, arg("beta2"), round_trip_number(c.beta2), "[0, 1)");
  range(c.adam_eps > 0 && c.adam_eps <= 1, arg("adam_eps"), round_trip_number(c.adam_eps), "(0, 1]");
  range(std::isfinite(c.logit_mean) && std::fabs(c.logit_mean) <= 10, arg("logit_mean"), round_trip_number(c.logit_mean),
        "[-10, 10]");
  range(c.logit_std > 0 && c.logit_std <= 10, arg("logit_std"), round_trip_number(c.logit_std), "(0, 10]");
  range(c.snr_gamma > 0 && c.snr_gamma <= 1e6, arg("snr_gamma"), round_trip_number(c.snr_gamma), "(0, 1e6]");
  range(c.schedule == "linear" || c.schedule == "cosine", arg("schedule"), "'" + c.schedule + "'", "linear, cosine");
  range(c.T >= 2 && c.T <= 100000, arg("T"), std::to_string(c.T), "[2, 100000]");
  range(c.beta_start > 0 && c.beta_start < 1, arg("beta_start"), round_trip_number(c.beta_start), "(0, 1)");
  range(c.beta_end > 0 && c.beta_end < 1, arg("beta_end"), round_trip_number(c.beta_end), "(0, 1)");
}

std::map<std::string, std::string> config_metadata(const TrainConfig& c) {
  return {{"train_objective", objective_name(c.objective)}, {"hidden", std::to_string(c.hidden)},
          {"steps_planned", std::to_string(c.steps)}, {"batch", std::to_string(c.batch)}, {"lr", round_trip_number(c.lr)},
          {"warmup", std::to_string(c.warmup_steps())}, {"final_lr_frac", round_trip_number(c.final_lr_frac)},
          {"adam_beta1", round_trip_number(c.beta1)}, {"adam_beta2", round_trip_number(c.beta2)}, {"adam_eps", round_trip_number(c.adam_eps)},
          {"ema", round_trip_number(c.ema)}, {"seed", std::to_string(c.seed)},
          {"time_sampling", time_sampling_name(c.time_sampling)}, {"logit_mean", round_trip_number(c.logit_mean)},
          {"logit_std", round_trip_number(c.logit_std)}, {"loss_weighting", loss_weighting_name(c.weighting)},
          {"snr_gamma", round_trip_number(c.snr_gamma)}, {"train_schedule", c.schedule}, {"T", std::to_string(c.T)},
          {"train_beta_start", round_trip_number(c.beta_start)}, {"train_beta_end", round_trip_number(c.beta_end)}};
}

TrainConfig config_from_metadata(const std::map<std::string, std::string>& meta, const std::string& label) {
  auto get = [&](const char* k) {
    auto it = meta.find(k);
    if (it == meta.end()) throw InvalidInput(label + ": __metadata__ has no '" + k + "' (not a training checkpoint)");
    return it->second;
  };
  auto real = [&](const char* k) {
    const std::string s = get(k);
    char* end = nullptr;
    const double v = std::strtod(s.c_str(), &end);
    if (s.empty() || *end) throw InvalidInput(label + ": __metadata__ '" + k + "' = '" + s + "' is not a number");
    return v;
  };
  TrainConfig c;
  c.objective = parse_objective(get("train_objective"), label + ": train_objective");
  c.hidden = int(real("hidden"));
  c.steps = int64_t(real("steps_planned"));
  c.batch = int(real("batch"));
  c.lr = real("lr");
  c.warmup = int64_t(real("warmup"));
  c.final_lr_frac = real("final_lr_frac");
  c.beta1 = real("adam_beta1");
  c.beta2 = real("adam_beta2");
  c.adam_eps = real("adam_eps");
  c.ema = real("ema");
  c.seed = std::strtoull(get("seed").c_str(), nullptr, 10);
  c.time_sampling = parse_time_sampling(get("time_sampling"), label + ": time_sampling");
  c.logit_mean = real("logit_mean");
  c.logit_std = real("logit_std");
  c.weighting = parse_loss_weighting(get("loss_weighting"), label + ": loss_weighting");
  c.snr_gamma = real("snr_gamma");
  c.schedule = get("train_schedule");
  c.T = int(real("T"));
  c.beta_start = real("train_beta_start");
  c.beta_end = real("train_beta_end");
  check_train_config(c, [&](const std::string& k) { return label + ": " + k; });
  return c;
}

double learning_rate(const TrainConfig& c, int64_t k) {
  const int64_t warm = c.warmup_steps();
  if (k < warm) return c.lr * double(k + 1) / double(warm);
  const int64_t span = c.steps - warm > 1 ? c.steps - warm : 1;
  double p = double(k - warm) / double(span);
  if (p > 1) p = 1;
  return c.lr * (c.final_lr_frac + (1 - c.final_lr_frac) * 0.5 * (1 + std::cos(M_PI * p)));
}

}  // namespace diffscope::train
