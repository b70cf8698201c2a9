// test_model_quality.cpp — the bundled models (assets/models) still sample their data, on the measure
// (tools/quality_measure.py): the split-averaged energy distance at the same n on both sides — samples (n)
// vs half A and half B (n) vs half A, the held-out data_samples split into halves 100 times (a fixed
// SplitMix64 Fisher-Yates shuffle, seed 18); n = 1000 for the 2D sets, 180 for digits8x8. CI runs ddim
// (eta 0) from pure noise at t_start 999 with 100 steps on the CPU backend at kSeeds fixed seeds; the
// statistic is the mean of the seeds' split-averaged figures over the data-vs-data mean. Plus the shape
// checks (rings: each ring's share within +-0.25 raw units of its radius within 20% of the data's;
// checkerboard: <= 5% of the samples outside the 8 filled squares) on the kSeeds * n pooled samples.
// Thresholds and the known failures: see kCases. Plus closed-form cases of the metrics themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "base/errors.h"
#include "diffusion/metrics.h"
#include "diffusion/sampling.h"
#include "diffusion/step_table.h"
#include "model/model.h"
#include "run/backend.h"
#include "run/run_plan.h"
#include "test_paths.h"

namespace diffscope {
namespace {

TEST(EnergyDistance, ClosedForms) {
  // 1D: X = {0}, Y = {1}: 2*1 - 0 - 0 = 2.  X = {0, 2}, Y = {1}: 2*1 - (0+2+2+0)/4 - 0 = 1.
  const float zero[] = {0.f}, one[] = {1.f}, zero_two[] = {0.f, 2.f};
  EXPECT_DOUBLE_EQ(energy_distance(zero, 1, one, 1, 1), 2.0);
  EXPECT_DOUBLE_EQ(energy_distance(zero_two, 2, one, 1, 1), 1.0);
  // 2D, a 3-4-5 triangle: |(0,0) - (3,4)| = 5 -> 10.
  const float a[] = {0.f, 0.f}, b[] = {3.f, 4.f};
  EXPECT_DOUBLE_EQ(energy_distance(a, 1, b, 1, 2), 10.0);
  // A set against itself: 0; symmetric in X and Y.
  const float pts[] = {0.f, 1.f, 2.f, -1.f, 0.5f, 0.25f};
  EXPECT_NEAR(energy_distance(pts, 3, pts, 3, 2), 0.0, 1e-15);
  EXPECT_DOUBLE_EQ(energy_distance(pts, 3, b, 1, 2), energy_distance(b, 1, pts, 3, 2));
  EXPECT_THROW(energy_distance(pts, 0, b, 1, 2), InvalidInput);
}

TEST(NearestDistance, ClosedForms) {
  // X = {(0,0), (6,3)} against A = {(0,1), (6,8)}: nearest distances 1 and 5 (not sqrt(40)) -> mean 3.
  const float X[] = {0.f, 0.f, 6.f, 3.f}, A[] = {0.f, 1.f, 6.f, 8.f};
  EXPECT_DOUBLE_EQ(mean_nearest_distance(X, 2, A, 2, 2), 3.0);
  // A set against itself: 0; not symmetric in general: A against X is (1 + 5) / 2 as well, {(0,0)} against
  // {(0,1), (0,3)} is 1 but {(0,1), (0,3)} against {(0,0)} is (1 + 3) / 2 = 2.
  EXPECT_DOUBLE_EQ(mean_nearest_distance(X, 2, X, 2, 2), 0.0);
  const float o[] = {0.f, 0.f}, two[] = {0.f, 1.f, 0.f, 3.f};
  EXPECT_DOUBLE_EQ(mean_nearest_distance(o, 1, two, 2, 2), 1.0);
  EXPECT_DOUBLE_EQ(mean_nearest_distance(two, 2, o, 1, 2), 2.0);
  EXPECT_THROW(mean_nearest_distance(X, 2, A, 0, 2), InvalidInput);
}

// ---------------------------------------------------------------- the split-averaged measure

// SplitMix64 (Steele, Lea, Flood 2014): the splits' random stream, fixed and platform-independent.
uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// n_splits random half splits of 0..n_held-1: A = n_held / 2 indices, B = the first n of the other half. Fisher-
// Yates on a SplitMix64 stream from state 18 (j = next % (i + 1), i = n_held-1 .. 1), as tools/quality_measure.py.
void draw_splits(int n_held, int n, int n_splits, std::vector<std::vector<int>>* A, std::vector<std::vector<int>>* B) {
  uint64_t state = 18;
  std::vector<int> p(n_held);
  for (int s = 0; s < n_splits; ++s) {
    std::iota(p.begin(), p.end(), 0);
    for (int i = n_held - 1; i > 0; --i) std::swap(p[i], p[splitmix64(state) % static_cast<uint64_t>(i + 1)]);
    A->emplace_back(p.begin(), p.begin() + n_held / 2);
    B->emplace_back(p.begin() + n_held / 2, p.begin() + n_held / 2 + n);
  }
}

TEST(SplitReference, SplitsAreTheToolsSplits) {
  // Indices printed by tools/quality_measure.py's draw_splits (Python integers, its own SplitMix64): the CI
  // test and the card's table use the very same halves.
  std::vector<std::vector<int>> A, B;
  draw_splits(2048, 1000, 100, &A, &B);
  ASSERT_EQ(A.size(), 100u);
  EXPECT_EQ(std::vector<int>(A[0].begin(), A[0].begin() + 4), (std::vector<int>{1438, 1662, 1211, 1721}));
  EXPECT_EQ(std::vector<int>(B[0].begin(), B[0].begin() + 4), (std::vector<int>{515, 998, 872, 675}));
  EXPECT_EQ(std::vector<int>(A[99].begin(), A[99].begin() + 4), (std::vector<int>{738, 1949, 358, 1411}));
  EXPECT_EQ(std::vector<int>(B[99].end() - 4, B[99].end()), (std::vector<int>{387, 1439, 1979, 1747}));
  A.clear();
  B.clear();
  draw_splits(360, 180, 100, &A, &B);
  EXPECT_EQ(std::vector<int>(A[0].begin(), A[0].begin() + 4), (std::vector<int>{0, 145, 204, 46}));
  EXPECT_EQ(std::vector<int>(B[99].end() - 4, B[99].end()), (std::vector<int>{205, 175, 189, 184}));
}

// The held-out set (n_held, dim), its distance matrix and n_splits random half splits: A = n_held / 2
// indices, B = the first n of the other half (tools/quality_measure.py's SplitReference).
struct SplitReference {
  int n_held, dim, n;
  std::vector<float> held;
  std::vector<double> D;                       // (n_held, n_held) Euclidean distances
  std::vector<std::vector<int>> A, B;
  std::vector<double> aa;                      // mean distance within each split's half A

