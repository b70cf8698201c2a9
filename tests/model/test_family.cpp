// test_family.cpp — model families (SEMANTICS §2.1, §3 "Noise-level lists of the families") against values
// written out here independently: each family's definition of its output (Salimans & Ho 2022 for v, SD3's rectified
// flow, Karras et al. 2022 Table 1 for EDM), diffusers' scheduler steps (DDIMScheduler with epsilon / sample /
// v_prediction, FlowMatchEulerDiscreteScheduler.step, EDMEulerScheduler.step) and set_timesteps lists re-implemented
// in float64 (and, where diffusers computes in float32, in float32), closed forms for networks with known outputs,
// and the exact probability-flow ODE of a Gaussian for the observed order of the first-order step.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/errors.h"
#include "diffusion/exact_ode.h"
#include "model/family.h"
#include "model/schedule.h"
#include "family_fixtures.h"
#include "test_paths.h"

namespace diffscope {
namespace {

constexpr const auto& kAll = test::kAllFamilies;

FamilyParams params(Family f) { return test::family_params(f); }

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "(no InvalidInput)";
}

// The same signal-to-noise ratio for every family, from the VP abar: (alpha, sigma) of each family's state.
NoiseLevel level_of(Family f, double abar) { return level_at_abar(f, abar); }

// The VP abar with the signal-to-noise ratio of the flow level s: (1 - s)^2 / ((1 - s)^2 + s^2).
double abar_of_flow(double s) { return (1 - s) * (1 - s) / ((1 - s) * (1 - s) + s * s); }

// Karras et al. 2022 Table 1 ("Ours"), written out here.
double c_skip(double sigma, double sd) { return sd * sd / (sigma * sigma + sd * sd); }
double c_out(double sigma, double sd) { return sigma * sd / std::sqrt(sigma * sigma + sd * sd); }

// Each family's output by its definition at x = alpha x0 + sigma eps.
double output_by_definition(Family f, const NoiseLevel& lv, double x0, double eps, double sd = 0.5) {
  const double x = lv.alpha * x0 + lv.sigma * eps;
  switch (f) {
    case Family::Epsilon: return eps;
    case Family::Sample: return x0;
    case Family::VPrediction: return lv.alpha * eps - lv.sigma * x0;  // Salimans & Ho 2022
    case Family::Flow: return eps - x0;                               // d x_s / ds of x_s = (1-s) x0 + s eps
    case Family::Edm: return (x0 - c_skip(lv.sigma, sd) * x) / c_out(lv.sigma, sd);
  }
  return 0;
}

TEST(FamilyParse, ValuesAndErrorsNameKeyValueAndChoices) {
  EXPECT_EQ(parse_family("epsilon"), Family::Epsilon);
  EXPECT_EQ(parse_family("sample"), Family::Sample);
  EXPECT_EQ(parse_family("v_prediction"), Family::VPrediction);
  EXPECT_EQ(parse_family("flow"), Family::Flow);
  EXPECT_EQ(parse_family("flow_prediction"), Family::Flow);
  EXPECT_EQ(parse_family("edm"), Family::Edm);
  const std::string m = message_of([] { parse_family("x0"); });
  EXPECT_NE(m.find("prediction_type = 'x0'"), std::string::npos) << m;
  EXPECT_NE(m.find("epsilon, sample, v_prediction, flow (or flow_prediction), edm"), std::string::npos) << m;
  EXPECT_EQ(parse_time_input("T*s", Family::Flow), TimeInput::TS);
  EXPECT_EQ(parse_time_input("c_noise", Family::Edm), TimeInput::CNoise);
  const std::string t = message_of([] { parse_time_input("c_noise", Family::VPrediction); });
  EXPECT_NE(t.find("time_input = 'c_noise' is not a time input of the v_prediction family; valid for v_prediction: "
                   "t/T, t"),
            std::string::npos)
      << t;
  EXPECT_NE(message_of([] { parse_time_input("tau", Family::Flow); }).find("valid for flow: T*s, s, 1-s"),
            std::string::npos);
}

TEST(FamilyParse, MetadataDefaultsAndKeysOfAnotherFamily) {
  const FamilyParams none = family_from_metadata({}, "m.safetensors");
  EXPECT_EQ(none.family, Family::Epsilon);
  EXPECT_EQ(none.time_input, TimeInput::TOverT);
  const FamilyParams flow = family_from_metadata({{"prediction_type", "flow_prediction"}, {"shift", "3.0"}}, "m");
  EXPECT_EQ(flow.family, Family::Flow);
  EXPECT_EQ(flow.time_input, TimeInput::TS);
  EXPECT_EQ(flow.flow_shift, 3.0);
  const FamilyParams edm = family_from_metadata(
      {{"prediction_type", "edm"}, {"sigma_data", "0.25"}, {"edm_prediction_type", "v_prediction"}}, "m");
  EXPECT_EQ(edm.time_input, TimeInput::CNoise);
  EXPECT_EQ(edm.sigma_data, 0.25);
  EXPECT_TRUE(edm.edm_v);
  EXPECT_NE(message_of([] {
              family_from_metadata({{"sigma_data", "0.5"}}, "m");
            })
                .find("m: __metadata__ 'sigma_data' = '0.5' is read only by the edm family; this file's "
                      "prediction_type is epsilon"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              family_from_metadata({{"prediction_type", "v_prediction"}, {"shift", "3"}}, "m");
            }).find("'shift' = '3' is read only by the flow family"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              family_from_metadata({{"prediction_type", "edm"}, {"sigma_data", "-1"}}, "m");
            }).find("'sigma_data' = -1"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              family_from_metadata({{"prediction_type", "flow"}, {"shift", "3x"}}, "m");
            }).find("'shift' = '3x' is not a finite number"),
            std::string::npos);
  EXPECT_NE(message_of([] {
              family_from_metadata({{"prediction_type", "eps"}}, "m");
            }).find("m: __metadata__ 'prediction_type' = 'eps' is not a known value"),
            std::string::npos);
  EXPECT_NE(convention_line(flow).find("velocity eps - x0, noise at s = 1, shift 3; time input T*s (T = 1000)"),
            std::string::npos)
      << convention_line(flow);
}

