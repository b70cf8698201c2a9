// sampling.cpp — starting states of a sampling run: pure noise or noised data (SEMANTICS §3, §7).
#include "diffusion/sampling.h"

#include <algorithm>
#include <cmath>

#include "base/arg_error.h"
#include "base/errors.h"
#include "base/philox_normal.h"
#include "platform/cpu_threads.h"

namespace diffscope {

namespace {
constexpr int kRowsPerBlock = 4096;  // rows of starting noise per block of work (each row is independent)

// body(i) for every row i in [0, n), in blocks over the CPU threads.
template <class F>
void for_rows(int n, F body) {
  parallel_blocks((n + kRowsPerBlock - 1) / kRowsPerBlock, [&](int64_t blk) {
    const int end = static_cast<int>(std::min<int64_t>(n, (blk + 1) * kRowsPerBlock));
    for (int i = static_cast<int>(blk) * kRowsPerBlock; i < end; ++i) body(i);
  });
}
}  // namespace

void fill_start_noise(const DiffusionModel& model, uint64_t seed, int n, float* x, uint32_t row_offset) {
  const int dim = model.net.dim;
  const uint32_t key = kStartNoiseKey(static_cast<uint32_t>(model.schedule.T));
  for_rows(n, [&](int i) {
    philox_normal_row(seed, row_offset + static_cast<uint32_t>(i), key, dim, x + static_cast<int64_t>(i) * dim);
  });
}

void scale_start_noise(const StepTable& tab, size_t count, float* x) {
  const Family f = tab.family.family;
  if (tab.levels.empty() || f == Family::Epsilon || f == Family::Sample || f == Family::VPrediction) return;
  const NoiseLevel& lv = tab.levels.front();
  const float scale = static_cast<float>(std::sqrt(lv.alpha * lv.alpha + lv.sigma * lv.sigma));
  for (size_t i = 0; i < count; ++i) x[i] *= scale;
}

StartScales start_from_data_scales(const Schedule& sched, int t_start) {
  const double abar = sched.alphas_cumprod[t_start];
  return {static_cast<float>(std::sqrt(abar)), static_cast<float>(std::sqrt(1.0 - abar))};
}

void fill_start_from_data(const DiffusionModel& model, int t_start, uint64_t seed, int n, float* x,
                          uint32_t row_offset) {
  if (model.n_data <= 0)
    throw ArgumentError(Arg::FromData, "true", "a model with data_samples",
                        arg_ref(Arg::FromData) + ": the model '" + model.path + "' has no data_samples tensor");
  if (t_start < 0 || t_start >= model.schedule.T)
    check_arg_range(Arg::TStart, t_start, 0, model.schedule.T - 1);
  fill_start_from_data(model, start_from_data_scales(model.schedule, t_start), seed, n, x, row_offset);
}

void fill_start_from_data(const DiffusionModel& model, StartScales sc, uint64_t seed, int n, float* x,
                          uint32_t row_offset) {
  const int dim = model.net.dim;
  if (model.n_data <= 0)
    throw ArgumentError(Arg::FromData, "true", "a model with data_samples",
                        arg_ref(Arg::FromData) + ": the model '" + model.path + "' has no data_samples tensor");
  const float a = sc.data, b = sc.noise;
  const uint32_t key = kFromDataNoiseKey(static_cast<uint32_t>(model.schedule.T));
  for_rows(n, [&](int i) {
    // Row i of the run is global row row_offset + i: data row and noise both follow the global index.
    const uint32_t row = row_offset + static_cast<uint32_t>(i);
    const float* d = model.data_samples.data() + static_cast<int64_t>(row % model.n_data) * dim;
    float* xi = x + static_cast<int64_t>(i) * dim;
    philox_normal_row(seed, row, key, dim, xi);
    for (int c = 0; c < dim; ++c) xi[c] = a * d[c] + b * xi[c];
  });
}

}  // namespace diffscope
