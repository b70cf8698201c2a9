// finite_checks.h — no NaN or Inf in, none out (SEMANTICS §3 "Finite coefficients", §9): the check of a
// run's coefficients before any work, and the check of every output before it is written.
#pragma once
#include <cstdint>
#include <string>

#include "diffusion/step_table.h"
#include "model/schedule.h"

namespace diffscope {

// Before any work of a run that reads steps [0, k_end) of `table` (a sample table: all its steps; the
// t-indexed ddpm-mean table of denoise: k_end = max(t_start) + 1). Throws InvalidInput when
//  1. the run visits a t >= first_unusable_t: alphas_cumprod is 0 in float64 there (the schedule left no
//     signal) or its noise level sigma = sqrt((1-abar)/abar), the scale of every solver's x0 prediction, is not
//     finite in float32 (the largest visited t decides: alphas_cumprod is non-increasing);
//  2. any coefficient array of the table (every one StepTable::for_each_coefficient lists) holds a value at
//     those steps that is not finite in float64 or in float32, the precision of the kernels and of the CPU
//     float path;
//  3. from_data_t_start >= 0 and the start-from-data scales (start_from_data_scales) are not finite.
// The message names the sampler, the step and its t, the coefficient, its float64 value and what to change.
void check_run_coefficients(const Schedule& sched, const StepTable& table, int k_end, int from_data_t_start = -1);

// The first t with alphas_cumprod[t] == 0 in float64, or -1 when it never underflows.
int first_zero_alphas_cumprod(const Schedule& sched);
// The first t whose noise level sigma is not finite in float32 (alphas_cumprod 0 included), or -1: no run may
// visit it or any later t.
int first_unusable_t(const Schedule& sched);
// The largest t_start a run may take: T - 1, or the t before first_unusable_t (-1 when even t = 0 is unusable);
// `info --json` reports it as t_start_max_usable.
int t_start_max_usable(const Schedule& sched);
// The t_start of a run for which none was given (CLI `sample`, Python `sample`, the app): t_start_max_usable.
// When that is not T - 1, `note` (if given) gets one line saying why; throws InvalidInput when no t is usable.
int default_t_start(const Schedule& sched, std::string* note = nullptr);
// sigma = sqrt((1 - abar) / abar) in float32 (infinite for abar <= 0), the noise-to-signal ratio of the
// variance-preserving process (Karras et al. 2022, eq. 6 with s(t) = sqrt(abar)).
float noise_level_sigma(double abar);

// The index of the first value of data[0, n) that is not finite (NaN or +-Inf), or -1 when all are: the scan
// behind check_output_finite, also used by the GUI's run check (SamplingSession, SEMANTICS §9).
int64_t first_nonfinite(const float* data, int64_t n);

// Throws InvalidInput when `data`, (n_frames, rows, cols) float32, holds a value that is not finite: the
// message names `arg`, the first such frame (when n_frames > 1), row and column, and says nothing was
// written. Call it on every output before writing any.
void check_output_finite(const std::string& arg, const float* data, int64_t n_frames, int64_t rows, int64_t cols);

}  // namespace diffscope
