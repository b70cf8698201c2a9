// train_config.h — the settings of a training run (SEMANTICS §11 "Training"): the network, the objective and its
// noise levels, time sampling, loss weighting, Adam's learning-rate schedule, the EMA, the batch and the seed. The
// front ends (CLI `train`, Python `diffscope.train`) fill one and check it with check_train_config.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

namespace diffscope::train {

// The objective: what the network learns to output (tools/objectives.py; SEMANTICS §2 "Model families").
enum class Objective { Epsilon, Sample, VPrediction, Flow };
// How the training levels are drawn: uniform (VP: t in 0..T-1; flow: s in (0, 1)) or logit-normal (SD3, Esser
// et al. 2024: s = sigmoid(m + s_ z), z ~ N(0, 1); VP: t = floor(T sigmoid(...))).
enum class TimeSampling { Uniform, LogitNormal };
// The loss weight of a row: none (every row 1, the plain MSE of tools/train_denoiser.py) or min-SNR-gamma (Hang et
// al. 2023: min(SNR, gamma) times the squared factor from the output's error to the data prediction's error).
enum class LossWeighting { None, MinSnr };

struct TrainConfig {
  Objective objective = Objective::Epsilon;
  int hidden = 256;                 // 64 .. 512
  int64_t steps = 4000;             // Adam steps, 1 .. 10^7
  int batch = 4096;                 // rows per step, 1 .. 65536
  double lr = 1e-3;                 // peak learning rate
  int64_t warmup = -1;              // linear warm-up steps; -1: min(500, steps / 10)
  double final_lr_frac = 0.01;      // cosine decay to this fraction of lr
  double beta1 = 0.9, beta2 = 0.999, adam_eps = 1e-8;
  double ema = 0.9995;              // EMA decay min(ema, (1 + k) / (10 + k)) after step k (0: no averaging)
  uint64_t seed = 0;
  TimeSampling time_sampling = TimeSampling::Uniform;
  double logit_mean = 0.0, logit_std = 1.0;
  LossWeighting weighting = LossWeighting::None;
  double snr_gamma = 5.0;
  // VP schedule (epsilon, sample, v_prediction): linear (beta_start, beta_end) or cosine; T timesteps.
  std::string schedule = "linear";
  int T = 1000;
  double beta_start = 1e-4, beta_end = 0.02;

  int64_t warmup_steps() const { return warmup >= 0 ? warmup : (steps / 10 < 500 ? steps / 10 : 500); }
};

// The objective's file name (`prediction_type`): epsilon, sample, v_prediction, flow; and back (InvalidInput
// naming `arg`, the value and the valid names).
const char* objective_name(Objective o);
Objective parse_objective(const std::string& s, const std::string& arg);
TimeSampling parse_time_sampling(const std::string& s, const std::string& arg);
const char* time_sampling_name(TimeSampling t);
LossWeighting parse_loss_weighting(const std::string& s, const std::string& arg);
const char* loss_weighting_name(LossWeighting w);

// Throws InvalidInput naming the argument (spelt by `arg_name`: the CLI's "--hidden", Python's "hidden"), the value
// and the valid range for every setting out of its range.
void check_train_config(const TrainConfig& c, const std::function<std::string(const std::string&)>& arg_name);

// The settings as __metadata__ strings (the model file's and the checkpoint's), and back (InvalidInput naming
// `label` on a missing or malformed key).
std::map<std::string, std::string> config_metadata(const TrainConfig& c);
TrainConfig config_from_metadata(const std::map<std::string, std::string>& meta, const std::string& label);

// The peak-relative learning rate at step k (0-based): linear warm-up lr (k + 1) / warmup, then a cosine from lr
// to final_lr_frac lr over the remaining steps (tools/train_denoiser.py lr_at).
double learning_rate(const TrainConfig& c, int64_t k);

}  // namespace diffscope::train