TEST(FamilyMaps, OutputMapGivesDataAndNoiseAtEveryLevel) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal;
  for (Family f : kAll)
    for (double abar : {0.999, 0.7, 0.3, 0.01}) {
      const NoiseLevel lv = level_of(f, abar);
      const OutputMap m = output_map(params(f), lv);
      const EpsToOutput inv = output_from_eps(params(f), lv);
      for (int i = 0; i < 20; ++i) {
        const double x0 = normal(rng), eps = normal(rng), x = lv.alpha * x0 + lv.sigma * eps;
        const double o = output_by_definition(f, lv, x0, eps);
        EXPECT_NEAR(m.dx * x + m.d_out * o, x0, 1e-12 * (1 + std::abs(x) / lv.alpha)) << family_name(f) << " " << abar;
        EXPECT_NEAR(m.ex * x + m.e_out * o, eps, 1e-12 * (1 + std::abs(x) / lv.sigma)) << family_name(f) << " " << abar;
        EXPECT_NEAR(inv.ox * x + inv.o_eps * eps, o, 1e-11 * (1 + std::abs(o) + std::abs(x))) << family_name(f);
      }
    }
  // Sign flips declared in the file: x0 - eps velocity; EDM's v_prediction negates c_out.
  FamilyParams flip = params(Family::Flow);
  flip.flow_velocity = FlowVelocity::X0MinusEps;
  const OutputMap a = output_map(params(Family::Flow), NoiseLevel::flow(0.4)),
                  b = output_map(flip, NoiseLevel::flow(0.4));
  EXPECT_EQ(b.d_out, -a.d_out);
  EXPECT_EQ(b.e_out, -a.e_out);
  FamilyParams edm_v = params(Family::Edm);
  edm_v.edm_v = true;
  EXPECT_EQ(output_map(edm_v, NoiseLevel::ve(2.0)).d_out, -c_out(2.0, 0.5));
}

TEST(FamilyMaps, NetworkInputScaleAndTime) {
  FamilyParams vp = params(Family::VPrediction);
  EXPECT_EQ(network_input(vp, NoiseLevel::vp(0.5, 250.0)).time, 0.25);
  EXPECT_EQ(network_input(vp, NoiseLevel::vp(0.5, 250.0)).c_in, 1.0);
  vp.time_input = TimeInput::T;
  EXPECT_EQ(network_input(vp, NoiseLevel::vp(0.5, 250.0)).time, 250.0);
  FamilyParams flow = params(Family::Flow);
  EXPECT_DOUBLE_EQ(network_input(flow, NoiseLevel::flow(0.375)).time, 375.0);  // diffusers' flow timestep 1000 s
  flow.time_input = TimeInput::OneMinusS;
  EXPECT_DOUBLE_EQ(network_input(flow, NoiseLevel::flow(0.375)).time, 0.625);
  const FamilyParams edm = params(Family::Edm);
  const NetworkInput in = network_input(edm, NoiseLevel::ve(3.0));
  EXPECT_DOUBLE_EQ(in.c_in, 1.0 / std::sqrt(9.0 + 0.25));
  EXPECT_DOUBLE_EQ(in.time, std::log(3.0) / 4.0);
}

// diffusers' step functions, written out: DDIMScheduler.step (eta 0) from each prediction type's x0 and eps,
// FlowMatchEulerDiscreteScheduler.step and EDMEulerScheduler.step (s_churn 0).
double diffusers_step(Family f, const NoiseLevel& cur, const NoiseLevel& next, double x, double o) {
  if (f == Family::Flow) return x + (next.sigma - cur.sigma) * o;
  if (f == Family::Edm) {
    const double D = c_skip(cur.sigma, 0.5) * x + c_out(cur.sigma, 0.5) * o;
    return x + (next.sigma - cur.sigma) * (x - D) / cur.sigma;
  }
  const double abar = cur.alpha * cur.alpha, abar_prev = next.alpha * next.alpha;
  double x0 = 0, eps = 0;
  if (f == Family::Epsilon) x0 = (x - std::sqrt(1 - abar) * o) / std::sqrt(abar), eps = o;
  if (f == Family::Sample) x0 = o, eps = (x - std::sqrt(abar) * o) / std::sqrt(1 - abar);
  if (f == Family::VPrediction)
    x0 = std::sqrt(abar) * x - std::sqrt(1 - abar) * o, eps = std::sqrt(abar) * o + std::sqrt(1 - abar) * x;
  return std::sqrt(abar_prev) * x0 + std::sqrt(1 - abar_prev) * eps;
}

