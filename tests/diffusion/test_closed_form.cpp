// test_closed_form.cpp — the closed-form cases (T = 1000, linear schedule), in float64 and in
// float32. Expected values are the numbers (float64 products of the §1 coefficients):
//   eps = 0: ddpm-mean from 999 (1000 steps) scales x by prod c1 = 157.410457; from 500 (501 steps) by
//   3.585251; one step at t = 0 by c1[0] = 1.000050.
//   eps = 1: ddpm-mean from x = 0 at 999 to 0 gives -313.380805; one step at t = 0 from x = 1 gives
//   c1[0] (1 - c2[0]) = 0.99004950; ddim (eta 0) from x = 0 at 999 gives -sqrt(1-abar)/sqrt(abar) =
//   -157.407281 for any number of steps. Posterior sigma: 0, 0.0073846, 0.100256, 0.141421 at 0, 1, 500, 999.
#include <gtest/gtest.h>

#include <vector>

#include "diffusion/cpu_reference.h"
#include "diffusion/step_table.h"
#include "model_fixtures.h"

namespace diffscope {
namespace {

// x after `S` denoise steps from a single row at t_start, both paths. Returns {double, float}.
template <class Real>
Real denoise_one(const DiffusionModel& m, Real x0, int64_t t_start, int S) {
  std::vector<Real> x(m.net.dim, x0);
  std::vector<int64_t> t(1, t_start);
  cpu_ref::denoise<Real>(m, x.data(), t.data(), 1, S, nullptr);
  for (Real v : x) EXPECT_EQ(v, x[0]);  // every dim follows the same scalar recursion
  return x[0];
}

template <class Real>
Real sample_one(const DiffusionModel& m, Sampler sampler, Real x0, int t_start, int N) {
  const StepTable tab = build_step_table(m.schedule, sampler, t_start, N, 0.0);
  std::vector<Real> x(m.net.dim, x0);
  cpu_ref::run_steps<Real>(m, tab, 0, N, x.data(), 1, /*seed=*/0, nullptr);
  return x[0];
}

struct Case {
  const char* what;
  float bias;        // eps
  double x0;
  int t_start, steps;
  double expected;   // 6-9 significant digits
  double tol;        // absolute, half a unit of the last stated digit
};

const Case kDenoiseCases[] = {
    {"eps=0, 1000 steps from 999", 0.f, 1.0, 999, 1000, 157.410457, 5e-7},
    {"eps=0, 501 steps from 500", 0.f, 1.0, 500, 501, 3.585251, 5e-7},
    {"eps=0, one step at t=0", 0.f, 1.0, 0, 1, 1.000050, 5e-7},
    {"eps=1, from x=0 at 999 to 0", 1.f, 0.0, 999, 1000, -313.380805, 5e-7},
    {"eps=1, one step at t=0 from x=1", 1.f, 1.0, 0, 1, 0.99004950, 5e-9},
};

TEST(ClosedForm, DdpmMeanDenoiseDouble) {
  for (const Case& c : kDenoiseCases) {
    const DiffusionModel m = test::constant_eps_model(3, 8, c.bias);
    EXPECT_NEAR(denoise_one<double>(m, c.x0, c.t_start, c.steps), c.expected, c.tol) << c.what;
    // The same run through the step-table path (sample's ddpm-mean).
    EXPECT_NEAR(sample_one<double>(m, Sampler::DdpmMean, c.x0, c.t_start, c.steps), c.expected, c.tol) << c.what;
  }
}

TEST(ClosedForm, DdpmMeanDenoiseFloat) {
  for (const Case& c : kDenoiseCases) {
    const DiffusionModel m = test::constant_eps_model(3, 8, c.bias);
    const double rel = 1e-5 * std::abs(c.expected);
    EXPECT_NEAR(denoise_one<float>(m, float(c.x0), c.t_start, c.steps), c.expected, rel) << c.what;
    EXPECT_NEAR(sample_one<float>(m, Sampler::DdpmMean, float(c.x0), c.t_start, c.steps), c.expected, rel) << c.what;
  }
}

TEST(ClosedForm, DdimEta0PredictsX0ForAnyStepCount) {
  const DiffusionModel m = test::constant_eps_model(2, 8, 1.f);
  for (int N : {50, 2, 1000}) {
    EXPECT_NEAR(sample_one<double>(m, Sampler::Ddim, 0.0, 999, N), -157.407281, 5e-7) << N << " steps";
    EXPECT_NEAR(sample_one<float>(m, Sampler::Ddim, 0.f, 999, N), -157.407281, 157.407281 * 1e-5) << N << " steps";
  }
}

TEST(ClosedForm, PosteriorSigmaInTheDdpmTable) {
  const Schedule s = Schedule::linear(1000);
  const StepTable tab = build_step_table(s, Sampler::Ddpm, 999, 1000);  // t = 999 - k
  auto sigma_at = [&](int t) { return tab.S[999 - t]; };
  EXPECT_EQ(sigma_at(0), 0.0);
  EXPECT_NEAR(sigma_at(1), 0.0073846, 5e-8);
  EXPECT_NEAR(sigma_at(500), 0.100256, 5e-7);
  EXPECT_NEAR(sigma_at(999), 0.141421, 5e-7);
}

}  // namespace
}  // namespace diffscope
