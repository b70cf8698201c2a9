// train_data.h — a training run's data (SEMANTICS §11): read, checked, normalised and split into the rows trained on
// and the held-out rows saved as the model's `data_samples`.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace diffscope::train {

// Most rows a data set may have (more is refused, exit 2), and its largest dim.
constexpr int64_t kMaxDataRows = 10000000;
constexpr int kMaxDataDim = 64;
// Most held-out rows kept as data_samples.
constexpr int64_t kMaxHeldOutRows = 10000;

struct DataOptions {
  // A .npy (N, dim) float16/32/64 file; a bundled model's name or a .safetensors model file (its data_samples);
  // or an analytic Gaussian-mixture file (kind gaussian_mixture), sampled: mixture_rows rows.
  std::string source;
  int64_t mixture_rows = 20000;
  double holdout = 0.1;              // fraction of the rows held out, [0, 0.5]
  std::string normalization = "standard";  // standard: x = (raw - mean) / sqrt(mean per-coordinate variance); none
  uint64_t seed = 0;                 // the split's permutation and the mixture's samples
};

struct TrainData {
  int dim = 0;
  int64_t n_train = 0, n_held = 0;
  std::vector<float> train, held;    // (n_train, dim), (n_held, dim), normalised
  std::vector<double> offset;        // x = (raw - offset) * scale
  double scale = 1.0;
  std::string normalization, source; // as in DataOptions; source in words
};

// Reads, checks and prepares the data. InvalidInput (exit 2) naming the argument (`arg_name`: "--data", "data"),
// the value and the valid range for: an unreadable or malformed file, a non-2-D array, no rows or fewer than 2,
// more than kMaxDataRows rows, dim outside 1..64, a NaN or infinity (its row and column), zero variance under
// standard normalisation, a model file without data_samples.
TrainData load_train_data(const DataOptions& o, const std::function<std::string(const std::string&)>& arg_name);

// The same from rows already in memory (raw: n x dim, row-major); `label` names the data in messages.
TrainData prepare_train_data(std::vector<float> raw, int64_t n, int dim, const DataOptions& o, const std::string& label,
                             const std::function<std::string(const std::string&)>& arg_name);

}  // namespace diffscope::train