// Networks with a known output o = k x_state + c (the state recovered from c_in x); one step against diffusers' step
// functions and against the closed form for the zero network.
TEST(FamilyClosedForm, OneStepOfZeroConstantAndLinearNetworks) {
  for (Family f : kAll)
    for (auto [k, c] : {std::pair{0.0, 0.0}, std::pair{0.0, 0.7}, std::pair{-0.4, 0.0}, std::pair{0.3, -0.2}})
      for (auto [ab0, ab1] : {std::pair{0.2, 0.5}, std::pair{0.6, 0.61}, std::pair{0.9, 0.999}}) {
        const FamilyParams p = params(f);
        const std::vector<NoiseLevel> lv = {level_of(f, ab0), level_of(f, ab1)};
        const NetworkInput in0 = network_input(p, lv[0]);
        double x = 1.3;
        const double x_in = x;
        run_ddim(
            p, lv, 0.0,
            [&](const double* xi, double, int64_t n, double* o) {
              for (int64_t i = 0; i < n; ++i) o[i] = k * xi[i] / in0.c_in + c;
            },
            [](int, int64_t, double*) {}, &x, 1);
        const double expected = diffusers_step(f, lv[0], lv[1], x_in, k * x_in + c);
        EXPECT_NEAR(x, expected, 1e-13 * (1 + std::abs(expected))) << family_name(f) << " k " << k << " c " << c;
        if (k != 0 || c != 0) continue;
        // The zero network: epsilon keeps eps = 0 (x scales with alpha), sample keeps x0 = 0 (x scales with sigma),
        // flow keeps x, v = 0 rotates (alpha, sigma), EDM's F = 0 is D = c_skip x.
        const double a0 = lv[0].alpha, s0 = lv[0].sigma, a1 = lv[1].alpha, s1 = lv[1].sigma;
        double zero = 0;
        if (f == Family::Epsilon) zero = a1 / a0 * x_in;
        if (f == Family::Sample) zero = s1 / s0 * x_in;
        if (f == Family::VPrediction) zero = (a1 * a0 + s1 * s0) * x_in;
        if (f == Family::Flow) zero = x_in;
        if (f == Family::Edm) zero = (c_skip(s0, 0.5) + s1 / s0 * (1 - c_skip(s0, 0.5))) * x_in;
        EXPECT_NEAR(x, zero, 1e-13) << family_name(f);
      }
}

// N steps in closed form: a constant flow velocity is integrated exactly (x_N = x_0 + (s_N - s_0) c), a constant
// eps moves the VE state x / alpha by (S_N - S_0) c, a constant x0 keeps (x - alpha x0) / sigma; the zero network of
// epsilon gives alpha_N / alpha_0 x_0 and a linear flow velocity v = k x the product of (1 + (s' - s) k).
TEST(FamilyClosedForm, NStepsOfConstantAndLinearNetworks) {
  const std::vector<double> s = {0.95, 0.8, 0.55, 0.3, 0.12, 0.05};
  for (int variant = 0; variant < 4; ++variant) {
    const Family f = variant == 0   ? Family::Flow
                     : variant == 1 ? Family::Epsilon
                     : variant == 2 ? Family::Sample
                                    : Family::Flow;
    std::vector<NoiseLevel> lv;
    for (double si : s) lv.push_back(level_of(f, abar_of_flow(si)));
    const double c = 0.7, k = -0.9, x0 = 0.4;
    double x = x0;
    run_ddim(
        params(f), lv, 0.0, [&](const double* xi, double, int64_t, double* o) { o[0] = variant == 3 ? k * xi[0] : c; },
        [](int, int64_t, double*) {}, &x, 1);
    const NoiseLevel &a = lv.front(), &b = lv.back();
    double expected = 0;
    if (variant == 0) expected = x0 + (b.sigma - a.sigma) * c;
    if (variant == 1) expected = b.alpha * (x0 / a.alpha + (b.sigma / b.alpha - a.sigma / a.alpha) * c);
    if (variant == 2) expected = b.alpha * c + b.sigma * (x0 - a.alpha * c) / a.sigma;
    if (variant == 3) {
      expected = x0;
      for (size_t i = 0; i + 1 < s.size(); ++i) expected *= 1 + (s[i + 1] - s[i]) * k;
    }
    EXPECT_NEAR(x, expected, 1e-13) << "variant " << variant;
  }
  double x = 2.0;  // epsilon, zero network, 5 steps
  std::vector<NoiseLevel> lv;
  for (double abar : {0.05, 0.2, 0.4, 0.7, 0.9, 0.99}) lv.push_back(NoiseLevel::vp(abar, 0));
  run_ddim(
      params(Family::Epsilon), lv, 0.0, [](const double*, double, int64_t, double* o) { o[0] = 0; },
      [](int, int64_t, double*) {}, &x, 1);
  EXPECT_NEAR(x, 2.0 * std::sqrt(0.99 / 0.05), 1e-13);
}