  SplitReference(const std::vector<float>& h, int n_held_, int dim_, int n_, int n_splits)
      : n_held(n_held_), dim(dim_), n(n_), held(h), D(static_cast<size_t>(n_held_) * n_held_) {
    for (int i = 0; i < n_held; ++i)
      for (int j = 0; j < n_held; ++j) D[static_cast<size_t>(i) * n_held + j] = dist(&held[i * dim], &held[j * dim]);
    draw_splits(n_held, n, n_splits, &A, &B);
    for (const std::vector<int>& a : A) aa.push_back(block_mean(a, a));
  }
  double dist(const float* a, const float* b) const {
    double s = 0;
    for (int d = 0; d < dim; ++d) s += (static_cast<double>(a[d]) - b[d]) * (static_cast<double>(a[d]) - b[d]);
    return std::sqrt(s);
  }
  double block_mean(const std::vector<int>& r, const std::vector<int>& c) const {
    double s = 0;
    for (int i : r) {
      const double* row = &D[static_cast<size_t>(i) * n_held];
      for (int j : c) s += row[j];
    }
    return s / (static_cast<double>(r.size()) * c.size());
  }
  // Mean over the splits of the energy distance of half B (n) vs half A.
  double data_vs_data() const {
    double s = 0;
    for (size_t k = 0; k < A.size(); ++k) s += 2 * block_mean(B[k], A[k]) - block_mean(B[k], B[k]) - aa[k];
    return s / A.size();
  }
  // Per split: energy distance of X (m points) vs half A.
  std::vector<double> samples_vs_a(const float* X, int m) const {
    std::vector<double> col(n_held, 0.0);  // mean distance from X to each held-out point
    for (int j = 0; j < n_held; ++j) {
      double s = 0;
      for (int i = 0; i < m; ++i) s += dist(X + static_cast<size_t>(i) * dim, &held[j * dim]);
      col[j] = s / m;
    }
    const double xx = mean_pairwise_distance(X, m, X, m, dim);
    std::vector<double> out;
    for (size_t k = 0; k < A.size(); ++k) {
      double s = 0;
      for (int j : A[k]) s += col[j];
      out.push_back(2 * s / A[k].size() - xx - aa[k]);
    }
    return out;
  }
  std::vector<float> rows(const std::vector<int>& idx) const {
    std::vector<float> r;
    for (int i : idx) r.insert(r.end(), held.begin() + i * dim, held.begin() + (i + 1) * dim);
    return r;
  }
};

double mean(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }

TEST(SplitReference, AgreesWithTheDirectEnergyDistance) {
  // 40 points of a 3x3 lattice with a twist, split 20/20, n = 15: every split's figure equals energy_distance()
  // on the index sets written out.
  std::vector<float> h;
  for (int i = 0; i < 40; ++i) h.insert(h.end(), {static_cast<float>(i % 3) + 0.1f * i, static_cast<float>(i / 13)});
  const SplitReference ref(h, 40, 2, 15, 7);
  const float X[] = {0.f, 0.f, 1.f, 2.f, 3.f, 0.5f};
  const std::vector<double> v = ref.samples_vs_a(X, 3);
  double dd = 0;
  for (size_t k = 0; k < ref.A.size(); ++k) {
    const std::vector<float> a = ref.rows(ref.A[k]), b = ref.rows(ref.B[k]);
    EXPECT_NEAR(v[k], energy_distance(X, 3, a.data(), 20, 2), 1e-12);
    dd += energy_distance(b.data(), 15, a.data(), 20, 2);
    std::vector<int> all(ref.A[k]);  // the halves are disjoint and A has n_held / 2 points
    all.insert(all.end(), ref.B[k].begin(), ref.B[k].end());
    std::sort(all.begin(), all.end());
    EXPECT_EQ(std::unique(all.begin(), all.end()), all.end());
  }
  EXPECT_NEAR(ref.data_vs_data(), dd / ref.A.size(), 1e-12);
}

// ---------------------------------------------------------------- shape checks (raw data units)

std::vector<double> raw_units(const DiffusionModel& m, const std::vector<float>& x) {
  const double scale = std::stod(m.metadata.at("data_scale"));
  const std::string off = m.metadata.at("data_offset");
  const double ox = std::stod(off.substr(0, off.find(','))), oy = std::stod(off.substr(off.find(',') + 1));
  std::vector<double> r(x.size());
  for (size_t i = 0; i < x.size(); i += 2) {
    r[i] = x[i] / scale + ox;
    r[i + 1] = x[i + 1] / scale + oy;
  }
  return r;
}

// Largest relative deviation over the 4 rings of the share within +-0.25 of radius 1..4 from the data's share.
// The data's share in closed form: ring R holds R/10 of the points (tools/toy_data.py), and their radial
// offset is about N(0, 0.08^2) (radius >> sd), so P(|offset| <= 0.25) = erf(0.25 / (0.08 sqrt 2)) = 0.99822;
// a 4,000,000-point draw gives the same shares within 3e-4 (tools/quality_measure.py).
double ring_worst_rel_dev(const std::vector<double>& raw, std::vector<double>* shares) {
  const double inside = std::erf(0.25 / (0.08 * std::sqrt(2.0)));
  const size_t m = raw.size() / 2;
  double worst = 0;
  for (int R = 1; R <= 4; ++R) {
    size_t c = 0;
    for (size_t i = 0; i < m; ++i) c += std::fabs(std::hypot(raw[2 * i], raw[2 * i + 1]) - R) <= 0.25;
    const double share = static_cast<double>(c) / m, data = R / 10.0 * inside;
    shares->push_back(share);
    worst = std::max(worst, std::fabs(share - data) / data);
  }
  return worst;
}

// Share of points outside the 8 filled 2x2 squares of the checkerboard (tools/toy_data.py): inside iff in
// [-4, 4)^2 with floor(x/2) + floor(y/2) even.
double checkerboard_outside(const std::vector<double>& raw) {
  const size_t m = raw.size() / 2;
  size_t out = 0;
  for (size_t i = 0; i < m; ++i) {
    const double x = raw[2 * i], y = raw[2 * i + 1];
    const bool in_board = x >= -4 && x < 4 && y >= -4 && y < 4;
    out += !(in_board && (static_cast<long>(std::floor(x / 2) + std::floor(y / 2)) % 2 == 0));
  }
  return static_cast<double>(out) / m;
}

TEST(ShapeChecks, HandPlacedPoints) {
  // Checkerboard squares (raw units): (1, 1) is in square (0, 0): filled; (3, 1) in (1, 0): empty; (-1, -1) in
  // (-1, -1): filled; (-3, 3) in (-2, 1): empty; (5, 0): off the board; (-4, -4): the board's corner, filled.
  EXPECT_DOUBLE_EQ(checkerboard_outside({1, 1, 3, 1, -1, -1, -3, 3, 5, 0, -4, -4}), 3.0 / 6.0);
  // Rings: radii 1.2 (ring 1), 2.3 (none), 3 (ring 3), 4.25 (ring 4, on the edge).
  std::vector<double> shares;
  ring_worst_rel_dev({1.2, 0, 0, 2.3, 3, 0, 0, -4.25}, &shares);
  EXPECT_EQ(shares, (std::vector<double>{0.25, 0.0, 0.25, 0.25}));
}

// ---------------------------------------------------------------- the bundled models

struct QualityCase {
  const char* dataset;  // the model file's name in assets/models (moons_v: moons in the v_prediction family)
  double noise;        // split-averaged energy distance of the seed-0 start noise vs half A (tools/philox.py)
  double ratio_bound;  // the ratio must stay below this: kRatioMax, or for a known failure its measured value
  double shape_bound;  // rings: worst relative ring-share deviation (kRingRelTol); checkerboard: share outside
                       // the squares (kCheckerMaxOutside); or for a known failure its measured value; else 0
  const char* known_failure;  // nullptr, or what misses its check today (assets/models/README.md says so too)
};
void PrintTo(const QualityCase& c, std::ostream* os) { *os << c.dataset; }  // not raw bytes in gtest listings

constexpr int kSeeds = 10;         // seeds 0 .. 9
constexpr int kSteps = 100;        // ddim steps from t_start 999
constexpr int kSplits = 100;
constexpr double kRatioMax = 1.5;  // the target for ddim (card: 1000 steps, 5 seeds)
constexpr double kRingRelTol = 0.20, kCheckerMaxOutside = 0.05;

// Thresholds against luck, estimated offline from the data itself:
// `python3 tools/quality_table.py --calibrate --k 3,5,8,10` (assets/models/logs/quality_calibration.log): 250
// fresh data sets of n points per model (a sampler as good as the data), each through this split-averaged
// figure, combined 10 at a time as the 10 seeds (20,000 combinations). The ideal ratio's 99th percentile at
// k = 10 is 0.96 (rings) .. 1.42 (swissroll), its 99.9th at most 1.59 (swissroll): an ideal sampler fails
// kRatioMax = 1.5 for < 1% of seed choices (about 0.3% for swissroll, the worst). At k = 3 the 99th
// percentile reached 1.88 and at k = 8 1.48, hence 10 seeds. Shape checks at 10,000 pooled points: the ideal
// rings' worst ring is off by 6.8% at the 99th percentile (check 20%); ideal checkerboard: 0% outside.
// CPU time: 37 s (user) for the six models on 2 cores (each seed: 100 ddim steps on 1000 points), 2026-11-30.
const QualityCase kCases[] = {
    {"moons", 0.061709, kRatioMax, 0.0, nullptr},
    {"swissroll", 0.029461, kRatioMax, 0.0, nullptr},
    {"gaussians8", 0.073116, kRatioMax, 0.0, nullptr},
    // checkerboard and rings were known failures until their retraining of 2026-12-01
    // (assets/models/README.md): 17.1% outside the squares and ring 1 at 4.7% against 10.0% before it.
    {"checkerboard", 0.024030, kRatioMax, kCheckerMaxOutside, nullptr},
    {"rings", 0.018167, kRatioMax, kRingRelTol, nullptr},
    {"digits8x8", 3.556783, kRatioMax, 0.0, nullptr},
    // moons in the other families (the same held-out data and start noise as moons): ddim in the family, on
    // FlowMatchEuler's list from s = 1 for flow (plan_run's defaults).
    {"moons_sample", 0.061709, kRatioMax, 0.0, nullptr},
    {"moons_v", 0.061709, kRatioMax, 0.0, nullptr},
    {"moons_flow", 0.061709, kRatioMax, 0.0, nullptr},
};

// A bound above its check's threshold only for a declared known failure: the checks are never loosened silently.
TEST(ModelQualityCases, BoundsAreTheChecksUnlessAKnownFailure) {
  for (const QualityCase& c : kCases) {
    const std::string name = c.dataset;
    const double shape_check = name == "rings" ? kRingRelTol : name == "checkerboard" ? kCheckerMaxOutside : 0.0;
    if (c.known_failure) {
      EXPECT_TRUE(c.ratio_bound > kRatioMax || c.shape_bound > shape_check) << name << ": nothing fails, drop it";
      EXPECT_GE(c.ratio_bound, kRatioMax) << name;
      EXPECT_GE(c.shape_bound, shape_check) << name;
    } else {
      EXPECT_EQ(c.ratio_bound, kRatioMax) << name;
      EXPECT_EQ(c.shape_bound, shape_check) << name;
    }
  }
}

class ModelQuality : public ::testing::TestWithParam<QualityCase> {};

TEST_P(ModelQuality, DdimMatchesHeldOutData) {
  const QualityCase& c = GetParam();
  const std::string path = test::repo_root() + "/assets/models/" + c.dataset + ".safetensors";
  if (!std::ifstream(path)) GTEST_SKIP() << "no bundled model " << path;
  const DiffusionModel m = load_diffusion_model(path);
  ASSERT_GE(m.n_data, 2) << "bundled model without data_samples";
  const int dim = m.net.dim, n = std::min(dim == 2 ? 1000 : 180, m.n_data / 2);
  const SplitReference ref(m.data_samples, m.n_data, dim, n, kSplits);
  const double den = ref.data_vs_data();

  std::vector<float> x(static_cast<size_t>(n) * dim), pooled;
  fill_start_noise(m, /*seed=*/0, n, x.data());
  const double noise = mean(ref.samples_vs_a(x.data(), n));
  EXPECT_NEAR(noise, c.noise, 1e-3 * c.noise) << "start noise changed (SEMANTICS §7)";
  // ddim with kSteps steps from the default start, as `diffscope sample --steps kSteps` runs it: t_start T - 1
  // for the VP families, the start of FlowMatchEuler's list for flow.
  SampleRequest request;
  request.steps = kSteps;
  request.n = n;
  const StepTable tab = plan_run(request, m).table;
  ASSERT_EQ(tab.steps(), kSteps);
  double num = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    fill_start_noise(m, seed, n, x.data());
    make_cpu_backend()->run_steps(m, tab, 0, tab.steps(), x.data(), n, seed, nullptr, Precision::Fp32);
    num += mean(ref.samples_vs_a(x.data(), n)) / kSeeds;
    pooled.insert(pooled.end(), x.begin(), x.end());
  }
  const double ratio = num / den;
  std::printf("[quality] %-12s n=%d ddim-%d, %d seeds: %.5f, data vs data %.5f (%d splits), ratio %.3f (bound %.3f), "
              "noise %.5f\n", c.dataset, n, kSteps, kSeeds, num, den, kSplits, ratio, c.ratio_bound, noise);
  RecordProperty("ratio", std::to_string(ratio));
  EXPECT_LT(ratio, c.ratio_bound);
  if (c.known_failure) std::printf("[quality] KNOWN FAILURE %s: %s\n", c.dataset, c.known_failure);
  const std::string name = c.dataset;
  if (name == "rings") {
    std::vector<double> shares;
    const double worst = ring_worst_rel_dev(raw_units(m, pooled), &shares);
    std::printf("[quality] rings ring shares %.4f %.4f %.4f %.4f, worst relative deviation %.3f (bound %.3f)\n",
                shares[0], shares[1], shares[2], shares[3], worst, c.shape_bound);
    EXPECT_LE(worst, c.shape_bound);
  } else if (name == "checkerboard") {
    const double out = checkerboard_outside(raw_units(m, pooled));
    std::printf("[quality] checkerboard outside the squares %.4f (bound %.4f)\n", out, c.shape_bound);
    EXPECT_LE(out, c.shape_bound);
  }
}

INSTANTIATE_TEST_SUITE_P(BundledModels, ModelQuality, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<QualityCase>& i) { return std::string(i.param.dataset); });

}  // namespace
}  // namespace diffscope
