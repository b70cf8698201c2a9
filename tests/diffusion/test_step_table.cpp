// test_step_table.cpp — step lists and step-table coefficients (SEMANTICS §3) against the formulas written
// out directly in float64, and the range checks of build_step_table.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>

#include "base/arg_error.h"
#include "base/errors.h"
#include "cli/cli_util.h"
#include "diffusion/step_table.h"

namespace diffscope {
namespace {

TEST(StepList, DdimMatchesRoundHalfAwayFromZeroAndIsDistinct) {
  for (int t_start : {0, 1, 2, 3, 7, 10, 99, 500, 998, 999}) {
    std::set<int> counts{1, 2, 3, 50, t_start + 1, (t_start + 1) / 2 + 1};
    for (int N : counts) {
      if (N < 1 || N > t_start + 1) continue;
      const std::vector<int32_t> t = ddim_timesteps(t_start, N);
      ASSERT_EQ(static_cast<int>(t.size()), N) << "t_start " << t_start << " N " << N;
      EXPECT_EQ(t.front(), t_start);
      if (N >= 2) EXPECT_EQ(t.back(), 0);
      for (int i = 0; i < N; ++i) {
        // std::round rounds halves away from zero; t_start (N-1-i)/(N-1) is exact enough in double here.
        const double expected = N == 1 ? t_start : std::round(double(t_start) * (N - 1 - i) / (N - 1));
        EXPECT_EQ(t[i], static_cast<int32_t>(expected)) << "t_start " << t_start << " N " << N << " i " << i;
        EXPECT_GE(t[i], 0);
        EXPECT_LT(t[i], 1000);
        if (i > 0) EXPECT_LT(t[i], t[i - 1]);  // strictly decreasing: N distinct values
      }
    }
  }
}

TEST(StepList, DdimHalvesRoundAwayFromZero) {
  // 999 * 1 / 2 = 499.5 -> 500; 5 * 1 / 2 = 2.5 -> 3 (not banker's rounding to 2).
  EXPECT_EQ(ddim_timesteps(999, 3), (std::vector<int32_t>{999, 500, 0}));
  EXPECT_EQ(ddim_timesteps(5, 3), (std::vector<int32_t>{5, 3, 0}));
  EXPECT_EQ(ddim_timesteps(999, 1), (std::vector<int32_t>{999}));
}

TEST(StepList, DdpmVisitsConsecutiveTimesteps) {
  const Schedule s = Schedule::linear(1000);
  for (Sampler sm : {Sampler::Ddpm, Sampler::DdpmMean}) {
    const StepTable tab = build_step_table(s, sm, 700, 301);
    ASSERT_EQ(tab.steps(), 301);
    for (int k = 0; k < 301; ++k) EXPECT_EQ(tab.t[k], 700 - k);
    const StepTable few = build_step_table(s, sm, 700, 5);
    EXPECT_EQ(few.t.back(), 696);
  }
}

TEST(StepTable, DdpmCoefficientsAreTheDirectFormulas) {
  const Schedule s = Schedule::linear(1000);
  const StepTable mean = build_step_table(s, Sampler::DdpmMean, 999, 1000);
  const StepTable ddpm = build_step_table(s, Sampler::Ddpm, 999, 1000);
  for (int k = 0; k < 1000; ++k) {
    const int t = 999 - k;
    // SEMANTICS §1 from the betas, written out here independently of Schedule's other vectors.
    double abar = 1, abar_prev = 1;
    for (int u = 0; u <= t; ++u) {
      abar_prev = abar;
      abar *= 1.0 - s.betas[u];
    }
    const double beta = s.betas[t], c1 = std::sqrt(1.0 / (1.0 - beta)), c2 = beta / std::sqrt(1.0 - abar);
    const double sigma = t == 0 ? 0.0 : std::sqrt(beta * (1.0 - abar_prev) / (1.0 - abar));
    EXPECT_NEAR(mean.A[k], c1, 1e-14);
    EXPECT_NEAR(mean.C[k], -c1 * c2, 1e-12);
    EXPECT_EQ(mean.S[k], 0.0);
    EXPECT_EQ(ddpm.A[k], mean.A[k]);
    EXPECT_EQ(ddpm.C[k], mean.C[k]);
    EXPECT_NEAR(ddpm.S[k], sigma, 1e-13);
    EXPECT_EQ(mean.A32[k], static_cast<float>(mean.A[k]));
  }
  const StepTable by_t = build_t_indexed_ddpm_mean(s);
  ASSERT_EQ(by_t.steps(), 1000);
  for (int t = 0; t < 1000; ++t) {
    EXPECT_EQ(by_t.t[t], t);
    EXPECT_EQ(by_t.A[t], mean.A[999 - t]);
    EXPECT_EQ(by_t.C[t], mean.C[999 - t]);
  }
}

// denoise's run from one t_start as a table: the steps t_start, t_start - 1, ... with the ddpm-mean coefficients
// written out from the betas (SEMANTICS §4), the noise keys t, and the float copies.
TEST(StepTable, TIndexedRunIsTheDescendingDdpmMeanRun) {
  const Schedule s = Schedule::linear(1000);
  const StepTable by_t = build_t_indexed_ddpm_mean(s);
  const int t_start = 700, S = 300;
  const StepTable run = t_indexed_run(by_t, t_start, S);
  ASSERT_EQ(run.steps(), S);
  EXPECT_EQ(run.T, 1000);
  EXPECT_FALSE(run.uses_prev());
  for (int k = 0; k < S; ++k) {
    const int t = t_start - k;
    double abar = 1;
    for (int u = 0; u <= t; ++u) abar *= 1.0 - s.betas[u];
    const double beta = s.betas[t], c1 = std::sqrt(1.0 / (1.0 - beta)), c2 = beta / std::sqrt(1.0 - abar);
    EXPECT_EQ(run.t[k], t);
    EXPECT_EQ(run.t_net[k], double(t));
    EXPECT_EQ(run.noise_key[k], uint32_t(t));
    EXPECT_NEAR(run.A[k], c1, 1e-14);
    EXPECT_NEAR(run.C[k], -c1 * c2, 1e-12);
    EXPECT_EQ(run.S[k], 0.0);
    EXPECT_EQ(run.A32[k], static_cast<float>(run.A[k]));
    EXPECT_EQ(run.C32[k], static_cast<float>(run.C[k]));
  }
  EXPECT_EQ(t_indexed_run(by_t, 0, 1).t, std::vector<int32_t>{0});
  EXPECT_THROW(t_indexed_run(by_t, 700, 702), std::invalid_argument);  // more steps than t_start + 1
  EXPECT_THROW(t_indexed_run(by_t, 1000, 1), std::invalid_argument);
  EXPECT_THROW(t_indexed_run(by_t, -1, 1), std::invalid_argument);
  EXPECT_THROW(t_indexed_run(by_t, 5, 0), std::invalid_argument);
}

// One DDIM step written as SEMANTICS §3 states it (x0, s, then the update) equals A x + B eps + S z.
TEST(StepTable, DdimAffineFormEqualsTheX0Form) {
  const Schedule s = Schedule::linear(1000);
  std::mt19937 rng(7);
  std::normal_distribution<double> nd;
  for (double eta : {0.0, 0.3, 1.0}) {
    for (int N : {1, 2, 10, 1000}) {
      const StepTable tab = build_step_table(s, Sampler::Ddim, 999, N, eta);
      for (int i = 0; i < N; ++i) {
        const double a = s.alphas_cumprod[tab.t[i]];
        const double ap = i + 1 < N ? s.alphas_cumprod[tab.t[i + 1]] : 1.0;
        const double x = nd(rng), eps = nd(rng), z = nd(rng);
        const double x0 = (x - std::sqrt(1 - a) * eps) / std::sqrt(a);
        const double sd = eta * std::sqrt((1 - ap) / (1 - a)) * std::sqrt(1 - a / ap);
        const double direct = std::sqrt(ap) * x0 + std::sqrt(std::max(0.0, 1 - ap - sd * sd)) * eps + sd * z;
        const double affine = tab.A[i] * x + tab.C[i] * eps + tab.S[i] * z;
        EXPECT_NEAR(affine, direct, 1e-9 * (1 + std::abs(direct))) << "eta " << eta << " N " << N << " i " << i;
        EXPECT_NEAR(tab.S[i], sd, 1e-15);
      }
      EXPECT_EQ(tab.S.back(), 0.0);  // abar_prev = 1 on the last step: no noise
    }
  }
}

TEST(StepTable, RefusesOutOfRangeArguments) {
  const Schedule s = Schedule::linear(1000);
  EXPECT_THROW(build_step_table(s, Sampler::Ddim, -1, 1), InvalidInput);
  EXPECT_THROW(build_step_table(s, Sampler::Ddim, 1000, 1), InvalidInput);
  EXPECT_THROW(build_step_table(s, Sampler::Ddim, 999, 0), InvalidInput);
  EXPECT_THROW(build_step_table(s, Sampler::DdpmMean, 10, 12), InvalidInput);
  EXPECT_THROW(build_step_table(s, Sampler::Ddim, 999, 50, 1.5), InvalidInput);
  EXPECT_THROW(build_step_table(s, Sampler::Ddim, 999, 50, -0.1), InvalidInput);
  EXPECT_NO_THROW(build_step_table(s, Sampler::DdpmMean, 10, 11));
  try {
    build_step_table(s, Sampler::Ddim, 999, 1001);
    FAIL() << "no throw";
  } catch (const ArgumentError& e) {  // the argument by id, its value and range; each front end spells it
    EXPECT_EQ(e.arg, Arg::Steps);
    EXPECT_EQ(e.value, "1001");
    EXPECT_EQ(e.valid, "[1, 1000]");
    EXPECT_STREQ(e.what(), "steps = 1001 is out of range; valid: [1, 1000]");
    EXPECT_EQ(e.message(cli::cli_flag), "--steps = 1001 is out of range; valid: [1, 1000]");
  }
}

TEST(StepTable, SamplerNamesRoundTrip) {
  for (Sampler sm : {Sampler::Ddim, Sampler::Ddpm, Sampler::DdpmMean}) EXPECT_EQ(parse_sampler(sampler_name(sm)), sm);
  EXPECT_THROW(parse_sampler("euler"), InvalidInput);
}

}  // namespace
}  // namespace diffscope