// FlowMatchEuler's step x + (s' - s) v and EDMEuler's step are the one DDIM step with eta 0, and so is DDIM on the
// VP state of the same signal-to-noise ratio: the same nonlinear network pushed through each, on diffusers' lists.
TEST(FamilyStep, FlowEulerAndEdmEulerEqualDdimEtaZero) {
  const auto net = [](double x, double time) { return std::sin(1.7 * x) + 0.3 * x * x - 0.001 * time; };
  const LevelList flow_list = flow_match_euler_levels({1000, 3.0}, 28);
  const std::vector<NoiseLevel> lv = noise_levels(Family::Flow, flow_list.levels);
  const FamilyParams fp = params(Family::Flow);
  for (double x_start : {-1.5, 0.2, 2.4}) {
    double x_euler = x_start, x_vp = x_start * lv[0].vp_scale();
    double x_ddim = x_start;
    float x_float = static_cast<float>(x_start);
    for (size_t k = 0; k + 1 < lv.size(); ++k) {
      const double t = network_input(fp, lv[k]).time;
      const double v = net(x_euler, t);
      x_euler = flow_euler_update(x_euler, v, lv[k].sigma, lv[k + 1].sigma);
      // DDIM in the VP state with abar of this level, in its (x, x0) form (DDIMScheduler with prediction_type
      // sample: the list starts at abar = 0, where the eps form divides by 0); x0 = x_s - s v from the network.
      const double abar = lv[k].vp_abar(), abar_prev = lv[k + 1].vp_abar();
      const double xs = x_vp / lv[k].vp_scale();  // the flow state the network reads
      const double x0 = xs - lv[k].sigma * net(xs, t);
      const double eps = (x_vp - std::sqrt(abar) * x0) / std::sqrt(1 - abar);
      x_vp = std::sqrt(abar_prev) * x0 + std::sqrt(1 - abar_prev) * eps;
      const StepRow r = family_ddim_row(fp, lv[k], lv[k + 1]);
      x_ddim = r.A * x_ddim + r.C * net(x_ddim, t);
      const float of = static_cast<float>(net(x_float, t));
      apply_step<float>(r, &x_float, &of, nullptr, 1, &x_float);
    }
    EXPECT_NEAR(x_ddim, x_euler, 1e-12 * (1 + std::abs(x_euler)));
    EXPECT_NEAR(x_vp / lv.back().vp_scale(), x_euler, 1e-12 * (1 + std::abs(x_euler)));
    EXPECT_NEAR(x_float, x_euler, 2e-5 * (1 + std::abs(x_euler)));
  }
  const LevelList edm_list = edm_levels({}, 18);
  const std::vector<NoiseLevel> el = noise_levels(Family::Edm, edm_list.levels);
  const FamilyParams ep = params(Family::Edm);
  double x_euler = 30.0, x_ddim = 30.0;
  for (size_t k = 0; k + 1 < el.size(); ++k) {
    const NetworkInput in = network_input(ep, el[k]);
    const double F_e = net(in.c_in * x_euler, in.time), F_d = net(in.c_in * x_ddim, in.time);
    const double D = c_skip(el[k].sigma, 0.5) * x_euler + c_out(el[k].sigma, 0.5) * F_e;
    x_euler = edm_euler_update(x_euler, D, el[k].sigma, el[k + 1].sigma);
    const StepRow r = family_ddim_row(ep, el[k], el[k + 1]);
    x_ddim = r.A * x_ddim + r.C * F_d;
  }
  EXPECT_NEAR(x_ddim, x_euler, 1e-12 * (1 + std::abs(x_euler)));
}

// DDIM with eta in any family is SEMANTICS §3's ddim on the VP state of the same signal-to-noise ratio.
TEST(FamilyStep, DdimEtaNoiseCoefficientMatchesVpFormula) {
  for (Family f : kAll)
    for (double eta : {0.0, 0.5, 1.0})
      for (auto [ab, ab_prev] : {std::pair{0.1, 0.3}, std::pair{0.5, 0.9}, std::pair{0.98, 1.0}}) {
        const NoiseLevel cur = level_of(f, ab), next = level_of(f, ab_prev);
        const DdimCoefficients c = ddim_coefficients(cur, next, eta);
        const double s = eta * std::sqrt((1 - ab_prev) / (1 - ab)) * std::sqrt(1 - ab / ab_prev);
        // In the VP state: x' = sqrt(abar') D + sqrt(1 - abar' - s^2) eps + s z; scaled to the family's state.
        const double scale = 1.0 / next.vp_scale();
        EXPECT_NEAR(c.d, std::sqrt(ab_prev) * scale, 1e-13) << family_name(f);
        EXPECT_NEAR(c.e, std::sqrt(std::max(0.0, 1 - ab_prev - s * s)) * scale, 1e-12) << family_name(f);
        EXPECT_NEAR(c.z, s * scale, 1e-12) << family_name(f) << " eta " << eta;
      }
}

// The float path (the CPU backend's precision; coefficients rounded to float as the kernels read them) stays within
// float rounding of the float64 path in every family, over a whole run.
TEST(FamilyStep, FloatPathWithinFloatRoundingOfDouble) {
  const auto net_d = [](const double* xi, double time, int64_t n, double* o) {
    for (int64_t i = 0; i < n; ++i) o[i] = 0.5 * std::tanh(xi[i]) - 0.2 * xi[i] + 1e-4 * time;
  };
  const auto net_f = [](const float* xi, double time, int64_t n, float* o) {
    for (int64_t i = 0; i < n; ++i) o[i] = 0.5f * std::tanh(xi[i]) - 0.2f * xi[i] + float(1e-4 * time);
  };
  for (Family f : kAll) {
    std::vector<NoiseLevel> lv;
    for (int i = 0; i <= 40; ++i) lv.push_back(level_of(f, abar_of_flow(0.9 * (40 - i) / 40)));
    std::vector<double> xd = {-2.0, -0.3, 0.0, 0.8, 1.9};
    std::vector<float> xf(xd.begin(), xd.end());
    run_ddim(
        params(f), lv, 0.0, net_d, [](int, int64_t, double*) {}, xd.data(), 5);
    run_ddim(
        params(f), lv, 0.0, net_f, [](int, int64_t, float*) {}, xf.data(), 5);
    for (int i = 0; i < 5; ++i) EXPECT_NEAR(xf[i], xd[i], 1e-5 * (1 + std::abs(xd[i]))) << family_name(f) << " " << i;
  }
}

// Zero terminal SNR (diffusers' rescale_zero_terminal_snr, abar[T-1] = 0): sample, v and flow step from alpha = 0 with
// finite coefficients (their D does not divide by alpha); epsilon's row is not finite there (refused, §3).
TEST(FamilyStep, ZeroTerminalSnrIsFiniteForSampleVAndFlow) {
  const Schedule sched = Schedule::rescaled_zero_terminal_snr(Schedule::scaled_linear(1000, 0.00085, 0.012));
  ASSERT_EQ(sched.alphas_cumprod[999], 0.0);
  const NoiseLevel top = NoiseLevel::vp(sched.alphas_cumprod[999], 999),
                   next = NoiseLevel::vp(sched.alphas_cumprod[899], 899);
  for (Family f : {Family::Sample, Family::VPrediction}) {
    const StepRow r = family_ddim_row(params(f), top, next, 0.0);
    EXPECT_TRUE(std::isfinite(r.A) && std::isfinite(r.C)) << family_name(f);
    // v at alpha = 0: D = -v, eps = x; sample: D = o, eps = x.
    EXPECT_NEAR(r.A, std::sqrt(1 - sched.alphas_cumprod[899]), 1e-15) << family_name(f);
    EXPECT_NEAR(r.C, (f == Family::Sample ? 1.0 : -1.0) * std::sqrt(sched.alphas_cumprod[899]), 1e-15)
        << family_name(f);
  }
  const StepRow flow = family_ddim_row(params(Family::Flow), NoiseLevel::flow(1.0), NoiseLevel::flow(0.9), 0.0);
  EXPECT_NEAR(flow.A, 1.0, 1e-15);
  EXPECT_NEAR(flow.C, -0.1, 1e-15);
  EXPECT_FALSE(std::isfinite(family_ddim_row(params(Family::Epsilon), top, next, 0.0).A));
}

