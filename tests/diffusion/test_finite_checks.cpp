// test_finite_checks.cpp — the public bug reports' kinds "non-finite schedules" and "no non-finite output": the rule of
// SEMANTICS §3 "Finite coefficients" (run/finite_checks.h) on the two reported schedules and on every
// coefficient array of a step table, and the output check of §9. Expected values come from the schedule's
// closed form in long double, not from the product code.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "base/errors.h"
#include "diffusion/sampling.h"
#include "diffusion/step_table.h"
#include "io_test_util.h"
#include "model/schedule.h"
#include "run/finite_checks.h"

namespace diffscope {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// 120 betas of 0.999 (tests/data/reported/schedule-underflow/underflow_betas.safetensors).
Schedule underflow_schedule() { return Schedule::from_betas(std::vector<double>(120, 0.999), "underflow"); }

// The first t whose sigma = sqrt((1 - abar) / abar) exceeds float32's largest value, from the closed form
// abar[t] = prod_{s <= t} (1 - beta_s) in long double.
int first_sigma_overflow(const std::vector<long double>& betas) {
  long double abar = 1;
  for (size_t t = 0; t < betas.size(); ++t) {
    abar *= 1 - betas[t];
    if (abar <= 0 || std::sqrt((1 - abar) / abar) > static_cast<long double>(FLT_MAX)) return static_cast<int>(t);
  }
  return -1;
}

TEST(FiniteChecks, UnderflowingAlphasCumprodFoundAtTheRightT) {
  // abar[t] = 0.001^(t+1) (1 - 0.999 = 0.001 up to rounding): 1e-323 is the last power above float64's smallest
  // subnormal (4.9e-324), so abar[106] = 1e-321 > 0 and abar[107] = 1e-324 rounds to 0. sigma leaves float32
  // much earlier: abar[25] = 1e-78 < 1 / FLT_MAX^2 = 8.7e-78 < abar[24] = 1e-75.
  const Schedule s = underflow_schedule();
  EXPECT_GT(s.alphas_cumprod[106], 0.0);
  EXPECT_EQ(first_zero_alphas_cumprod(s), 107);
  EXPECT_EQ(first_sigma_overflow(std::vector<long double>(120, 0.999L)), 25);
  EXPECT_EQ(first_unusable_t(s), 25);
  EXPECT_EQ(first_zero_alphas_cumprod(Schedule::linear(1000)), -1);
  EXPECT_EQ(first_unusable_t(Schedule::linear(1000)), -1);
}

TEST(FiniteChecks, EverySamplerRefusesARunThroughZeroAlphasCumprod) {
  const Schedule s = underflow_schedule();
  for (Sampler sampler : {Sampler::Ddim, Sampler::Ddpm, Sampler::DdpmMean}) {
    SCOPED_TRACE(sampler_name(sampler));
    const StepTable tab = build_step_table(s, sampler, 119, 10);
    const std::string msg = test::invalid_input_message([&] { check_run_coefficients(s, tab, tab.steps()); });
    EXPECT_TRUE(has(msg, std::string("sampler ") + sampler_name(sampler))) << msg;
    EXPECT_TRUE(has(msg, "overflow float32 from t = 25")) << msg;
    EXPECT_TRUE(has(msg, "underflows to 0 in float64 from t = 107")) << msg;
    EXPECT_TRUE(has(msg, "t_start <= 24")) << msg;
    // Below the first unusable t the same sampler runs.
    const StepTable ok = build_step_table(s, sampler, 24, 5);
    EXPECT_NO_THROW(check_run_coefficients(s, ok, ok.steps()));
  }
  // denoise's t-indexed table: refused when a row starts at or above 25, accepted below.
  const StepTable t_indexed = build_t_indexed_ddpm_mean(s);
  EXPECT_THROW(check_run_coefficients(s, t_indexed, 26), InvalidInput);
  EXPECT_NO_THROW(check_run_coefficients(s, t_indexed, 25));
}

TEST(FiniteChecks, Float32OverflowOfDdimCoefficientsRefused) {
  // T = 20000, default linear betas (tests/data/reported/schedule-underflow/lin_T20000.safetensors). abar[T-1]
  // in long double: prod (1 - beta_t), beta_t = 1e-4 + (0.02 - 1e-4) t / (T-1). One ddim step from t = 19999
  // has A = sqrt(1 / abar), which exceeds float32's largest value.
  long double abar = 1;
  for (int t = 0; t < 20000; ++t) abar *= 1.0L - (1e-4L + (0.02L - 1e-4L) * t / 19999.0L);
  ASSERT_LT(abar, 1e-87L);
  ASSERT_GT(1.0L / std::sqrt(abar), static_cast<long double>(FLT_MAX));
  const Schedule s = Schedule::linear(20000);
  EXPECT_NEAR(static_cast<double>(abar) / s.alphas_cumprod[19999], 1.0, 1e-9);
  // One ddim step from 19999: A = sqrt(1 / abar) is finite in float64, infinite in float32. (The table check
  // names it; the sigma rule below refuses the run before that.)
  const StepTable one = build_step_table(s, Sampler::Ddim, 19999, 1);
  ASSERT_TRUE(std::isfinite(one.A[0]));
  ASSERT_FALSE(std::isfinite(one.A32[0]));
  std::string msg;
  // The reported run, ddim with 10 steps from 19999, has finite coefficients (A = sqrt(abar[17777] / abar[19999])
  // is about 4e9) but its x0 prediction divides by sqrt(abar): sigma must be finite in float32 at every visited t.
  std::vector<long double> betas(20000);
  for (int t = 0; t < 20000; ++t) betas[t] = 1e-4L + (0.02L - 1e-4L) * t / 19999.0L;
  const int first_bad = first_sigma_overflow(betas);
  ASSERT_GT(first_bad, 0);
  EXPECT_EQ(first_unusable_t(s), first_bad);
  for (Sampler sampler : {Sampler::Ddim, Sampler::Ddpm, Sampler::DdpmMean}) {
    const StepTable ten = build_step_table(s, sampler, 19999, 10);
    msg = test::invalid_input_message([&] { check_run_coefficients(s, ten, ten.steps()); });
    EXPECT_TRUE(has(msg, std::string("sampler ") + sampler_name(sampler))) << msg;
    EXPECT_TRUE(has(msg, "overflow float32 from t = " + std::to_string(first_bad))) << msg;
    EXPECT_TRUE(has(msg, "t_start <= " + std::to_string(first_bad - 1))) << msg;
    const StepTable below = build_step_table(s, sampler, first_bad - 1, 10);
    EXPECT_NO_THROW(check_run_coefficients(s, below, below.steps()));
  }
}

TEST(FiniteChecks, EveryCoefficientArrayOfTheTableIsChecked) {
  // The check iterates StepTable::for_each_coefficient: poisoning any listed (non-empty) array at any read step
  // is refused by name, and a step the run does not read (k >= k_end) is not looked at. ddpm lists A, B, S;
  // dpmpp-2m adds P, Dx, De; heun adds H, abar2.
  const Schedule s = Schedule::linear(1000);
  for (Sampler sampler : {Sampler::Ddpm, Sampler::Dpmpp2m, Sampler::Heun}) {
    const StepTable base = build_step_table(s, sampler, 500, 20);
    std::vector<std::string> names;
    base.for_each_coefficient([&](const char* name, const std::vector<double>& f64, const std::vector<float>&) {
      if (!f64.empty()) names.push_back(name);
    });
    ASSERT_GE(names.size(), 3u);
    for (const std::string& which : names) {
      for (bool in_f32 : {false, true}) {
        SCOPED_TRACE(std::string(sampler_name(sampler)) + " " + which + (in_f32 ? " float32" : " float64"));
        StepTable tab = base;
        tab.for_each_coefficient([&](const char* name, std::vector<double>& f64, std::vector<float>& f32) {
          if (which != name) return;
          if (in_f32)
            f32[7] = std::numeric_limits<float>::infinity();
          else
            f64[7] = std::numeric_limits<double>::quiet_NaN();
        });
        const std::string msg = test::invalid_input_message([&] { check_run_coefficients(s, tab, tab.steps()); });
        EXPECT_TRUE(has(msg, "step 7 (t = " + std::to_string(tab.t[7]) + "): coefficient " + which)) << msg;
        EXPECT_NO_THROW(check_run_coefficients(s, tab, 7));
      }
    }
  }
}

TEST(FiniteChecks, StartFromDataScalesAreTheClosedForm) {
  // sqrt(abar) and sqrt(1 - abar) at the last usable t of T = 20000 (abar about 1e-77): finite, the data scale
  // about 3e-39 (a float32 subnormal), the noise scale 1.
  const Schedule s = Schedule::linear(20000);
  const int t = first_unusable_t(s) - 1;
  const StartScales sc = start_from_data_scales(s, t);
  EXPECT_FLOAT_EQ(sc.data, static_cast<float>(std::sqrt(s.alphas_cumprod[t])));
  EXPECT_GT(sc.data, 0.f);
  EXPECT_FLOAT_EQ(sc.noise, 1.0f);
  EXPECT_NO_THROW(check_run_coefficients(s, build_step_table(s, Sampler::Ddpm, t, 2), 2, t));
}

TEST(FiniteChecks, OutputCheckNamesTheFirstNonFiniteFrameRowAndColumn) {
  std::vector<float> x(3 * 4 * 2, 1.0f);  // (3 frames, 4 rows, 2 columns)
  EXPECT_NO_THROW(check_output_finite("--trajectory", x.data(), 3, 4, 2));
  x[1 * 8 + 2 * 2 + 1] = std::numeric_limits<float>::infinity();  // frame 1, row 2, column 1
  x[2 * 8] = std::numeric_limits<float>::quiet_NaN();             // a later one
  std::string msg = test::invalid_input_message([&] { check_output_finite("--trajectory", x.data(), 3, 4, 2); });
  EXPECT_TRUE(has(msg, "--trajectory: frame 1, row 2, column 1 = inf is not finite")) << msg;
  EXPECT_TRUE(has(msg, "nothing was written")) << msg;
  // One frame: no frame number; a large array takes the parallel path and still finds the first one.
  std::vector<float> big(5'000'000, 0.5f);
  big[4'999'999] = NAN;
  big[3'000'001] = -INFINITY;
  msg = test::invalid_input_message([&] { check_output_finite("--out", big.data(), 1, 2'500'000, 2); });
  EXPECT_TRUE(has(msg, "--out: row 1500000, column 1 = -inf")) << msg;
}

}  // namespace
}  // namespace diffscope
