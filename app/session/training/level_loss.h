// level_loss.h — the loss of a network per noise level (the training panel's strip, SEMANTICS §11 "The training
// panel"): a single loss curve hides the levels where a model fails.
#pragma once
#include <vector>

#include "train/train_data.h"
#include "train/train_config.h"

namespace diffscope {

constexpr int kLevelBins = 16;
constexpr int kLevelRows = 256;

// The plain mean squared error of the objective's target (no loss weighting) of the network with `params`
// (MlpLayout order) at kLevelBins levels from the noisiest (VP t = floor((j + 0.5) T / bins) from the top; flow
// s = 1 - (j + 0.5) / bins), each over the same rows (the first min(kLevelRows, n_train) training rows) and the
// same noise (the seed's Philox stream, step key 0xC0FFEE). Returns kLevelBins values, noisiest first.
std::vector<float> loss_per_level(const train::TrainConfig& c, const train::TrainData& d,
                                  const std::vector<float>& params);

}  // namespace diffscope