// §3's ddim row for an eps model on the VP state, folded into each family, is the family's own DDIM row; a
// dpmpp-style prev coefficient is rescaled to the family's state.
TEST(FamilyStep, FoldedVpRowIsTheFamilyRow) {
  for (Family f : kAll)
    for (double eta : {0.0, 0.7})
      for (auto [ab, ab_prev] : {std::pair{0.1, 0.3}, std::pair{0.5, 0.9}, std::pair{0.98, 1.0}}) {
        const NoiseLevel cur = level_of(f, ab), next = level_of(f, ab_prev);
        const double s = eta * std::sqrt((1 - ab_prev) / (1 - ab)) * std::sqrt(1 - ab / ab_prev);
        StepRow vp;
        vp.A = std::sqrt(ab_prev / ab);
        vp.C = std::sqrt(std::max(0.0, 1 - ab_prev - s * s)) - std::sqrt(ab_prev) * std::sqrt(1 - ab) / std::sqrt(ab);
        vp.S = s;
        vp.P = 0.25;
        const StepRow folded = fold_vp_row(params(f), cur, next, vp),
                      direct = family_ddim_row(params(f), cur, next, eta);
        EXPECT_NEAR(folded.A, direct.A, 1e-12 * (1 + std::abs(direct.A))) << family_name(f) << " " << ab;
        EXPECT_NEAR(folded.C, direct.C, 1e-12 * (1 + std::abs(direct.C))) << family_name(f) << " " << ab;
        EXPECT_NEAR(folded.S, direct.S, 1e-12) << family_name(f) << " " << ab;
        EXPECT_NEAR(folded.P, 0.25 / next.vp_scale(), 1e-15) << family_name(f);
      }
}

// FlowMatchHeunDiscreteScheduler as diffusers runs it: levels s_0, s_1, s_1, ..., s_{N-1}, s_{N-1}, 0 and 2N - 1
// calls alternating a first-order stage (store v, dt, x; return the Euler point) and a second-order stage at the
// next level (x + dt (v1 + v2) / 2); the last call is first order (Euler to 0).
double diffusers_flow_heun(const std::vector<double>& s, double x, const std::function<double(double, double)>& net) {
  std::vector<double> sig = {s[0]};
  for (size_t i = 1; i + 1 < s.size(); ++i) sig.insert(sig.end(), {s[i], s[i]});
  sig.push_back(0.0);
  bool first = true;
  double dt = 0, prev_derivative = 0, stored = 0;
  for (size_t i = 0; i + 1 < sig.size(); ++i) {
    const double sigma = first ? sig[i] : sig[i - 1], sigma_next = first ? sig[i + 1] : sig[i];
    const double v = net(x, 1000 * (first ? sigma : sigma_next));
    if (first) {
      const double denoised = x - v * sigma, derivative = (x - denoised) / sigma;
      dt = sigma_next - sigma, prev_derivative = derivative, stored = x;
      x = x + derivative * dt;
      first = false;
      if (i + 2 == sig.size()) break;  // the final stage to 0 has no second-order call
    } else {
      const double denoised = x - v * sigma_next, derivative = 0.5 * (prev_derivative + (x - denoised) / sigma_next);
      x = stored + derivative * dt;
      first = true;
    }
  }
  return x;
}

TEST(FamilyStep, FlowHeunIsFlowMatchHeun) {
  const auto net = [](double x, double time) { return std::sin(1.7 * x) + 0.3 * x * x - 0.001 * time; };
  for (int N : {1, 2, 5, 28}) {
    const LevelList l = flow_match_euler_levels({1000, 3.0}, N);
    for (double x_start : {-1.5, 0.2, 2.4}) {
      double x = x_start;
      run_heun(
          params(Family::Flow), noise_levels(Family::Flow, l.levels),
          [&](const double* xi, double time, int64_t, double* o) { o[0] = net(xi[0], time); }, &x, 1);
      const double expected = diffusers_flow_heun(l.levels, x_start, net);
      EXPECT_NEAR(x, expected, 1e-12 * (1 + std::abs(expected))) << "N " << N;
    }
  }
}

// FlowMatchEulerDiscreteScheduler, re-implemented from diffusers' source as Python runs it: __init__ in float32
// torch ops, set_timesteps in float64 numpy, the list cast to float32.
std::vector<float> diffusers_flow_match_euler(int T, double shift, int N) {
  const float s1 = 1.0f / static_cast<float>(T);
  const float sigma_min = (static_cast<float>(shift) * s1) / (1.0f + static_cast<float>(shift - 1.0) * s1);
  const float sigma_max = static_cast<float>(shift) / (1.0f + static_cast<float>(shift - 1.0));
  std::vector<float> out;
  for (int i = 0; i < N; ++i) {
    const double a = double(sigma_max) * T, b = double(sigma_min) * T;
    const double t = N == 1 ? a : (i == N - 1 ? b : a + i * ((b - a) / (N - 1)));
    const double s = t / T;
    out.push_back(static_cast<float>(shift * s / (1 + (shift - 1) * s)));
  }
  out.push_back(0.0f);
  return out;
}

