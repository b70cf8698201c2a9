// input_checks.h — the valid ranges that depend on a model (t_start, steps, sample count, eta) and the denoise
// input checks (SEMANTICS §3, §4). Errors are InvalidInput naming the argument, the value and the valid range.
#pragma once
#include <cstdint>
#include <string>

#include "base/ranges.h"
#include "model/model.h"

namespace diffscope {

IntRange t_start_range(const Schedule& s);            // [0, T-1]
IntRange sample_steps_range(int t_start);              // [1, t_start+1]
IntRange sample_count_range(bool gpu);                 // [1, 1'000'000] GPU, smaller on CPU
constexpr double kEtaMin = 0.0, kEtaMax = 1.0;
// eta in [0, 1]: InvalidInput naming `arg` (the caller's spelling), or with arg "" an ArgumentError (Arg::Eta).
void check_eta(double eta, const std::string& arg = "");

// SEMANTICS §4 input checks for denoise: B >= 1, x finite, x width == dim, 0 <= t_start[b] <= T-1, S >= 1.
// x_cols is the width of the x array as given. Messages name the argument, the index and the value.
// The model's family with a front end's prediction_type `f` (SEMANTICS §2 "How a file says it"): a file that
// names no prediction_type runs as `f` with its own time_input key read for `f` (InvalidInput when `f` has no such
// input), else `f`'s default, and `note` (when given) gets one line saying so; a file that names `f` itself is unchanged; a file that names another family is refused
// (ArgumentError, Arg::PredictionType, naming both).
FamilyParams family_with_prediction_type(const DiffusionModel& model, Family f, std::string* note = nullptr);

void validate_denoise_inputs(const DiffusionModel& model, const float* x, int64_t B, int64_t x_cols,
                             const int64_t* t_start, int64_t n_t_start, int64_t S);

}  // namespace diffscope
