// ranges.h — the one place each user-facing value's valid range is defined. Command-line options and script
// `set` lines refuse values outside (InvalidInput, exit 2); the GUI's widgets and the settings file clamp into
// them (SEMANTICS §3).
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

// The widgets' bounds and what `--set` accepts for the drawing settings and a few sampling ones; the table above
// uses the same constants for the settings file.
struct RealRange {
  double lo, hi;
  double clamp(double v) const { return v < lo ? lo : (v > hi ? hi : v); }
  bool contains(double v) const { return v >= lo && v <= hi; }  // false for NaN
};
constexpr IntRange kTrailFramesRange{0, 64};       // stored frames behind each point; 0 = no trails
constexpr IntRange kStepsPerFrameRange{0, 1000};   // steps computed per UI frame; 0 = automatic
constexpr IntRange kGridColsRange{1, 64};          // image models: samples per row of the grid
constexpr IntRange kBudgetMbRange{16, 65536};      // trajectory memory budget (MB)
constexpr IntRange kStepsPerLaunchRange{1, 1'000'000};  // S of the fused kernel (the session clamps it to steps)
constexpr RealRange kPlaySpeedRange{0.1, 20.0};    // frames advanced per UI frame when replaying
constexpr RealRange kPointSizeRange{1.0, 12.0};    // pixels at UI scale 1
constexpr RealRange kPointAlphaRange{0.05, 1.0};

// Each throws InvalidInput("<arg> = <value> is out of range; valid: [lo, hi]") when outside.
void check_range(const std::string& arg, int64_t value, IntRange r);
// Throws check_range's InvalidInput for a value given as text (one that may not fit in int64: a Python int, a uint64).
[[noreturn]] void throw_out_of_range(const std::string& arg, const std::string& value_text, IntRange r);
// eta in [0, 1]: InvalidInput naming `arg` (the caller's spelling), or with arg "" an ArgumentError (Arg::Eta).
void check_eta(double eta, const std::string& arg = "");
void check_real_range(const std::string& arg, double value, RealRange r);

// SEMANTICS §4 input checks for denoise: B >= 1, x finite, x width == dim, 0 <= t_start[b] <= T-1, S >= 1.
// x_cols is the width of the x array as given. Messages name the argument, the index and the value.
void validate_denoise_inputs(const DiffusionModel& model, const float* x, int64_t B, int64_t x_cols,
                             const int64_t* t_start, int64_t n_t_start, int64_t S);

}  // namespace diffscope
