// axis_grid.h — where the scatter pane's faint unit grid draws its lines (pure arithmetic, no GL calls).
#pragma once
#include <vector>

namespace diffscope::render {

// Most lines drawn along one axis.
constexpr int kMaxGridLines = 256;

// The grid step for a half-height `half_h`: a power of ten, halved when fewer than 2.5 steps fit in half_h.
double grid_step(double half_h);

// The multiples k * step that lie in [lo, hi], smallest first. Counted as integers k, so the loop is bounded
// whatever the numbers: a step below the float64 resolution of lo (lo = 1e16, step = 1, where x += step
// would never advance) gives no lines; so do non-finite inputs, step <= 0 and more than kMaxGridLines lines.
std::vector<double> grid_lines(double lo, double hi, double step);

}  // namespace diffscope::render
