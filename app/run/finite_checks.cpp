// finite_checks.cpp — the rule of SEMANTICS §3 "Finite coefficients" and the output check of §9.
#include "run/finite_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <vector>

#include "base/errors.h"
#include "base/words.h"
#include "diffusion/sampling.h"
#include "platform/cpu_threads.h"

namespace diffscope {
namespace {

}  // namespace

int first_zero_alphas_cumprod(const Schedule& sched) {
  for (size_t t = 0; t < sched.alphas_cumprod.size(); ++t)
    if (!(sched.alphas_cumprod[t] > 0.0)) return static_cast<int>(t);
  return -1;
}

int first_unusable_t(const Schedule& sched) {
  for (size_t t = 0; t < sched.alphas_cumprod.size(); ++t)
    if (!std::isfinite(noise_level_sigma(sched.alphas_cumprod[t]))) return static_cast<int>(t);
  return -1;
}

int t_start_max_usable(const Schedule& sched) {
  const int bad = first_unusable_t(sched);
  return bad >= 0 ? bad - 1 : sched.T - 1;
}

int default_t_start(const Schedule& sched, std::string* note) {
  const int t = t_start_max_usable(sched);
  if (t < 0)
    throw InvalidInput("the model's schedule leaves no usable timestep: sigma = sqrt((1 - alphas_cumprod) / "
                       "alphas_cumprod) is not finite in float32 from t = 0 (SEMANTICS §3)");
  if (t != sched.T - 1 && note)
    *note = "t_start defaults to " + std::to_string(t) + ", not T - 1 = " + std::to_string(sched.T - 1) +
            ": the schedule's noise level sigma is not finite in float32 from t = " + std::to_string(t + 1) +
            " (SEMANTICS §3)";
  return t;
}

float noise_level_sigma(double abar) {
  if (!(abar > 0.0)) return INFINITY;
  return static_cast<float>(std::sqrt((1.0 - abar) / abar));
}

void check_run_coefficients(const Schedule& sched, const StepTable& table, int k_end, int from_data_t_start) {
  k_end = std::min(k_end, table.steps());
  const std::string who = std::string("sampler ") + sampler_name(table.sampler);
  int t_max = from_data_t_start;
  for (int k = 0; k < k_end; ++k) t_max = std::max(t_max, static_cast<int>(table.t[k]));
  // alphas_cumprod is non-increasing, so sigma grows with t: the largest visited t decides.
  // A family table (model/family.h) is judged by its coefficients alone: its levels need not be the schedule's,
  // and sample / v_prediction / flow may start at alpha = 0 (SEMANTICS §3 "Zero terminal SNR").
  const bool family = table.has_family_rows();
  const int bad = family ? -1 : first_unusable_t(sched);
  if (bad >= 0 && t_max >= bad) {
    const double abar = sched.alphas_cumprod[bad];
    const int zero = first_zero_alphas_cumprod(sched);
    std::string why = abar > 0.0 ? "alphas_cumprod[" + std::to_string(bad) + "] = " + short_number(abar) +
                                       " makes sigma = sqrt((1 - abar) / abar) (and the x0 prediction's 1 / sqrt(abar)) "
                                       "overflow float32 from t = " + std::to_string(bad)
                                 : std::string();
    if (zero >= 0 && t_max >= zero)
      why += (why.empty() ? "" : ", and ") + std::string("alphas_cumprod underflows to 0 in float64 from t = ") +
             std::to_string(zero) + " (the schedule's betas leave no signal there)";
    throw InvalidInput(who + ": the run visits t = " + std::to_string(t_max) + ", but " + why +
                       "; valid: t_start <= " + std::to_string(bad - 1) + " with this model (SEMANTICS §3)");
  }
  table.for_each_coefficient([&](const char* name, const std::vector<double>& f64, const std::vector<float>& f32) {
    const int n = std::min<int>(k_end, static_cast<int>(std::min(f64.size(), f32.size())));
    for (int k = 0; k < n; ++k) {
      if (std::isfinite(f64[k]) && std::isfinite(f32[k])) continue;
      const int t = table.t[k];
      const double abar = t >= 0 && t < static_cast<int>(sched.alphas_cumprod.size()) ? sched.alphas_cumprod[t] : NAN;
      const std::string what = who + ", step " + std::to_string(k) + " (t = " + std::to_string(t) + "): coefficient " +
                               name + " = " + short_number(f64[k]) +
                               (std::isfinite(f64[k]) ? " overflows float32 (largest " +
                                                            short_number(std::numeric_limits<float>::max()) + ")"
                                                      : " is not finite");
      if (family && k < static_cast<int>(table.levels.size()))
        throw InvalidInput(what + " at the " + family_name(table.family.family) + " level alpha = " +
                           short_number(table.levels[k].alpha) + ", sigma = " + short_number(table.levels[k].sigma) +
                           (table.family.family == Family::Epsilon
                                ? " (an epsilon model's data prediction divides by alpha)"
                                : "") +
                           "; valid: a later start (t_start) or another list (SEMANTICS §3)");
      throw InvalidInput(what + "; alphas_cumprod[" + std::to_string(t) + "] = " + short_number(abar) +
                         " is too small for this run; valid: a smaller t_start (or more steps for ddim) "
                         "(SEMANTICS §3)");
    }
  });
  if (from_data_t_start >= 0) {
    const NoiseLevel& lv = table.levels.empty() ? NoiseLevel{} : table.levels.front();
    const StartScales sc = family ? StartScales{float(lv.alpha), float(lv.sigma)}
                                  : start_from_data_scales(sched, from_data_t_start);
    if (!std::isfinite(sc.data) || !std::isfinite(sc.noise))
      throw InvalidInput(who + ": --from-data at t_start = " + std::to_string(from_data_t_start) +
                         ": the start scales sqrt(abar) = " + short_number(sc.data) + ", sqrt(1 - abar) = " + short_number(sc.noise) +
                         " are not finite in float32 (SEMANTICS §3)");
  }
}

int64_t first_nonfinite(const float* data, int64_t n) {
  const int64_t kBlock = 1 << 18;  // 1 MB of floats per block: an input of one block is scanned on the calling thread
  const int64_t n_blocks = (n + kBlock - 1) / kBlock;
  // the first non-finite index of each block (or -1), then the first block that has one
  std::vector<int64_t> first(static_cast<size_t>(std::max<int64_t>(n_blocks, 0)), -1);
  parallel_blocks(n_blocks, [&](int64_t b) {
    const int64_t end = std::min(n, (b + 1) * kBlock);
    for (int64_t i = b * kBlock; i < end; ++i)
      if (!std::isfinite(data[i])) {
        first[static_cast<size_t>(b)] = i;
        return;
      }
  });
  for (int64_t i : first)
    if (i >= 0) return i;
  return -1;
}

void check_output_finite(const std::string& arg, const float* data, int64_t n_frames, int64_t rows, int64_t cols) {
  const int64_t first = first_nonfinite(data, n_frames * rows * cols);
  if (first < 0) return;
  const int64_t frame = first / (rows * cols), row = first / cols % rows, col = first % cols;
  std::ostringstream m;
  m << arg << ": ";
  if (n_frames > 1) m << "frame " << frame << ", ";
  m << "row " << row << ", column " << col << " = " << data[first]
    << " is not finite (the computation overflowed); nothing was written (SEMANTICS §9)";
  throw InvalidInput(m.str());
}

}  // namespace diffscope
