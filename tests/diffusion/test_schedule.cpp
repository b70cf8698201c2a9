// test_schedule.cpp — the noise schedules of SEMANTICS §1 against closed forms (float64 / long double)
// and the stated numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/errors.h"
#include "io_test_util.h"
#include "model/schedule.h"

namespace diffscope {
namespace {

using test::invalid_input_message;

// Linear betas = linspace(1e-4, 0.02, 1000): the ends exactly, the middle by the closed form.
TEST(Schedule, DefaultLinearBetas) {
  const Schedule s = Schedule::linear(1000);
  ASSERT_EQ(s.T, 1000);
  ASSERT_EQ(s.betas.size(), 1000u);
  EXPECT_EQ(s.betas[0], 1e-4);
  EXPECT_EQ(s.betas[999], 0.02);
  EXPECT_NEAR(s.betas[500], 1e-4 + 0.0199 * 500.0 / 999.0, 1e-17);
  EXPECT_NEAR(s.betas[1], 1e-4 + 0.0199 / 999.0, 1e-17);
  for (int t = 1; t < 1000; ++t) EXPECT_GT(s.betas[t], s.betas[t - 1]) << t;
}

// Posterior sigma 0 at t=0, 0.0073846 at t=1, 0.100256 at 500, 0.141421 at 999 — within half a
// unit of the last printed digit.
TEST(Schedule, PosteriorSigmaIssueNumbers) {
  const Schedule s = Schedule::linear(1000);
  EXPECT_EQ(s.posterior_sigma[0], 0.0);
  EXPECT_NEAR(s.posterior_sigma[1], 0.0073846, 0.5e-7);
  EXPECT_NEAR(s.posterior_sigma[500], 0.100256, 0.5e-6);
  EXPECT_NEAR(s.posterior_sigma[999], 0.141421, 0.5e-6);
}

// alphas_cumprod and the update coefficients against an independent long-double evaluation of the
// closed forms (beta_t = 1e-4 + 0.0199 t / 999, abar_t = prod (1 - beta_s)); abar[999] ~ 4.0358e-05.
TEST(Schedule, CumprodAndCoefficientsMatchLongDouble) {
  const Schedule s = Schedule::linear(1000);
  long double abar = 1.0L;
  for (int t = 0; t < 1000; ++t) {
    const long double beta = 1e-4L + (0.02L - 1e-4L) * t / 999.0L;
    abar *= 1.0L - beta;
    ASSERT_NEAR(s.alphas_cumprod[t] / static_cast<double>(abar), 1.0, 1e-12) << "t = " << t;
    const long double c1 = sqrtl(1.0L / (1.0L - beta));
    const long double c2 = beta / sqrtl(1.0L - abar);
    ASSERT_NEAR(s.sqrt_recip_alphas[t] / static_cast<double>(c1), 1.0, 1e-13) << "t = " << t;
    ASSERT_NEAR(s.coef_eps[t] / static_cast<double>(c2), 1.0, 1e-11) << "t = " << t;
    ASSERT_EQ(s.alphas[t], 1.0 - s.betas[t]);
  }
  EXPECT_NEAR(s.alphas_cumprod[999], 4.0358e-05, 0.00005e-05);
  EXPECT_NEAR(s.coef_eps[0], 0.01, 1e-15);  // 1e-4 / sqrt(1 - (1 - 1e-4))
}

// Cosine schedule (Nichol & Dhariwal 2021, eq. 17): abar[t] = f(t+1)/f(0) while no beta is clipped, with
// f(u) = cos(((u/T) + s)/(1 + s) * pi/2)^2; the last beta is clipped at 0.999.
TEST(Schedule, CosineMatchesClosedForm) {
  const int T = 1000;
  const Schedule s = Schedule::cosine(T);
  const long double pi = acosl(-1.0L), sc = 0.008L;
  auto f = [&](int u) {
    const long double c = cosl(((static_cast<long double>(u) / T) + sc) / (1.0L + sc) * pi / 2.0L);
    return c * c;
  };
  for (int t = 0; t < T - 1; ++t) {
    if (s.betas[t] >= 0.999) break;
    ASSERT_NEAR(s.alphas_cumprod[t] / static_cast<double>(f(t + 1) / f(0)), 1.0, 1e-9) << "t = " << t;
  }
  EXPECT_EQ(s.betas[T - 1], 0.999);
  EXPECT_NEAR(s.betas[0], static_cast<double>(1.0L - f(1) / f(0)), 1e-15);
  EXPECT_LT(s.betas[0], 1e-4);  // cosine starts gentler than linear
}

TEST(Schedule, FromBetasAndSmallT) {
  const Schedule s = Schedule::from_betas({0.5, 0.5}, "test");
  EXPECT_EQ(s.T, 2);
  EXPECT_EQ(s.source, "test");
  EXPECT_DOUBLE_EQ(s.alphas_cumprod[1], 0.25);
  // sigma[1] = sqrt(0.5 * (1 - 0.5) / (1 - 0.25)) = sqrt(1/3)
  EXPECT_DOUBLE_EQ(s.posterior_sigma[1], std::sqrt(1.0 / 3.0));
  EXPECT_DOUBLE_EQ(s.coef_eps[1], 0.5 / std::sqrt(0.75));
  const Schedule one = Schedule::from_betas({0.25}, "one");
  EXPECT_EQ(one.T, 1);
  EXPECT_EQ(one.posterior_sigma[0], 0.0);
}

TEST(Schedule, InvalidInputsRefused) {
  EXPECT_EQ(invalid_input_message([] { Schedule::from_betas({0.1, 0.0, 0.2}, "file betas (F32)"); }),
            "file betas (F32): betas[1] = 0 (valid: (0, 1))");
  EXPECT_TRUE(invalid_input_message([] { Schedule::from_betas({0.1, NAN}, "b"); }).find("betas[1] = nan") !=
              std::string::npos);
  EXPECT_TRUE(invalid_input_message([] { Schedule::from_betas({1.0}, "b"); }).find("betas[0] = 1 ") !=
              std::string::npos);
  EXPECT_TRUE(invalid_input_message([] { Schedule::from_betas({}, "b"); }).find("length 0") != std::string::npos);
  EXPECT_TRUE(invalid_input_message([] { Schedule::from_betas({1e-20}, "b"); }).find("exactly 1") !=
              std::string::npos);
  EXPECT_TRUE(invalid_input_message([] { Schedule::linear(1); }).find("T = 1 is out of range") != std::string::npos);
  EXPECT_TRUE(invalid_input_message([] { Schedule::linear(10, 0.0, 0.02); }).find("beta_start = 0") !=
              std::string::npos);
  EXPECT_TRUE(invalid_input_message([] { Schedule::cosine(0); }).find("T = 0") != std::string::npos);
}

}  // namespace
}  // namespace diffscope
