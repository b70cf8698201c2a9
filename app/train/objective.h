// objective.h — what one training row is, per objective (tools/objectives.py, SEMANTICS §2 "Model families" and
// §11): the level (alpha, sigma) and the network's time column, the state x = alpha x0 + sigma eps, the target o
// and the row's loss weight.
//   epsilon       o = eps                   VP level alpha = sqrt(abar[t]), sigma = sqrt(1 - abar[t]), time t / T
//   sample        o = x0                    (the same levels)
//   v_prediction  o = alpha eps - sigma x0  (Salimans & Ho 2022 §4)
//   flow          o = eps - x0              alpha = 1 - s, sigma = s, time s (`time_input: s`)
#pragma once
#include <cstdint>
#include <vector>

#include "model/schedule.h"
#include "train/train_config.h"

namespace diffscope::train {

// A training level: alpha, sigma, and the value of the network's time column.
struct Level {
  double alpha = 1, sigma = 0, time = 0;
};

// The VP schedule of a run (linear or cosine, T), its betas rounded to float32 and every coefficient recomputed from
// them in float64 (SEMANTICS §1): what the model file's float32 `betas` give the loader, so the levels trained on
// and the levels the file's readers compute are the same.
Schedule train_schedule(const TrainConfig& c);

// The levels' table of a run: sqrt(abar) and sqrt(1 - abar) of the VP schedule (empty for flow).
struct LevelTable {
  std::vector<double> sqrt_abar, sqrt_one_minus_abar;
};
LevelTable level_table(const TrainConfig& c);

// The level drawn from two uniform words: uniform (VP t = floor(T u), flow s = u, u in (0, 1)) or logit-normal
// (u = sigmoid(logit_mean + logit_std z), z from Box-Muller on both words).
Level draw_level(const TrainConfig& c, const LevelTable& table, uint32_t w1, uint32_t w2);

// The target o of one row (dim values) at the level.
template <class Real>
void objective_target(Objective o, const Real* x0, const Real* eps, double alpha, double sigma, int dim, Real* out) {
  for (int i = 0; i < dim; ++i) {
    switch (o) {
      case Objective::Epsilon: out[i] = eps[i]; break;
      case Objective::Sample: out[i] = x0[i]; break;
      case Objective::VPrediction: out[i] = Real(alpha * eps[i] - sigma * x0[i]); break;
      case Objective::Flow: out[i] = eps[i] - x0[i]; break;
    }
  }
}

// The row's loss weight: 1 (LossWeighting::None), or min(SNR, gamma) c^2 with SNR = alpha^2 / sigma^2 and c the
// factor from the output's error to the data prediction's (epsilon sigma / alpha, sample 1, v_prediction sigma, flow
// s): the x0-space min-SNR weighting of Hang et al. 2023, which is min(SNR, gamma) / SNR for epsilon.
double loss_weight(const TrainConfig& c, double alpha, double sigma);

}  // namespace diffscope::train
