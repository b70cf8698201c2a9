// density.h — the density view's maths (SEMANTICS §6 "The density view"), shared by the GL path (render/) and
// the CPU path: the 2D histogram of samples over a rectangle with its edge rule, and the exact density of an
// analytic mixture noised to a level. No GL, no CUDA.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/family.h"
#include "model/gaussian_mixture.h"

namespace diffscope {

// A histogram's bins: nx x ny equal bins over [x0, x1] x [y0, y1] (data units; x0 < x1, y0 < y1, nx, ny >= 1).
// The edges are float32 (histogram_edges), so the GL shader, the CPU and numpy compare the same numbers.
struct HistogramGrid {
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  int nx = 1, ny = 1;
};

// The n + 1 edges of n equal bins over [lo, hi] as float32: e_k = float(lo + (hi - lo) * k / n) computed in
// double, e_0 = float(lo), e_n = float(hi). Throws InvalidInput when n < 1 or !(lo < hi).
std::vector<float> histogram_edges(double lo, double hi, int n);

// The bin of v among `edges` (n + 1 ascending values): k with e_k <= v < e_{k+1}, the last bin closed on the
// right (v == e_n is in bin n - 1, as numpy's histogram2d); -1 outside [e_0, e_n] or for NaN.
int histogram_bin(float v, const float* edges, int n);

// The counts of n points xy (n, 2) row-major float32 in the bins of `grid`, row-major (ny, nx): count[iy * nx + ix]
// (iy = 0 the bottom row, y0). Points outside the rectangle are not counted. The GL path (render/renderer.h
// Renderer::density_counts) gives the same counts for dim-2 rows.
std::vector<uint32_t> histogram_2d(const float* xy, size_t n, const HistogramGrid& grid);

// At most this many bins in a pane's histogram (32 MB of counts; within every GL's compute dispatch limits).
inline constexpr long long kMaxHistogramBins = 1LL << 23;
// The bin size a w x h pane takes: bin_px (at least 1), raised until ceil(w / b) * ceil(h / b) <= kMaxHistogramBins
// (only pictures of tens of millions of pixels at small bins need it).
int histogram_bin_px(int w, int h, int bin_px);

// The bins of a pane w x h pixels showing [x0, x1] x [y0, y1], `bin_px` pixels per bin: nx = ceil(w / bin_px),
// ny = ceil(h / bin_px), the rectangle widened to whole bins from the bottom-left corner (square bins on screen).
HistogramGrid pane_histogram_grid(double x0, double x1, double y0, double y1, int w, int h, int bin_px);

// The density view's colour bar labels (SEMANTICS §6): counts 0, the powers of ten below 0.7 x top (log scale) or
// top / 2 (linear), and the largest count `top`; and where a count sits on the bar, 0 at its bottom, 1 at its top:
// log(1 + c) / log(1 + top) (log) or c / top (linear), the tone map's t. Empty for top = 0.
std::vector<double> colour_bar_ticks(uint32_t top, bool log_scale);
double colour_bar_position(double count, uint32_t top, bool log_scale);

// A mixture of isotropic 2D gaussians: weight w_k, mean (mx_k, my_k), variance var_k per coordinate.
struct IsoGaussian2 {
  double w = 1, mx = 0, my = 0, var = 1;
};

// The analytic mixture (dim 2) noised to `level` in the family's own state, x = alpha x0 + sigma eps:
// N(mu_k, s_k^2 I) becomes N(alpha mu_k, (alpha^2 s_k^2 + sigma^2) I) (SEMANTICS §6). Throws InvalidInput for
// dim != 2.
std::vector<IsoGaussian2> noised_mixture(const GaussianMixture& m, const NoiseLevel& level);

// The density sum_k w_k N((x, y); mu_k, var_k I) in float64.
double mixture_density(const std::vector<IsoGaussian2>& c, double x, double y);

}  // namespace diffscope
