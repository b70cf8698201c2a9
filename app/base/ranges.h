// ranges.h — integer and real ranges, the range check every front end uses and the bounds of the drawing
// settings. Command-line options and script `set` lines refuse values outside (InvalidInput, exit 2); the GUI's
// widgets and the settings file clamp into them (SEMANTICS §3). The ranges that depend on a model are in
// diffusion/input_checks.h, the settings file's table in session/persisted_ranges.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace diffscope {

struct IntRange {
  int64_t lo, hi;
  int64_t clamp(int64_t v) const { return v < lo ? lo : (v > hi ? hi : v); }
  bool contains(int64_t v) const { return v >= lo && v <= hi; }
};

struct RealRange {
  double lo, hi;
  double clamp(double v) const { return v < lo ? lo : (v > hi ? hi : v); }
  bool contains(double v) const { return v >= lo && v <= hi; }  // false for NaN
};
// The widgets' bounds and what `--set` accepts for the drawing settings and a few sampling ones; the settings
// file's table (session/persisted_ranges.h) uses the same constants.
constexpr IntRange kTrailFramesRange{0, 64};       // stored frames behind each point; 0 = no trails
constexpr IntRange kStepsPerFrameRange{0, 1000};   // steps computed per UI frame; 0 = automatic
constexpr IntRange kGridColsRange{1, 64};          // image models: samples per row of the grid
constexpr IntRange kDensityBinPxRange{1, 16};      // the density view: pixels per histogram bin, each way
constexpr IntRange kBudgetMbRange{16, 65536};      // trajectory memory budget (MB)
constexpr IntRange kStepsPerLaunchRange{1, 1'000'000};  // S of the fused kernel (the session clamps it to steps)
constexpr RealRange kPlaySpeedRange{0.1, 20.0};    // frames advanced per UI frame when replaying
constexpr RealRange kPointSizeRange{1.0, 12.0};    // pixels at UI scale 1
constexpr RealRange kPointAlphaRange{0.05, 1.0};
constexpr RealRange kFlowShiftRange{0.001, 1000.0};  // a flow list's shift (SD3 eq. 23; > 0, 1 = none)

// Each throws InvalidInput("<arg> = <value> is out of range; valid: [lo, hi]") when outside.
void check_range(const std::string& arg, int64_t value, IntRange r);
// Throws check_range's InvalidInput for a value given as text (one that may not fit in int64: a Python int, a uint64).
[[noreturn]] void throw_out_of_range(const std::string& arg, const std::string& value_text, IntRange r);
void check_real_range(const std::string& arg, double value, RealRange r);

}  // namespace diffscope
