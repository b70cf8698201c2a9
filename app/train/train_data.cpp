// train_data.cpp — reading, checking, normalising and splitting a training run's data.
#include "train/train_data.h"

#include <cmath>
#include <filesystem>
#include <numeric>
#include <utility>

#include "base/errors.h"
#include "formats/npy.h"
#include "model/model.h"
#include "platform/model_paths.h"
#include "train/train_rng.h"

namespace diffscope::train {
namespace {

// The Philox "step" of the data's own draws (split, mixture samples): beyond every training step (<= 10^7).
constexpr uint64_t kDataStreamStep = (uint64_t(1) << 62) + 1;

bool ends_with(const std::string& s, const std::string& e) {
  return s.size() >= e.size() && s.compare(s.size() - e.size(), e.size(), e) == 0;
}

// Rows of an analytic mixture: component by its weight, then mean + std z.
std::vector<float> mixture_rows(const GaussianMixture& g, int64_t n, uint64_t seed) {
  std::vector<float> out(size_t(n) * size_t(g.dim));
  std::vector<float> z(static_cast<size_t>(g.dim));
  for (int64_t r = 0; r < n; ++r) {
    const double u = philox_uniform(batch_row_words(seed, kDataStreamStep, uint32_t(r))[0]);
    int k = 0;
    for (double acc = g.weights[0]; k + 1 < g.K && u > acc; acc += g.weights[size_t(++k)]) {}
    batch_row_noise(seed, kDataStreamStep + 1, uint32_t(r), g.dim, z.data());
    for (int i = 0; i < g.dim; ++i)
      out[size_t(r) * size_t(g.dim) + size_t(i)] =
          float(g.means[size_t(k) * size_t(g.dim) + size_t(i)] + g.stds[size_t(k)] * z[size_t(i)]);
  }
  return out;
}

// A .npy file's size checked before it is read: more bytes than 10^7 rows of 64 float64 values (and a header)
// cannot be a data set within the cap.
void check_npy_size(const std::string& path, const std::string& arg) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  const uint64_t most = uint64_t(kMaxDataRows) * kMaxDataDim * 8 + (1u << 20);
  if (!ec && bytes > most)
    throw InvalidInput(arg + " " + path + " has " + std::to_string(bytes) + " bytes; valid: at most " +
                       std::to_string(kMaxDataRows) + " rows of at most " + std::to_string(kMaxDataDim) +
                       " float64 columns (" + std::to_string(most) + " bytes)");
}

// A permutation of 0..n-1 (Fisher-Yates on Philox words), deterministic in the seed.
std::vector<int64_t> permutation(int64_t n, uint64_t seed) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), int64_t(0));
  for (int64_t i = n - 1; i > 0; --i) {
    const auto w = batch_row_words(seed, kDataStreamStep + 2, uint32_t(i));
    std::swap(p[size_t(i)], p[index_of(w[0], uint64_t(i + 1))]);
  }
  return p;
}

}  // namespace