namespace diffscope {

// Where a run ends (SEMANTICS §3): ddpm / ddpm-mean step t -> t - 1, so N steps from t_start end clean only when
// N = t_start + 1 (the last step is t = 0); every other solver's list ends at abar = 1 whatever N and spacing.
TEST(StepTable, EndsCleanExceptShortDdpmRuns) {
  const Schedule s = Schedule::linear(1000);
  EXPECT_TRUE(ends_clean(build_step_table(s, Sampler::Ddpm, 999, 1000)));
  EXPECT_FALSE(ends_clean(build_step_table(s, Sampler::Ddpm, 999, 20)));
  EXPECT_EQ(build_step_table(s, Sampler::Ddpm, 999, 20).t.back(), 980);
  EXPECT_FALSE(ends_clean(build_step_table(s, Sampler::DdpmMean, 300, 300)));
  EXPECT_TRUE(ends_clean(build_step_table(s, Sampler::DdpmMean, 299, 300)));
  for (Sampler sm : {Sampler::Ddim, Sampler::Dpmpp2m, Sampler::Heun, Sampler::EulerAncestral})
    for (Spacing sp : {Spacing::Default, Spacing::Trailing, Spacing::Leading, Spacing::Karras})
      EXPECT_TRUE(ends_clean(build_step_table(s, sm, 999, 25, 0.0, sp))) << sampler_name(sm) << " " << spacing_name(sp);
}

}  // namespace diffscope
