// objective.cpp — the training levels and the loss weights of objective.h.
#include "train/objective.h"

#include <algorithm>
#include <cmath>

#include "base/philox_normal.h"

namespace diffscope::train {

Schedule train_schedule(const TrainConfig& c) {
  const Schedule s = c.schedule == "cosine" ? Schedule::cosine(c.T) : Schedule::linear(c.T, c.beta_start, c.beta_end);
  std::vector<double> betas;
  for (double b : s.betas) betas.push_back(double(float(b)));
  return Schedule::from_betas(std::move(betas), s.source + ", betas rounded to float32");
}

LevelTable level_table(const TrainConfig& c) {
  LevelTable t;
  if (c.objective == Objective::Flow) return t;
  const Schedule s = train_schedule(c);
  for (double abar : s.alphas_cumprod) {
    t.sqrt_abar.push_back(std::sqrt(abar));
    t.sqrt_one_minus_abar.push_back(std::sqrt(1.0 - abar));
  }
  return t;
}

Level draw_level(const TrainConfig& c, const LevelTable& table, uint32_t w1, uint32_t w2) {
  double u = philox_uniform(w1);
  if (c.time_sampling == TimeSampling::LogitNormal) {
    const double z = std::sqrt(-2.0 * std::log(double(philox_uniform(w1)))) * std::cos(2 * M_PI * philox_uniform(w2));
    u = 1.0 / (1.0 + std::exp(-(c.logit_mean + c.logit_std * z)));
  }
  if (c.objective == Objective::Flow) return Level{1.0 - u, u, u};
  const int t = std::min(c.T - 1, int(std::floor(u * c.T)));
  return Level{table.sqrt_abar[size_t(t)], table.sqrt_one_minus_abar[size_t(t)], double(t) / double(c.T)};
}

double loss_weight(const TrainConfig& c, double alpha, double sigma) {
  if (c.weighting == LossWeighting::None) return 1.0;
  const double snr = (alpha * alpha) / (sigma * sigma);
  double factor = 1.0;  // the output's error to the data prediction's error
  switch (c.objective) {
    case Objective::Epsilon: factor = sigma / alpha; break;
    case Objective::Sample: factor = 1.0; break;
    case Objective::VPrediction: factor = sigma; break;
    case Objective::Flow: factor = sigma; break;
  }
  return std::min(snr, c.snr_gamma) * factor * factor;
}

}  // namespace diffscope::train
