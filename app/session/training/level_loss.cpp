// level_loss.cpp — the loss per noise level of level_loss.h.
#include "session/training/level_loss.h"

#include <algorithm>
#include <cmath>

#include "base/philox_normal.h"
#include "train/mlp.h"
#include "train/objective.h"

namespace diffscope {

std::vector<float> loss_per_level(const train::TrainConfig& c, const train::TrainData& d,
                                  const std::vector<float>& params) {
  const int dim = d.dim, rows = int(std::min<int64_t>(kLevelRows, d.n_train));
  const train::MlpLayout L(dim, c.hidden);
  std::vector<float> out(kLevelBins, 0.0f);
  if (rows == 0 || params.size() != L.size) return out;
  const train::LevelTable tab = train::level_table(c);
  std::vector<float> eps(size_t(rows) * size_t(dim));
  for (int r = 0; r < rows; ++r) philox_normal_row(c.seed, uint32_t(r), 0xC0FFEEu, dim, &eps[size_t(r) * dim]);
  train::MlpMat<float> u(rows, dim + 1);
  std::vector<float> target(size_t(rows) * size_t(dim));
  train::MlpWorkspace<float> ws;
  for (int j = 0; j < kLevelBins; ++j) {
    const double f = (j + 0.5) / kLevelBins;  // the fraction of the way from the noisiest level
    train::Level lv;
    if (c.objective == train::Objective::Flow) {
      lv = {f, 1.0 - f, 1.0 - f};
    } else {
      const int t = std::clamp(int((1.0 - f) * c.T), 0, c.T - 1);
      lv = {tab.sqrt_abar[size_t(t)], tab.sqrt_one_minus_abar[size_t(t)], double(t) / double(c.T)};
    }
    for (int r = 0; r < rows; ++r) {
      const float* x0 = &d.train[size_t(r) * dim];
      const float* e = &eps[size_t(r) * dim];
      for (int k = 0; k < dim; ++k) u(r, k) = float(lv.alpha * x0[k] + lv.sigma * e[k]);
      u(r, dim) = float(lv.time);
      train::objective_target(c.objective, x0, e, lv.alpha, lv.sigma, dim, &target[size_t(r) * dim]);
    }
    train::mlp_forward(L, params.data(), u, ws);
    double sum = 0;
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < dim; ++k) {
        const double diff = double(ws.out(r, k)) - target[size_t(r) * dim + k];
        sum += diff * diff;
      }
    out[size_t(j)] = float(sum / (double(rows) * dim));
  }
  return out;
}

}  // namespace diffscope