TEST(FlowMatchEulerList, IsDiffusersListWithTheDoubleShiftOfSigmaMin) {
  for (double shift : {1.0, 1.73, 3.0, 6.0, 12.0})
    for (int N : {1, 2, 4, 28, 50, 1000}) {
      const LevelList l = flow_match_euler_levels({1000, shift}, N);
      const std::vector<float> ref = diffusers_flow_match_euler(1000, shift, N);
      ASSERT_EQ(l.levels.size(), ref.size());
      ASSERT_EQ(l.timesteps.size(), static_cast<size_t>(N));
      for (size_t i = 0; i < ref.size(); ++i) {
        EXPECT_EQ(static_cast<float>(l.levels[i]), ref[i]) << "shift " << shift << " N " << N << " i " << i;
        if (i < l.timesteps.size()) {
          EXPECT_DOUBLE_EQ(l.timesteps[i], 1000 * l.levels[i]);
        }
        if (i > 0) {
          EXPECT_LT(l.levels[i], l.levels[i - 1]);
        }
      }
      // The paper's float64 list (shift applied to sigma_min = shift(1/T) once more) agrees to float32 rounding.
      const double smin = flow_shift(1e-3, shift);
      for (int i = 0; i < N; ++i) {
        const double s = N == 1 ? 1.0 : 1.0 + i * (smin - 1.0) / (N - 1);
        EXPECT_NEAR(l.levels[i], flow_shift(s, shift), 1e-7 * l.levels[i]) << "shift " << shift << " N " << N;
      }
    }
  // SD3's shift 3 with 1000 training steps: the last level before 0 is shift(shift(0.001)) = 0.00893, not 0.001.
  const LevelList sd3 = flow_match_euler_levels({1000, 3.0}, 28);
  EXPECT_NEAR(sd3.levels[27], 0.0089286, 1e-6);
  EXPECT_EQ(sd3.levels[0], 1.0);
  EXPECT_EQ(sd3.levels[28], 0.0);
}

TEST(FlowMatchEulerList, DynamicShiftAndShiftTerminal) {
  FlowMatchEulerConfig c;
  c.use_dynamic_shifting = true;
  c.mu = 1.15;
  const LevelList l = flow_match_euler_levels(c, 10);
  for (int i = 0; i < 10; ++i) {
    const double s = 1.0 + i * (double(1.0f / 1000.0f) - 1.0) / 9;  // unshifted in __init__ when dynamic
    EXPECT_NEAR(l.levels[i], std::exp(1.15) / (std::exp(1.15) + 1 / s - 1), 1e-12);
  }
  FlowMatchEulerConfig t{1000, 3.0};
  t.shift_terminal = 0.1;
  const LevelList lt = flow_match_euler_levels(t, 8);
  EXPECT_NEAR(lt.levels[7], 0.1, 1e-15);
  EXPECT_NEAR(lt.levels[0], 1.0, 1e-15);
  EXPECT_NE(message_of([] { flow_match_euler_levels({1000, 0.0}, 4); }).find("shift = 0"), std::string::npos);
  EXPECT_NE(message_of([] {
              flow_match_euler_levels({1000, 3.0}, 0);
            }).find("steps = 0 (valid: >= 1)"),
            std::string::npos);
}

TEST(DpmFlowList, StartsAtShiftedOneMinusOneOverT) {
  for (double shift : {1.0, 3.0, 5.0, 12.0})
    for (int N : {1, 5, 20, 50}) {
      const LevelList l = dpm_flow_levels(1000, shift, N);
      ASSERT_EQ(l.levels.size(), static_cast<size_t>(N + 1));
      for (int i = 0; i < N; ++i) {
        // alphas = linspace(1, 1/T, N+1); the N nonzero levels 1 - alphas, shifted, largest first.
        const double s = (N - i) * (1.0 - 1e-3) / N;
        const double expected = shift * s / (1 + (shift - 1) * s);
        EXPECT_NEAR(l.levels[i], expected, 1e-14) << "shift " << shift << " N " << N << " i " << i;
        EXPECT_EQ(l.timesteps[i], std::floor(1000 * l.levels[i]));
      }
      EXPECT_NEAR(l.levels[0], shift * 0.999 / (1 + (shift - 1) * 0.999), 1e-15);
      EXPECT_EQ(l.levels[N], 0.0);
    }
}

TEST(EdmLists, KarrasAndExponential) {
  for (int N : {2, 5, 18, 40}) {
    EdmConfig c;
    const LevelList k = edm_levels(c, N);
    ASSERT_EQ(k.levels.size(), static_cast<size_t>(N + 1));
    for (int i = 0; i < N; ++i) {  // Karras et al. 2022 eq. 5
      const double a = std::pow(80.0, 1 / 7.0), b = std::pow(0.002, 1 / 7.0);
      const double expected = std::pow(a + double(i) / (N - 1) * (b - a), 7.0);
      EXPECT_NEAR(k.levels[i], expected, 1e-13 * expected) << "N " << N << " i " << i;
      EXPECT_NEAR(k.timesteps[i], std::log(expected) / 4, 1e-13);
    }
    EXPECT_NEAR(k.levels[0], 80.0, 1e-12);
    EXPECT_NEAR(k.levels[N - 1], 0.002, 1e-15);
    EXPECT_EQ(k.levels[N], 0.0);
    c.schedule = EdmSchedule::Exponential;
    c.final_sigma_zero = false;
    const LevelList e = edm_levels(c, N);
    for (int i = 0; i < N; ++i) {  // geometric: log sigma evenly spaced from log 80 to log 0.002
      const double expected = std::exp(std::log(80.0) + double(i) / (N - 1) * (std::log(0.002) - std::log(80.0)));
      EXPECT_NEAR(e.levels[i], expected, 1e-12 * expected);
    }
    EXPECT_EQ(e.levels[N], e.levels[N - 1]);  // final_sigmas_type sigma_min
  }
  EdmConfig one;
  one.schedule = EdmSchedule::Exponential;
  EXPECT_NEAR(edm_levels(one, 1).levels[0], 0.002, 1e-15);  // torch.linspace(a, b, 1) = [a], then reversed
  EXPECT_NEAR(edm_levels(EdmConfig{}, 1).levels[0], 80.0, 1e-12);
  EdmConfig bad;
  bad.sigma_max = 0.001;
  EXPECT_NE(message_of([&] { edm_levels(bad, 4); }).find("sigma_max = 0.001"), std::string::npos);
}

