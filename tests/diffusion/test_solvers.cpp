// test_solvers.cpp — the solvers and spacings (SEMANTICS §3) against independent float64 answers:
// tools/solvers_reference.py's plain implementations written from the papers (golden file, 1e-12), the exact
// probability-flow ODE of the Gaussian mixture (scipy DOP853, convergence order), and the mixture's
// closed-form marginal (stochastic solvers).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "base/errors.h"
#include "diffusion/cpu_reference.h"
#include "diffusion/exact_ode.h"
#include "diffusion/step_table.h"
#include "model/model.h"
#include "model_fixtures.h"
#include "run/backend.h"
#include "test_paths.h"

namespace diffscope {
namespace {

using nlohmann::json;

const json& golden() {
  static const json g = [] {
    std::ifstream f(test::data_path("solvers/golden.json"));
    return json::parse(f);
  }();
  return g;
}

const DiffusionModel& exact_model() {
  static const DiffusionModel m = load_diffusion_model(test::repo_root() + "/assets/models/gaussians8-exact.safetensors");
  return m;
}

std::vector<double> start_noise(int rows, uint64_t seed) {
  std::vector<double> x(static_cast<size_t>(rows) * 2);
  cpu_ref::start_noise<double>(exact_model().schedule.T, 2, seed, rows, x.data());
  return x;
}

// Runs `tab` in float64 in chunks of `chunk` steps (launch boundaries), prev kept by the caller.
std::vector<double> run(const StepTable& tab, std::vector<double> x, uint64_t seed, int chunk,
                        std::vector<double>* frames = nullptr) {
  const int B = static_cast<int>(x.size() / 2), N = tab.steps();
  std::vector<double> prev(x.size(), 0.0);
  if (frames) frames->assign(static_cast<size_t>(N) * x.size(), 0.0);
  for (int k = 0; k < N; k += chunk) {
    const int stop = std::min(N, k + chunk);
    cpu_ref::run_steps<double>(exact_model(), tab, k, stop, x.data(), B, seed,
                               frames ? frames->data() + static_cast<size_t>(k) * x.size() : nullptr, 0, prev.data());
  }
  return x;
}

TEST(GaussianMixtureModel, LoadsTheShippedFileWithGaussians8Numbers) {
  const DiffusionModel& m = exact_model();
  ASSERT_TRUE(m.mixture.has_value());
  EXPECT_EQ(m.net.dim, 2);
  EXPECT_EQ(m.mixture->K, 8);
  // Means 2 (cos k pi/4, sin k pi/4) minus gaussians8's data_offset (-0.0002, 0.0002), times 0.7054.
  for (int k = 0; k < 8; ++k) {
    EXPECT_NEAR(m.mixture->means[2 * k], (2 * std::cos(k * M_PI / 4) + 0.0002) * 0.7054, 1e-15);
    EXPECT_NEAR(m.mixture->means[2 * k + 1], (2 * std::sin(k * M_PI / 4) - 0.0002) * 0.7054, 1e-15);
    EXPECT_DOUBLE_EQ(m.mixture->stds[k], 0.07054);
    EXPECT_DOUBLE_EQ(m.mixture->weights[k], 0.125);
  }
}

TEST(GaussianMixtureModel, EpsIsMinusSqrtOneMinusAbarTimesTheScoreByFiniteDifferences) {
  // eps* = -sqrt(1-abar) grad log p_t, p_t in closed form; the gradient by central differences of log p_t.
  const GaussianMixture& g = *exact_model().mixture;
  auto log_p = [&](double x0, double x1, double a) {
    double p = 0;
    for (int k = 0; k < g.K; ++k) {
      const double v = a * g.stds[k] * g.stds[k] + 1 - a;
      const double r0 = x0 - std::sqrt(a) * g.means[2 * k], r1 = x1 - std::sqrt(a) * g.means[2 * k + 1];
      p += g.weights[k] / (2 * M_PI * v) * std::exp(-(r0 * r0 + r1 * r1) / (2 * v));
    }
    return std::log(p);
  };
  for (double a : {0.9999, 0.9, 0.5, 0.01}) {
    for (double x0 : {-1.3, 0.2, 0.9}) {
      const double x1 = 0.4, h = 1e-6;
      double eps[2], scratch[8], x[2] = {x0, x1};
      mixture_eps_row<double>(g, x, a, eps, scratch);
      const double d0 = (log_p(x0 + h, x1, a) - log_p(x0 - h, x1, a)) / (2 * h);
      const double d1 = (log_p(x0, x1 + h, a) - log_p(x0, x1 - h, a)) / (2 * h);
      EXPECT_NEAR(eps[0], -std::sqrt(1 - a) * d0, 1e-5 * (1 + std::abs(eps[0]))) << "abar " << a;
      EXPECT_NEAR(eps[1], -std::sqrt(1 - a) * d1, 1e-5 * (1 + std::abs(eps[1]))) << "abar " << a;
    }
  }
}

TEST(Spacings, MatchDiffusersSetTimestepsAndKarrasFromNumpy) {
  const Schedule& sched = exact_model().schedule;
  int checked = 0;
  for (const json& c : golden()["spacings"]) {
    const std::string kind = c["spacing"];
    const int t_start = c["t_start"], N = c["steps"];
    const int offset = c.value("steps_offset", 0);
    SCOPED_TRACE(kind + " t_start " + std::to_string(t_start) + " N " + std::to_string(N));
    if (kind == "karras") {
      const StepTable tab = build_step_table(sched, Sampler::Heun, t_start, N, 0.0, Spacing::Karras);
      const std::vector<double> sig = c["sigma"], tn = c["t_net"];
      for (int k = 0; k < N; ++k) {
        EXPECT_NEAR(std::sqrt((1 - tab.abar[k]) / tab.abar[k]), sig[k], 1e-12 * sig[k]) << k;
        EXPECT_NEAR(tab.t_net[k], tn[k], 1e-9) << k;
      }
    } else {
      const std::vector<int32_t> want = c["t"];
      EXPECT_EQ(spacing_timesteps(parse_spacing(kind), t_start, N, offset), want);
      const StepTable tab = build_step_table(sched, Sampler::Ddim, t_start, N, 0.0, parse_spacing(kind), offset);
      EXPECT_EQ(tab.t, want);
      for (int k = 0; k < N; ++k) EXPECT_EQ(tab.noise_key[k], static_cast<uint32_t>(want[k]));  // SEMANTICS §7
    }
    ++checked;
  }
  EXPECT_GT(checked, 50);
}

TEST(Spacings, TrailingDropsNumpysExtraMinusOneAndLeadingRefusesAnOffsetPastTStart) {
  // numpy's arange(1000, 0, -1000/61) has 62 entries, the last rounding to -1: we keep the first 61.
  const std::vector<int32_t> t = spacing_timesteps(Spacing::Trailing, 999, 61);
  ASSERT_EQ(t.size(), 61u);
  EXPECT_EQ(t.front(), 999);
  EXPECT_GE(t.back(), 0);
  EXPECT_THROW(spacing_timesteps(Spacing::Leading, 999, 1000, 1), InvalidInput);  // 999 + 1 > t_start
  EXPECT_THROW(build_step_table(exact_model().schedule, Sampler::Ddpm, 999, 10, 0.0, Spacing::Karras), InvalidInput);
  EXPECT_THROW(parse_spacing("exponential"), InvalidInput);
  try {
    parse_sampler("dpm++");
    FAIL();
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("dpmpp-2m, dpmpp-2m-sde, euler-ancestral, heun"), std::string::npos);
  }
}

TEST(Solvers, Float64PathEqualsThePlainImplementationsFromThePapers) {
  const json& g = golden();
  const uint64_t seed = g["seed"];
  const int B = g["rows"];
  const std::vector<double> x0 = start_noise(B, seed);
  const std::vector<double> want0 = g["x_start"];
  for (size_t i = 0; i < x0.size(); ++i) ASSERT_NEAR(x0[i], want0[i], 1e-12);
  int runs = 0;
  for (const json& r : g["runs"]) {
    const std::string solver = r["solver"], spacing = r["spacing"];
    SCOPED_TRACE(solver + " " + spacing + " N " + std::to_string(r["steps"].get<int>()));
    const StepTable tab = build_step_table(exact_model().schedule, parse_sampler(solver), r["t_start"], r["steps"], 0.0,
                                           parse_spacing(spacing));
    const std::vector<double> want = r["x"];
    for (int chunk : {1, 3, 1000}) {  // one call or split into launches: prev survives the boundaries
      const std::vector<double> x = run(tab, x0, seed, chunk);
      double err = 0;
      for (size_t i = 0; i < x.size(); ++i) err = std::max(err, std::abs(x[i] - want[i]));
      EXPECT_LT(err, 1e-12) << "chunk " << chunk;
    }
    ++runs;
  }
  EXPECT_EQ(runs, 20);
}

// Error at the last nonzero sigma (frame N-1, sigma(0) on karras) against the exact ODE, N = 8..128.
TEST(Solvers, DeterministicSolversConvergeAtTheirOrderToTheExactOde) {
  const json& e = golden()["exact"];
  const int rows = e["rows"];
  const std::vector<double> exact = e["x_ve"];
  const std::vector<double> x0 = start_noise(rows, golden()["seed"]);
  struct Case {
    Sampler s;
    double order;
  };
  for (const Case c : {Case{Sampler::Ddim, 1.0}, Case{Sampler::Heun, 2.0}, Case{Sampler::Dpmpp2m, 2.0}}) {
    std::vector<double> errs;
    for (int N = 8; N <= 128; N *= 2) {
      const StepTable tab = build_step_table(exact_model().schedule, c.s, 999, N, 0.0, Spacing::Karras);
      std::vector<double> frames;
      run(tab, x0, 0, N, &frames);
      const double* f = frames.data() + static_cast<size_t>(N - 2) * x0.size();  // state after N-1 steps
      const double scale = 1.0 / std::sqrt(tab.abar[N - 1]);
      double se = 0;
      for (size_t i = 0; i < x0.size(); ++i) se += std::pow(f[i] * scale - exact[i], 2);
      errs.push_back(std::sqrt(se / rows));
    }
    std::string slopes;
    for (size_t i = 0; i + 1 < errs.size(); ++i) slopes += std::to_string(std::log2(errs[i] / errs[i + 1])) + " ";
    std::cout << "[ solver   ] " << sampler_name(c.s) << " rms error N=8..128:";
    for (double v : errs) std::cout << " " << v;
    std::cout << " ; slopes " << slopes << "\n";
    // The asymptotic slopes (the last two doublings) are the order within 0.15; never below order - 0.15.
    for (size_t i = errs.size() - 3; i + 1 < errs.size(); ++i)
      EXPECT_NEAR(std::log2(errs[i] / errs[i + 1]), c.order, 0.3) << sampler_name(c.s) << " doubling " << i;
    EXPECT_NEAR(std::log2(errs[errs.size() - 2] / errs.back()), c.order, 0.15) << sampler_name(c.s);
  }
}


// Stochastic solvers: the distribution of their states against the mixture's closed-form marginal.
// At the frame with abar nearest 0.5: mean sqrt(abar) mean(mu), covariance abar (Cov(mu) + s^2 I) + (1-abar) I
// (within 5 standard errors + 3%) and E|x|^4 (5 standard errors + the solver's bias at N = 100); at the end: component weights 1/8 within 5 binomial standard errors and
// the within-component std near s (both solvers are biased low at finite N: the bound says how much).
TEST(Solvers, StochasticSolversMatchTheClosedFormMarginal) {
  const GaussianMixture& g = *exact_model().mixture;
  const int n = 20000, N = 100;
  const std::vector<double> x0 = start_noise(n, 3);
  double mu_mean[2] = {0, 0}, cov_mu[3] = {0, 0, 0};
  for (int k = 0; k < 8; ++k) mu_mean[0] += g.means[2 * k] / 8, mu_mean[1] += g.means[2 * k + 1] / 8;
  for (int k = 0; k < 8; ++k) {
    const double d0 = g.means[2 * k] - mu_mean[0], d1 = g.means[2 * k + 1] - mu_mean[1];
    cov_mu[0] += d0 * d0 / 8, cov_mu[1] += d0 * d1 / 8, cov_mu[2] += d1 * d1 / 8;
  }
  struct Case {
    Sampler s;
    double std_lo, std_hi, r4_bias;  // measured at N = 100: std/s 0.92 and 1.01, E|x|^4 -8% and -1%
  };
  for (const Case c : {Case{Sampler::EulerAncestral, 0.85, 1.05, 0.12}, Case{Sampler::Dpmpp2mSde, 0.95, 1.05, 0.04}}) {
    SCOPED_TRACE(sampler_name(c.s));
    const StepTable tab = build_step_table(exact_model().schedule, c.s, 999, N, 0.0, Spacing::Karras);
    std::vector<double> frames;
    const std::vector<double> x = run(tab, x0, 3, 17, &frames);
    int kmid = 0;
    for (int k = 0; k < N; ++k)
      if (std::abs(tab.abar[k] - 0.5) < std::abs(tab.abar[kmid] - 0.5)) kmid = k;
    const double a = kmid + 1 < N ? tab.abar[kmid + 1] : 1.0;  // frame kmid+1 is at abar[kmid+1]
    const double* f = frames.data() + static_cast<size_t>(kmid) * x0.size();
    double m[2] = {0, 0}, cv[3] = {0, 0, 0};
    for (int i = 0; i < n; ++i) m[0] += f[2 * i] / n, m[1] += f[2 * i + 1] / n;
    for (int i = 0; i < n; ++i) {
      const double d0 = f[2 * i] - m[0], d1 = f[2 * i + 1] - m[1];
      cv[0] += d0 * d0 / n, cv[1] += d0 * d1 / n, cv[2] += d1 * d1 / n;
    }
    const double want_cv[3] = {a * (cov_mu[0] + g.stds[0] * g.stds[0]) + 1 - a, a * cov_mu[1],
                               a * (cov_mu[2] + g.stds[0] * g.stds[0]) + 1 - a};
    for (int j = 0; j < 2; ++j) EXPECT_NEAR(m[j], std::sqrt(a) * mu_mean[j], 5 * std::sqrt(want_cv[2 * j] / n));
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(cv[j], want_cv[j], 5 * want_cv[0] * std::sqrt(2.0 / n) + 0.03 * want_cv[0]) << "cov " << j;
    // The covariance of this data set stays near I at every abar; E|x|^4 tells the marginals apart:
    // component k in 2D, x = m + sqrt(v) z: E|x|^4 = |m|^4 + 8 v |m|^2 + 8 v^2, m = sqrt(abar) mu_k.
    double r4_want = 0, r4 = 0, r4_sq = 0;
    for (int k = 0; k < 8; ++k) {
      const double m2 = a * (g.means[2 * k] * g.means[2 * k] + g.means[2 * k + 1] * g.means[2 * k + 1]);
      const double v = a * g.stds[k] * g.stds[k] + 1 - a;
      r4_want += g.weights[k] * (m2 * m2 + 8 * v * m2 + 8 * v * v);
    }
    for (int i = 0; i < n; ++i) {
      const double q = std::pow(f[2 * i] * f[2 * i] + f[2 * i + 1] * f[2 * i + 1], 2);
      r4 += q / n, r4_sq += q * q / n;
    }
    const double r4_se = std::sqrt((r4_sq - r4 * r4) / n);
    EXPECT_NEAR(r4, r4_want, 5 * r4_se + c.r4_bias * r4_want);
    std::cout << "[ solver   ] " << sampler_name(c.s) << " at abar " << a << ": cov " << cv[0] << " " << cv[1] << " "
              << cv[2] << " (closed form " << want_cv[0] << " " << want_cv[1] << " " << want_cv[2] << "), E|x|^4 "
              << r4 << " +- " << r4_se << " (closed form " << r4_want << ", N(0, I): 8)";
    // The end: nearest-mean components.
    std::vector<int> count(8, 0);
    std::vector<double> ss(8, 0.0);
    for (int i = 0; i < n; ++i) {
      int best = 0;
      double bd = 1e300;
      for (int k = 0; k < 8; ++k) {
        const double d = std::pow(x[2 * i] - g.means[2 * k], 2) + std::pow(x[2 * i + 1] - g.means[2 * k + 1], 2);
        if (d < bd) bd = d, best = k;
      }
      ++count[best];
      ss[best] += bd;
    }
    double worst_ratio = 1;
    for (int k = 0; k < 8; ++k) {
      EXPECT_NEAR(count[k] / double(n), 0.125, 5 * std::sqrt(0.125 * 0.875 / n)) << "component " << k;
      const double ratio = std::sqrt(ss[k] / (2.0 * count[k])) / g.stds[k];
      if (std::abs(ratio - 1) > std::abs(worst_ratio - 1)) worst_ratio = ratio;
      EXPECT_GT(ratio, c.std_lo) << "component " << k;
      EXPECT_LT(ratio, c.std_hi) << "component " << k;
    }
    std::cout << "; final std / s worst " << worst_ratio << "\n";
  }
}

// The fp32 CPU backend (what the CLI and GUI run) against the float64 reference for every new solver and
// spacing, on a random eps-network (continuous network timesteps on karras), split into launches.
TEST(Solvers, CpuBackendFloat32MatchesFloat64AcrossLaunches) {
  const DiffusionModel m = test::random_model(2, 64, 77, 0.5f);
  auto be = make_cpu_backend();
  const int B = 300;
  const std::vector<float> x0 = test::random_values(size_t(B) * 2, 5);
  for (Sampler s : {Sampler::Dpmpp2m, Sampler::Dpmpp2mSde, Sampler::EulerAncestral, Sampler::Heun, Sampler::Ddim}) {
    for (Spacing sp : {Spacing::Default, Spacing::Karras, Spacing::Trailing}) {
      const StepTable tab = build_step_table(m.schedule, s, 999, 25, 0.0, sp);
      std::vector<double> xd(x0.begin(), x0.end()), prevd(xd.size());
      cpu_ref::run_steps<double>(m, tab, 0, 25, xd.data(), B, 9, nullptr, 0, prevd.data());
      std::vector<float> x = x0, prev(x.size());
      for (int k = 0; k < 25; k += 4)
        be->run_steps(m, tab, k, std::min(25, k + 4), x.data(), B, 9, nullptr, Precision::Fp32, 0, prev.data());
      const double err = test::rel_frobenius(x, xd);
      EXPECT_LT(err, 1e-5) << sampler_name(s) << " " << spacing_name(sp);
    }
  }
  // A table that needs the previous data prediction refuses a missing buffer instead of reading garbage.
  const StepTable tab = build_step_table(m.schedule, Sampler::Dpmpp2m, 999, 5);
  std::vector<float> x = x0;
  EXPECT_THROW(be->run_steps(m, tab, 0, 5, x.data(), B, 9, nullptr, Precision::Fp32), std::invalid_argument);
}

// The app's C++ exact ODE (Boost.Odeint dopri5, 1e-10) against scipy's DOP853 (1e-12) from the same start.
TEST(ExactOde, BoostOdeintMatchesScipyDop853) {
  const json& e = golden()["exact"];
  const int rows = e["rows"];
  const std::vector<double> want = e["x_ve"];
  const std::vector<double> x0 = start_noise(rows, golden()["seed"]);
  const std::vector<double> got =
      mixture_ode_solve(*exact_model().mixture, x0.data(), rows, e["sigma_from"], e["sigma_to"], 1e-10);
  double err = 0;
  for (size_t i = 0; i < got.size(); ++i) err = std::max(err, std::abs(got[i] - want[i]));
  std::cout << "[ solver   ] exact ODE: Boost dopri5 vs scipy DOP853 max |diff| " << err << "\n";
  EXPECT_LT(err, 1e-8);  // measured 2.2e-10
}

}  // namespace
}  // namespace diffscope
