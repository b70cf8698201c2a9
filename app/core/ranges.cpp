// ranges.cpp — valid ranges of user-facing values and the denoise input checks (SEMANTICS §3, §4).
#include "core/ranges.h"

#include <cmath>
#include <sstream>

#include "core/errors.h"

namespace diffscope {

IntRange t_start_range(const Schedule& s) { return {0, static_cast<int64_t>(s.T) - 1}; }

IntRange sample_steps_range(int t_start) { return {1, static_cast<int64_t>(t_start) + 1}; }

// The same bound on both backends: the CPU is just slower (1e6 rows x 1000 steps of the reference
// network is hours on two cores, but not wrong). Memory beyond that is the user's to ask for.
IntRange sample_count_range(bool /*gpu*/) { return {1, 1'000'000}; }

const std::vector<PersistedRange>& persisted_ranges() {
  // Bounds: the sampling ranges above where they do not depend on the model (T <= 1,000,000, schedule.cpp),
  // the GUI's slider bounds for the view, the PNG size limit for exports. The camera: centre within 1e5 and
  // half-height in [1e-3, 1e4] data units (the zoom's own clamp), so float32 view maths stays meaningful.
  static const std::vector<PersistedRange> table = {
      {"sampling.n_samples", 1, 1'000'000},
      {"sampling.eta", kEtaMin, kEtaMax},
      {"sampling.steps", 1, 1'000'000},
      {"sampling.t_start", 0, 999'999},
      {"sampling.steps_per_launch", double(kStepsPerLaunchRange.lo), double(kStepsPerLaunchRange.hi)},
      {"sampling.seed", 0, 18446744073709551615.0},
      {"sampling.memory_budget_mb", double(kBudgetMbRange.lo), double(kBudgetMbRange.hi)},
      {"view.trail_frames", double(kTrailFramesRange.lo), double(kTrailFramesRange.hi)},
      {"view.field_grid", 4, 64},
      {"view.point_size", kPointSizeRange.lo, kPointSizeRange.hi},
      {"view.point_alpha", kPointAlphaRange.lo, kPointAlphaRange.hi},
      {"view.play_speed", kPlaySpeedRange.lo, kPlaySpeedRange.hi},
      {"view.steps_per_frame", double(kStepsPerFrameRange.lo), double(kStepsPerFrameRange.hi)},
      {"view.image_grid_cols", double(kGridColsRange.lo), double(kGridColsRange.hi)},
      {"view.cam_x", -1e5, 1e5},
      {"view.cam_y", -1e5, 1e5},
      {"view.cam_half_h", 1e-3, 1e4},
      {"export.width", 16, 16384},
      {"export.height", 16, 16384},
      {"export.image_grid_scale", 1, 32},
  };
  return table;
}

const PersistedRange* find_persisted_range(const std::string& name) {
  for (const PersistedRange& r : persisted_ranges())
    if (name == r.name) return &r;
  return nullptr;
}

void check_range(const std::string& arg, int64_t value, IntRange r) {
  if (!r.contains(value)) {
    std::ostringstream os;
    os << arg << " = " << value << " is out of range; valid: [" << r.lo << ", " << r.hi << "]";
    throw InvalidInput(os.str());
  }
}

void check_real_range(const std::string& arg, double value, RealRange r) {
  if (!r.contains(value)) {
    std::ostringstream os;
    os << arg << " = " << value << " is out of range; valid: [" << r.lo << ", " << r.hi << "]";
    throw InvalidInput(os.str());
  }
}

void check_eta(double eta, const char* arg) {
  if (!(eta >= kEtaMin && eta <= kEtaMax)) {  // also refuses NaN
    std::ostringstream os;
    os << arg << " = " << eta << " is out of range; valid: [" << kEtaMin << ", " << kEtaMax << "]";
    throw InvalidInput(os.str());
  }
}

void validate_denoise_inputs(const DiffusionModel& model, const float* x, int64_t B, int64_t x_cols,
                             const int64_t* t_start, int64_t n_t_start, int64_t S) {
  const int dim = model.net.dim;
  if (B < 1) throw InvalidInput("--x has " + std::to_string(B) + " rows; valid: at least 1");
  if (x_cols != dim) {
    throw InvalidInput("--x has width " + std::to_string(x_cols) + " but the model '" + model.path +
                       "' has dim " + std::to_string(dim) + "; valid: x of shape (B, " + std::to_string(dim) + ")");
  }
  if (n_t_start != B) {
    throw InvalidInput("--t-start has " + std::to_string(n_t_start) + " entries but --x has " + std::to_string(B) +
                       " rows; valid: one t_start per row");
  }
  for (int64_t i = 0; i < B * x_cols; ++i) {
    if (!std::isfinite(x[i])) {
      std::ostringstream os;
      os << "--x[" << i / x_cols << "][" << i % x_cols << "] = " << x[i] << " is not finite; valid: finite values";
      throw InvalidInput(os.str());
    }
  }
  const IntRange tr = t_start_range(model.schedule);
  for (int64_t b = 0; b < B; ++b) {
    if (!tr.contains(t_start[b])) {
      std::ostringstream os;
      os << "--t-start[" << b << "] = " << t_start[b] << " is out of range; valid: [" << tr.lo << ", " << tr.hi << "]";
      throw InvalidInput(os.str());
    }
  }
  if (S < 1) throw InvalidInput("--steps = " + std::to_string(S) + " is out of range; valid: at least 1");
}

}  // namespace diffscope