// The lists against tests/data/family/diffusers_lists.json: diffusers' lines run with torch and numpy themselves
// (tools/family_lists_reference.py; torch 2.11, numpy 2.5). FlowMatchEuler's, DPM's flow and EDM's karras levels
// round to exactly diffusers' float32 values; EDM's exponential list (computed in float32 by diffusers) is within 3
// float32 steps; timesteps as diffusers passes them (FlowMatchEuler's T s within one float32 step).
TEST(DiffusersLists, MatchTorchAndNumpy) {
  std::ifstream in(test::data_path("family/diffusers_lists.json"));
  const nlohmann::json g = nlohmann::json::parse(in);
  const auto ulp_near = [](double ours, double theirs, double ulps) {
    return std::abs(static_cast<float>(ours) - theirs) <= ulps * std::abs(theirs) * 0x1p-23 + 1e-30;
  };
  int lists = 0;
  for (const auto& c : g["flow_match_euler"]) {
    FlowMatchEulerConfig cfg{c["T"].get<int>(), c["shift"].get<double>()};
    cfg.use_dynamic_shifting = c["dynamic"].get<bool>();
    if (cfg.use_dynamic_shifting) cfg.mu = c["mu"].get<double>();
    cfg.shift_terminal = c["shift_terminal"].get<double>();
    const LevelList l = flow_match_euler_levels(cfg, c["n"].get<int>());
    const std::vector<double> s = c["sigmas"], t = c["timesteps"];
    ASSERT_EQ(l.levels.size(), s.size());
    for (size_t i = 0; i < s.size(); ++i)
      EXPECT_EQ(static_cast<float>(l.levels[i]), s[i]) << c.dump().substr(0, 80) << " i " << i;
    for (size_t i = 0; i < t.size(); ++i)
      EXPECT_TRUE(ulp_near(l.timesteps[i], t[i], 1)) << l.timesteps[i] << " vs " << t[i];
    ++lists;
  }
  for (const auto& c : g["dpm_flow"]) {
    const LevelList l = dpm_flow_levels(c["T"].get<int>(), c["flow_shift"].get<double>(), c["n"].get<int>());
    const std::vector<double> s = c["sigmas"], t = c["timesteps"];
    ASSERT_EQ(l.levels.size(), s.size());
    for (size_t i = 0; i < s.size(); ++i) EXPECT_EQ(static_cast<float>(l.levels[i]), s[i]) << "dpm i " << i;
    for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(l.timesteps[i], t[i]) << "dpm i " << i;
    ++lists;
  }
  for (const auto& c : g["edm"]) {
    EdmConfig cfg;
    cfg.schedule = c["schedule"] == "karras" ? EdmSchedule::Karras : EdmSchedule::Exponential;
    const LevelList l = edm_levels(cfg, c["n"].get<int>());
    const std::vector<double> s = c["sigmas"], t = c["timesteps"];
    ASSERT_EQ(l.levels.size(), s.size());
    for (size_t i = 0; i < s.size(); ++i)
      EXPECT_TRUE(ulp_near(l.levels[i], s[i], cfg.schedule == EdmSchedule::Karras ? 0 : 3))
          << l.levels[i] << " vs " << s[i];
    for (size_t i = 0; i < t.size(); ++i) EXPECT_NEAR(l.timesteps[i], t[i], 2e-6 * (1 + std::abs(t[i])));
    ++lists;
  }
  EXPECT_EQ(lists, 30 + 3 + 16 + 10);
}

// Data N(0, s0^2): at a level (alpha, sigma) the state is N(0, alpha^2 s0^2 + sigma^2), the exact denoiser is
// D* = alpha s0^2 x / (alpha^2 s0^2 + sigma^2) and the probability-flow ODE maps x to x std' / std. Every family's
// network gives its output by definition from (D*, eps*); DDIM with eta 0 converges at order 1 and gives the same
// answer in all families (it does not depend on the parameterization); Heun converges at order 2.
double gaussian_error(Family f, int N, double s_start, double* final_vp, bool heun = false) {
  const double s0 = 0.6, x_start = 1.1;
  std::vector<NoiseLevel> lv;
  for (int i = 0; i <= N; ++i) {
    const double s = s_start * (N - i) / N;  // a flow grid; every family at the same signal-to-noise ratios
    lv.push_back(f == Family::Flow ? NoiseLevel::flow(s) : level_of(f, abar_of_flow(s)));
  }
  const FamilyParams p = params(f);
  if (f != Family::Flow && f != Family::Edm)
    for (int i = 0; i <= N; ++i) lv[i].time = N - i;  // distinct VP timesteps, so that the time value names the level
  double x = x_start / lv[0].vp_scale();              // the same VP state x_start in every family's own state
  // The exact network at the level whose time value the solver passes (heun evaluates twice per step).
  const auto level_of_time = [&](double time) -> const NoiseLevel& {
    for (const NoiseLevel& l : lv)
      if (network_input(p, l).time == time) return l;
    ADD_FAILURE() << "no level has the time value " << time;
    return lv[0];
  };
  const auto exact_net = [&](const double* xi, double time, int64_t, double* o) {
    const NoiseLevel& l = level_of_time(time);
    const double xs = xi[0] / network_input(p, l).c_in, var = l.alpha * l.alpha * s0 * s0 + l.sigma * l.sigma;
    // D* and eps* mix back into xs (alpha D* + sigma eps* = xs), so the definitions apply to them.
    const double D = l.alpha * s0 * s0 * xs / var, eps = l.sigma * xs / var;
    o[0] = output_by_definition(f, l, D, eps);
  };
  if (heun)
    run_heun(p, lv, exact_net, &x, 1);
  else
    run_ddim(
        p, lv, 0.0, exact_net, [](int, int64_t, double*) {}, &x, 1);
  const NoiseLevel& a = lv.front();
  const double exact = x_start / a.vp_scale() * s0 / std::sqrt(a.alpha * a.alpha * s0 * s0 + a.sigma * a.sigma);
  if (final_vp) *final_vp = x;
  return std::abs(x - exact);
}