TrainData prepare_train_data(std::vector<float> raw, int64_t n, int dim, const DataOptions& o, const std::string& label,
                             const std::function<std::string(const std::string&)>& arg_name) {
  const std::string arg = arg_name("data");
  if (n < 2 || n > kMaxDataRows)
    throw InvalidInput(arg + " " + label + " has " + std::to_string(n) + " rows; valid: [2, " +
                       std::to_string(kMaxDataRows) + "]");
  if (dim < 1 || dim > kMaxDataDim)
    throw InvalidInput(arg + " " + label + " has dim " + std::to_string(dim) + "; valid: [1, " +
                       std::to_string(kMaxDataDim) + "]");
  for (size_t i = 0; i < raw.size(); ++i)
    if (!std::isfinite(raw[i]))
      throw InvalidInput(arg + " " + label + " holds " + std::to_string(raw[i]) + " at row " +
                         std::to_string(i / size_t(dim)) + ", column " + std::to_string(i % size_t(dim)) +
                         "; valid: finite values");
  if (!(o.holdout >= 0 && o.holdout <= 0.5))
    throw InvalidInput(arg_name("holdout") + " = " + std::to_string(o.holdout) + " is out of range; valid: [0, 0.5]");
  TrainData d;
  d.dim = dim;
  d.normalization = o.normalization;
  d.source = label;
  d.offset.assign(size_t(dim), 0.0);
  if (o.normalization == "standard") {
    std::vector<double> sum(size_t(dim), 0.0), sq(size_t(dim), 0.0);
    for (int64_t r = 0; r < n; ++r)
      for (int i = 0; i < dim; ++i) sum[size_t(i)] += raw[size_t(r) * size_t(dim) + size_t(i)];
    for (int i = 0; i < dim; ++i) d.offset[size_t(i)] = sum[size_t(i)] / double(n);
    double var = 0;
    for (int64_t r = 0; r < n; ++r)
      for (int i = 0; i < dim; ++i) {
        const double c = raw[size_t(r) * size_t(dim) + size_t(i)] - d.offset[size_t(i)];
        var += c * c;
      }
    var /= double(n) * double(dim);
    if (!(var > 0)) throw InvalidInput(arg + " " + label + " has zero variance; valid: data that varies (or --normalize none)");
    d.scale = 1.0 / std::sqrt(var);
  } else if (o.normalization != "none") {
    throw InvalidInput(arg_name("normalize") + " '" + o.normalization + "' is not known; valid: standard, none");
  }
  for (int64_t r = 0; r < n; ++r)
    for (int i = 0; i < dim; ++i) {
      float& v = raw[size_t(r) * size_t(dim) + size_t(i)];
      v = float((v - d.offset[size_t(i)]) * d.scale);
    }
  d.n_held = std::min<int64_t>(kMaxHeldOutRows, std::llround(o.holdout * double(n)));
  d.n_train = n - d.n_held;
  const std::vector<int64_t> p = permutation(n, o.seed);
  d.train.resize(size_t(d.n_train) * size_t(dim));
  d.held.resize(size_t(d.n_held) * size_t(dim));
  for (int64_t r = 0; r < n; ++r) {
    float* to = r < d.n_train ? &d.train[size_t(r) * size_t(dim)] : &d.held[size_t(r - d.n_train) * size_t(dim)];
    std::copy_n(&raw[size_t(p[size_t(r)]) * size_t(dim)], dim, to);
  }
  return d;
}

TrainData load_train_data(const DataOptions& o, const std::function<std::string(const std::string&)>& arg_name) {
  const std::string arg = arg_name("data");
  if (ends_with(o.source, ".npy")) {
    check_npy_size(o.source, arg);
    NpyFloat a = read_npy_float(o.source, arg);
    if (a.shape.size() != 2)
      throw InvalidInput(arg + " " + o.source + " has " + std::to_string(a.shape.size()) +
                         " dimensions; valid: a 2-D array (N, dim)");
    if (a.shape[1] < 1 || a.shape[1] > kMaxDataDim)
      throw InvalidInput(arg + " " + o.source + " has dim " + std::to_string(a.shape[1]) + "; valid: [1, " +
                         std::to_string(kMaxDataDim) + "]");
    return prepare_train_data(std::move(a.data), a.shape[0], int(a.shape[1]), o, o.source, arg_name);
  }
  const std::string path = resolve_model_arg(arg, o.source);
  const DiffusionModel m = [&] {
    try {
      return load_diffusion_model(path);
    } catch (const InvalidInput& e) {  // the reader's message names the file, not the argument
      const std::string what = e.what();
      throw InvalidInput(what.rfind(arg, 0) == 0 ? what : arg + " " + what);
    }
  }();
  if (m.mixture) {
    if (o.mixture_rows < 2 || o.mixture_rows > kMaxDataRows)
      throw InvalidInput(arg_name("mixture_rows") + " = " + std::to_string(o.mixture_rows) +
                         " is out of range; valid: [2, " + std::to_string(kMaxDataRows) + "]");
    return prepare_train_data(mixture_rows(*m.mixture, o.mixture_rows, o.seed), o.mixture_rows, m.mixture->dim, o,
                              o.source + " (" + std::to_string(o.mixture_rows) + " mixture samples)", arg_name);
  }
  if (m.n_data == 0)
    throw InvalidInput(arg + " " + o.source + " has no data_samples; valid: a .npy (N, dim), a model file with "
                       "data_samples, or a gaussian_mixture file");
  return prepare_train_data(m.data_samples, m.n_data, m.net.dim, o, o.source + " data_samples", arg_name);
}

}  // namespace diffscope::train
