// density.cpp — the histogram's bins and edge rule, and the noised analytic mixture (density.h).
#include "diffusion/density.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/errors.h"

namespace diffscope {

std::vector<float> histogram_edges(double lo, double hi, int n) {
  if (n < 1 || !(lo < hi))
    throw InvalidInput("histogram bins: n = " + std::to_string(n) + " over [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]; valid: n >= 1 and lo < hi");
  std::vector<float> e(static_cast<size_t>(n) + 1);
  for (int k = 0; k <= n; ++k) e[k] = static_cast<float>(lo + (hi - lo) * k / n);
  e[0] = static_cast<float>(lo);
  e[n] = static_cast<float>(hi);
  return e;
}

int histogram_bin(float v, const float* edges, int n) {
  if (!(v >= edges[0] && v <= edges[n])) return -1;  // NaN too
  // A first guess from the uniform spacing, then the exact comparisons with the edges decide.
  const double guess = (double(v) - edges[0]) / (double(edges[n]) - edges[0]) * n;
  int k = std::clamp(static_cast<int>(guess), 0, n - 1);
  while (k > 0 && v < edges[k]) --k;
  while (k < n - 1 && v >= edges[k + 1]) ++k;
  return k;
}

std::vector<uint32_t> histogram_2d(const float* xy, size_t n, const HistogramGrid& g) {
  const std::vector<float> ex = histogram_edges(g.x0, g.x1, g.nx), ey = histogram_edges(g.y0, g.y1, g.ny);
  std::vector<uint32_t> counts(static_cast<size_t>(g.nx) * g.ny, 0);
  for (size_t i = 0; i < n; ++i) {
    const int ix = histogram_bin(xy[2 * i], ex.data(), g.nx), iy = histogram_bin(xy[2 * i + 1], ey.data(), g.ny);
    if (ix >= 0 && iy >= 0) ++counts[static_cast<size_t>(iy) * g.nx + ix];
  }
  return counts;
}

int histogram_bin_px(int w, int h, int bin_px) {
  long long b = std::max(bin_px, 1);
  auto bins = [&](long long px) { return ((std::max(w, 1) + px - 1) / px) * ((std::max(h, 1) + px - 1) / px); };
  while (bins(b) > kMaxHistogramBins) ++b;
  return static_cast<int>(b);
}

HistogramGrid pane_histogram_grid(double x0, double x1, double y0, double y1, int w, int h, int bin_px) {
  bin_px = std::max(bin_px, 1);
  HistogramGrid g;
  g.nx = std::max(1, (w + bin_px - 1) / bin_px);
  g.ny = std::max(1, (h + bin_px - 1) / bin_px);
  const double px_x = (x1 - x0) / std::max(w, 1), px_y = (y1 - y0) / std::max(h, 1);
  g.x0 = x0, g.y0 = y0;
  g.x1 = x0 + px_x * bin_px * g.nx;
  g.y1 = y0 + px_y * bin_px * g.ny;
  return g;
}

std::vector<IsoGaussian2> noised_mixture(const GaussianMixture& m, const NoiseLevel& level) {
  if (m.dim != 2) throw InvalidInput("noised mixture: dim = " + std::to_string(m.dim) + "; valid: 2");
  std::vector<IsoGaussian2> c(static_cast<size_t>(m.K));
  const double a = level.alpha, s = level.sigma;
  for (int k = 0; k < m.K; ++k)
    c[k] = {m.weights[k], a * m.means[2 * k], a * m.means[2 * k + 1], a * a * m.stds[k] * m.stds[k] + s * s};
  return c;
}

double mixture_density(const std::vector<IsoGaussian2>& c, double x, double y) {
  constexpr double kTwoPi = 6.283185307179586476925;
  double p = 0;
  for (const IsoGaussian2& g : c) {
    const double dx = x - g.mx, dy = y - g.my;
    p += g.w / (kTwoPi * g.var) * std::exp(-(dx * dx + dy * dy) / (2 * g.var));
  }
  return p;
}

std::vector<double> colour_bar_ticks(uint32_t top, bool log_scale) {
  if (top == 0) return {};
  std::vector<double> ticks = {0};
  if (log_scale)
    for (double c = 1; c < top * 0.7; c *= 10) ticks.push_back(c);
  else
    ticks.push_back(top / 2.0);
  ticks.push_back(top);
  return ticks;
}

double colour_bar_position(double count, uint32_t top, bool log_scale) {
  if (top == 0) return 0;
  return log_scale ? std::log1p(count) / std::log1p(double(top)) : count / top;
}

}  // namespace diffscope
