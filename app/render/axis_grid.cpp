// axis_grid.cpp — bounded grid-line positions for the scatter pane.
#include "render/axis_grid.h"

#include <cmath>

namespace diffscope::render {

double grid_step(double half_h) {
  if (!(half_h > 0) || !std::isfinite(half_h)) return 1.0;
  double step = std::pow(10.0, std::floor(std::log10(half_h)));
  if (half_h / step < 2.5) step /= 2;
  return step;
}

std::vector<double> grid_lines(double lo, double hi, double step) {
  std::vector<double> out;
  if (!std::isfinite(lo) || !std::isfinite(hi) || !std::isfinite(step) || !(step > 0) || hi < lo) return out;
  const double k0 = std::ceil(lo / step), k1 = std::floor(hi / step);
  if (!std::isfinite(k0) || !std::isfinite(k1) || k1 - k0 + 1 > kMaxGridLines) return out;
  // Neighbouring lines must differ in float64, else the grid would be one line drawn many times.
  if (k0 * step + step == k0 * step) return out;
  for (double k = k0; k <= k1; k += 1) out.push_back(k * step);
  return out;
}

}  // namespace diffscope::render
