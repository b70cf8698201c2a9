// test_density.cpp — the density view's maths (diffusion/density.h): the histogram's edges and edge rule (a point
// on an interior edge goes to the bin above it, one on the last edge to the last bin, NaN and outside points to
// none), counts of a hand-made set, the pane's bins; and the exact density of the noised mixture against an
// independent float64 evaluation: the clean mixture convolved with the noise kernel by quadrature,
// p_level(y) = int p0(x) N(y; alpha x, sigma^2 I) dx, at VP, flow and EDM levels.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/errors.h"
#include "diffusion/density.h"

namespace diffscope {
namespace {

TEST(Density, EdgesAreFloat32OfTheExactSpacing) {
  const std::vector<float> e = histogram_edges(-1.0, 2.0, 3);
  EXPECT_EQ(e, (std::vector<float>{-1.0f, 0.0f, 1.0f, 2.0f}));
  const std::vector<float> f = histogram_edges(0.1, 0.7, 6);
  ASSERT_EQ(f.size(), 7u);
  for (int k = 0; k <= 6; ++k) EXPECT_EQ(f[k], float(0.1 + 0.6 * k / 6)) << k;
  EXPECT_THROW(histogram_edges(1, 1, 4), InvalidInput);
  EXPECT_THROW(histogram_edges(0, 1, 0), InvalidInput);
}

TEST(Density, EdgeRuleMatchesNumpy) {
  const std::vector<float> e = histogram_edges(0.0, 4.0, 4);  // 0 1 2 3 4
  EXPECT_EQ(histogram_bin(0.0f, e.data(), 4), 0);
  EXPECT_EQ(histogram_bin(1.0f, e.data(), 4), 1) << "an interior edge belongs to the bin above it";
  EXPECT_EQ(histogram_bin(std::nextafter(1.0f, 0.0f), e.data(), 4), 0);
  EXPECT_EQ(histogram_bin(3.999f, e.data(), 4), 3);
  EXPECT_EQ(histogram_bin(4.0f, e.data(), 4), 3) << "the last bin is closed on the right";
  EXPECT_EQ(histogram_bin(std::nextafter(4.0f, 5.0f), e.data(), 4), -1);
  EXPECT_EQ(histogram_bin(-1e-7f, e.data(), 4), -1);
  EXPECT_EQ(histogram_bin(std::numeric_limits<float>::quiet_NaN(), e.data(), 4), -1);
  // Edges that are not exact multiples: the comparison with the float32 edge decides, not the spacing.
  const std::vector<float> f = histogram_edges(0.1, 0.7, 6);
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(histogram_bin(f[k], f.data(), 6), k) << k;
    EXPECT_EQ(histogram_bin(std::nextafter(f[k + 1], 0.0f), f.data(), 6), k) << k;
  }
}

TEST(Density, CountsOfAHandMadeSet) {
  HistogramGrid g;
  g.x0 = 0, g.x1 = 2, g.y0 = 0, g.y1 = 1, g.nx = 2, g.ny = 2;
  const float pts[] = {0.1f, 0.1f, 1.0f, 0.5f, 2.0f, 1.0f, 0.5f, 0.75f, 3.0f, 0.5f, 1.9f, 0.2f};
  // (0.1,0.1) -> (0,0); (1,0.5) -> (1,1); (2,1) -> (1,1); (0.5,0.75) -> (0,1); (3,0.5) outside; (1.9,0.2) -> (1,0)
  EXPECT_EQ(histogram_2d(pts, 6, g), (std::vector<uint32_t>{1, 1, 1, 2}));
}

TEST(Density, PaneBinsAreWholePixelBlocks) {
  const HistogramGrid g = pane_histogram_grid(-2, 2, -1, 1, 400, 200, 3);
  EXPECT_EQ(g.nx, 134);  // ceil(400 / 3)
  EXPECT_EQ(g.ny, 67);
  EXPECT_DOUBLE_EQ(g.x1, -2 + 4.0 / 400 * 3 * 134);
  EXPECT_DOUBLE_EQ(g.y1, -1 + 2.0 / 200 * 3 * 67);
  EXPECT_EQ(histogram_bin_px(400, 200, 3), 3);
  EXPECT_EQ(histogram_bin_px(400, 200, 0), 1);
  // 16384 x 16384 at 1 px: ceil(16384 / b)^2 <= 2^23 first at b = 6 (2731^2 = 7,458,361; b = 5: 3277^2 > 2^23).
  EXPECT_EQ(histogram_bin_px(16384, 16384, 1), 6);
}

// The clean mixture convolved with N(y; alpha x, sigma^2 I) by a midpoint rule over x (per coordinate: the
// components are isotropic, so the 2D integral is a product of two 1D integrals).
double convolved_density(const GaussianMixture& m, double alpha, double sigma, double y0, double y1) {
  const double pi = 3.14159265358979323846;
  double total = 0;
  for (int k = 0; k < m.K; ++k) {
    double f[2];
    const double y[2] = {y0, y1};
    for (int d = 0; d < 2; ++d) {
      const double mu = m.means[2 * k + d], s = m.stds[k];
      const int n = 20000;
      const double lo = mu - 12 * s, h = 24 * s / n;
      double acc = 0;
      for (int i = 0; i < n; ++i) {
        const double x = lo + (i + 0.5) * h;
        const double p0 = std::exp(-(x - mu) * (x - mu) / (2 * s * s)) / std::sqrt(2 * pi * s * s);
        const double r = y[d] - alpha * x;
        acc += p0 * std::exp(-r * r / (2 * sigma * sigma)) / std::sqrt(2 * pi * sigma * sigma) * h;
      }
      f[d] = acc;
    }
    total += m.weights[k] * f[0] * f[1];
  }
  return total;
}

TEST(Density, NoisedMixtureMatchesTheConvolutionAtEveryFamilysLevel) {
  GaussianMixture m;
  m.K = 3, m.dim = 2;
  m.means = {-1.0, 0.5, 1.2, -0.3, 0.2, 1.5};
  m.stds = {0.3, 0.15, 0.5};
  m.weights = {0.5, 0.3, 0.2};
  const NoiseLevel levels[] = {NoiseLevel::vp(0.3, 700), NoiseLevel::vp(0.98, 20), NoiseLevel::flow(0.4),
                               NoiseLevel::ve(2.0)};
  for (const NoiseLevel& lv : levels) {
    const std::vector<IsoGaussian2> c = noised_mixture(m, lv);
    for (double y0 : {-1.0, 0.0, 0.7, 2.5})
      for (double y1 : {-0.5, 0.4, 1.3}) {
        const double want = convolved_density(m, lv.alpha, lv.sigma, y0, y1);
        EXPECT_NEAR(mixture_density(c, y0, y1), want, 1e-9 * std::max(1.0, want))
            << "alpha " << lv.alpha << " sigma " << lv.sigma << " at " << y0 << ", " << y1;
      }
  }
  // The clean level (sigma 0): the mixture itself.
  const std::vector<IsoGaussian2> clean = noised_mixture(m, NoiseLevel{});
  const double pi = 3.14159265358979323846;
  double want = 0;
  for (int k = 0; k < 3; ++k) {
    const double dx = 0.1 - m.means[2 * k], dy = 0.2 - m.means[2 * k + 1], v = m.stds[k] * m.stds[k];
    want += m.weights[k] * std::exp(-(dx * dx + dy * dy) / (2 * v)) / (2 * pi * v);
  }
  EXPECT_NEAR(mixture_density(clean, 0.1, 0.2), want, 1e-12);
  GaussianMixture m3 = m;
  m3.dim = 3;
  EXPECT_THROW(noised_mixture(m3, NoiseLevel{}), InvalidInput);
}

}  // namespace
}  // namespace diffscope
