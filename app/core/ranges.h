// ranges.h — the one place each user-facing value's valid range is defined. The CLI refuses values
// outside (InvalidInput, exit 2); the GUI clamps into them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/model.h"

namespace diffscope {

struct IntRange {
  int64_t lo, hi;
  int64_t clamp(int64_t v) const { return v < lo ? lo : (v > hi ? hi : v); }
  bool contains(int64_t v) const { return v >= lo && v <= hi; }
};

IntRange t_start_range(const Schedule& s);            // [0, T-1]
IntRange sample_steps_range(int t_start);              // [1, t_start+1]
IntRange sample_count_range(bool gpu);                 // [1, 1'000'000] GPU, smaller on CPU
constexpr double kEtaMin = 0.0, kEtaMax = 1.0;

// The range of every persisted numeric setting (settings.json, core/settings_io.h), by "section.key" as the
// file names it. Loading clamps each value into its range (a value that is not a finite number keeps the
// default), so a file edited by hand or written by another version always renders and never stalls a loop
// over view geometry. Sampling values are clamped again against the model on use (t_start_range, ...).
struct PersistedRange {
  const char* name;  // "view.cam_x"
  double lo, hi;
};
// The whole table; every numeric field that to_json(AppSettings) writes has exactly one entry (tested).
const std::vector<PersistedRange>& persisted_ranges();
// The entry for `name`, or nullptr.
const PersistedRange* find_persisted_range(const std::string& name);

// Each throws InvalidInput("<arg> = <value> is out of range; valid: [lo, hi]") when outside.
void check_range(const std::string& arg, int64_t value, IntRange r);
void check_eta(double eta);

// SEMANTICS §4 input checks for denoise: B >= 1, x finite, x width == dim, 0 <= t_start[b] <= T-1, S >= 1.
// x_cols is the width of the x array as given. Messages name the argument, the index and the value.
void validate_denoise_inputs(const DiffusionModel& model, const float* x, int64_t B, int64_t x_cols,
                             const int64_t* t_start, int64_t n_t_start, int64_t S);

}  // namespace diffscope