TEST(GaussianOde, DdimHasOrderOneAndHeunOrderTwoInEveryFamily) {
  for (Family f : kAll) {
    double prev = 0;
    for (int N : {16, 32, 64, 128, 256}) {
      double x_f = 0, x_eps = 0;
      const double err = gaussian_error(f, N, 0.95, &x_f);
      gaussian_error(Family::Epsilon, N, 0.95, &x_eps);
      EXPECT_NEAR(x_f, x_eps, 1e-12) << family_name(f) << " N " << N;  // the final state is clean data in all
      if (prev > 0) {
        const double order = std::log2(prev / err);
        EXPECT_GT(order, 0.9) << family_name(f) << " N " << N;
        EXPECT_LT(order, 1.1) << family_name(f) << " N " << N;
      }
      prev = err;
    }
  }
  // Heun: order 2 in every family (flow in s, the others in the VE level).
  for (Family f : kAll) {
    const double e1 = gaussian_error(f, 32, 0.95, nullptr, true), e2 = gaussian_error(f, 64, 0.95, nullptr, true);
    EXPECT_NEAR(std::log2(e1 / e2), 2.0, 0.15) << family_name(f);
  }
  // Zero terminal SNR: sample, v and flow start at s = 1 (alpha = 0), where D* = 0 and eps* = x; order 1 too.
  for (Family f : {Family::Sample, Family::VPrediction, Family::Flow}) {
    const double e1 = gaussian_error(f, 64, 1.0, nullptr), e2 = gaussian_error(f, 128, 1.0, nullptr);
    EXPECT_NEAR(std::log2(e1 / e2), 1.0, 0.1) << family_name(f);
  }
}

// An analytic mixture answers exactly in every family (mixture_output_row): DDIM and Heun runs against the exact
// probability-flow ODE (Boost.Odeint, diffusion/exact_ode.h) converge at orders 1 and 2, and DDIM's answer is the same in
// every family.
TEST(GaussianOde, MixtureInEveryFamilyConvergesToTheExactOde) {
  GaussianMixture m;
  m.K = 3, m.dim = 2;
  m.means = {-1.0, 0.5, 1.2, 0.8, 0.1, -1.1};
  m.stds = {0.3, 0.5, 0.2};
  m.weights = {0.5, 0.3, 0.2};
  const std::vector<double> x_vp = {0.7, -1.2, -0.4, 0.3, 1.5, 0.9};  // three rows, VP state at s = 0.9
  const double abar0 = abar_of_flow(0.9);
  const std::vector<double> exact = mixture_ode_solve(m, x_vp.data(), 3, std::sqrt((1 - abar0) / abar0), 0.0, 1e-12);
  std::vector<double> ddim_eps;  // the epsilon family's DDIM answer at N = 128
  for (bool heun : {false, true})
    for (Family f : kAll) {
      const FamilyParams p = params(f);
      double prev = 0;
      for (int N : {32, 64, 128}) {
        std::vector<NoiseLevel> lv;
        for (int i = 0; i <= N; ++i) lv.push_back(level_of(f, abar_of_flow(0.9 * (N - i) / N)));
        if (f != Family::Flow && f != Family::Edm)
          for (int i = 0; i <= N; ++i) lv[i].time = N - i;  // distinct VP timesteps: the time value names the level
        std::vector<double> x(6), scratch(m.dim + m.K);
        for (int i = 0; i < 6; ++i) x[i] = x_vp[i] / lv[0].vp_scale();
        const auto net = [&](const double* xi, double time, int64_t n, double* o) {
          const NoiseLevel* l = &lv[0];
          for (const NoiseLevel& c : lv)
            if (network_input(p, c).time == time) l = &c;
          const double c_in = network_input(p, *l).c_in;
          for (int64_t r = 0; r < n / 2; ++r) {
            const double row[2] = {xi[2 * r] / c_in, xi[2 * r + 1] / c_in};
            mixture_output_row(p, *l, m, row, o + 2 * r, scratch.data());
          }
        };
        if (heun)
          run_heun(p, lv, net, x.data(), 6);
        else
          run_ddim(
              p, lv, 0.0, net, [](int, int64_t, double*) {}, x.data(), 6);
        double err = 0;
        for (int i = 0; i < 6; ++i) err = std::max(err, std::abs(x[i] - exact[i]));
        if (prev > 0) EXPECT_NEAR(std::log2(prev / err), heun ? 2.0 : 1.0, 0.2) << family_name(f) << " N " << N;
        prev = err;
        if (heun || N != 128) continue;
        if (f == Family::Epsilon) ddim_eps = x;
        for (int i = 0; i < 6; ++i) EXPECT_NEAR(x[i], ddim_eps[i], 1e-11) << family_name(f);
      }
    }
}

}  // namespace
}  // namespace diffscope
