// test_field_view.cpp — the model family in the GUI's session (session/field_view.h, sampling_session.h): the
// family a run takes, t_start as a list index on flow and edm, the request the session builds with the
// prediction_type override and flow_shift, and the field view's quantities at a frame's level. Expected values
// are the closed forms of SEMANTICS §2 (flow: x0 = x - s v, eps = x + (1 - s) v; score = -eps / sigma) for
// networks with a known output, written out here.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "base/errors.h"
#include "diffusion/sampling.h"
#include "session/field_view.h"
#include "session/sampling_session.h"
#include "session/settings_keys.h"
#include "session_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

// A 2D network whose output is the constant c at every input (all weights 0, last bias c).
DiffusionModel constant_output_model(float c0, float c1) {
  DiffusionModel m;
  m.net.dim = 2, m.net.hidden = 4;
  m.net.W1.assign(4 * 3, 0.f), m.net.b1.assign(4, 0.f);
  m.net.W2.assign(4 * 4, 0.f), m.net.b2.assign(4, 0.f);
  m.net.W3.assign(2 * 4, 0.f), m.net.b3 = {c0, c1};
  m.schedule = Schedule::linear(1000);
  return m;
}

TEST(FieldView, TheAppsFamilyIsTheFilesThenTheOverride) {
  DiffusionModel m = constant_output_model(0, 0);
  EXPECT_EQ(gui_family(m, std::nullopt), Family::Epsilon);
  EXPECT_EQ(gui_family(m, Family::Flow), Family::Flow);
  EXPECT_EQ(ignored_override_note(m, Family::Flow), "");  // the file names none: the override applies
  m.family_in_file = true;
  m.family.family = Family::VPrediction;
  EXPECT_EQ(gui_family(m, Family::Flow), Family::VPrediction);
  EXPECT_EQ(ignored_override_note(m, Family::Flow),
            "prediction_type flow is ignored: the file names v_prediction (SEMANTICS §2)");
  EXPECT_EQ(ignored_override_note(m, Family::VPrediction), "");
  EXPECT_TRUE(t_start_is_index(Family::Flow));
  EXPECT_TRUE(t_start_is_index(Family::Edm));
  EXPECT_FALSE(t_start_is_index(Family::Sample));
  m.family.family = Family::Flow;
  EXPECT_EQ(family_default_t_start(m, std::nullopt), 0);
  m.family = FamilyParams{};  // a file that names none
  m.family_in_file = false;
  EXPECT_EQ(family_default_t_start(m, std::nullopt), 999);
  EXPECT_EQ(family_default_t_start(m, Family::VPrediction), 999);
  EXPECT_EQ(family_default_t_start(m, Family::Edm), 0);
}

TEST(FieldView, TheRequestCarriesTheOverrideOnlyForAFileThatNamesNoFamily) {
  DiffusionModel m = constant_output_model(0, 0);
  SamplingSettings s;
  s.prediction_type = Family::Flow;
  s.flow_shift = 3.0;
  SampleRequest r = session_request(s, nullptr, false, 1024, &m);
  EXPECT_EQ(r.prediction_type, Family::Flow);
  EXPECT_EQ(r.flow_shift, 3.0);
  m.family_in_file = true;  // the file's own family wins (the model section notes the override is ignored)
  m.family.family = Family::VPrediction;
  r = session_request(s, nullptr, false, 1024, &m);
  EXPECT_FALSE(r.prediction_type);
  EXPECT_EQ(r.flow_shift, 3.0);
  s.prediction_type.reset();
  s.flow_shift.reset();
  m.family_in_file = false;
  r = session_request(s, nullptr, false, 1024, &m);
  EXPECT_FALSE(r.prediction_type);
  EXPECT_FALSE(r.flow_shift);
}

TEST(FieldView, OnAFlowListTStartIsAnIndexIntoTheSteps) {
  test::HostTarget target;
  SamplingSession session(&target);
  session.load_model(test::data_path("golden/d2_h256.safetensors"));  // names no family
  session.set_compute_path(make_cpu_compute_path(&target), "cpu");
  SamplingSettings s;
  s.n_samples = 16, s.steps = 20, s.t_start = 999;
  s = session.apply(s).settings;
  EXPECT_EQ(s.t_start, 999);  // epsilon: a timestep
  EXPECT_EQ(s.steps, 20);
  s.prediction_type = Family::Flow;
  s.t_start = 999;
  s = session.apply(s).settings;
  EXPECT_EQ(s.t_start, 19);  // [0, steps - 1]
  EXPECT_EQ(s.steps, 20);
  s.t_start = 5, s.steps = 3;
  s = session.apply(s).settings;
  EXPECT_EQ(s.steps, 3);
  EXPECT_EQ(s.t_start, 2);
  s.steps = 5000;  // [1, T]
  s = session.apply(s).settings;
  EXPECT_EQ(s.steps, 1000);
  // Named values (scripts, --set): t_start past steps - 1 is refused with the index's range.
  s.steps = 20, s.t_start = 20;
  try {
    check_model_ranges(s, session.model(), false, {{"t_start", "set t_start"}});
    ADD_FAILURE() << "t_start 20 of 20 steps";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("set t_start = 20 is out of range; valid: [0, 19]"), std::string::npos) << e.what();
  }
  s.t_start = 19;
  EXPECT_NO_THROW(check_model_ranges(s, session.model(), false, {{"t_start", "set t_start"}}));
}

// An edm run's start is pure noise at its first level, sigma_max = 80 (karras, SEMANTICS §3): the seed's unit
// noise times sqrt(1 + 80^2) (diffusers' init_noise_sigma), drawn on the host; the trajectory holds N - t_start
// steps.
TEST(FieldView, AnEdmRunStartsFromTheSeedsNoiseAtItsFirstLevel) {
  test::HostTarget target;
  SamplingSession session(&target);
  session.load_model(test::data_path("golden/d2_h256.safetensors"));
  session.set_compute_path(make_cpu_compute_path(&target), "cpu");
  SamplingSettings s;
  s.n_samples = 8, s.steps = 10, s.t_start = 3, s.seed = 5;
  s.prediction_type = Family::Edm;
  s = session.apply(s).settings;
  EXPECT_EQ(s.t_start, 3);
  EXPECT_EQ(session.n_steps(), 7);  // N - t_start
  EXPECT_EQ(session.layout().n_steps, 7);  // frames 0..7
  s.t_start = 0;
  s = session.apply(s).settings;
  ASSERT_EQ(session.error(), "");
  EXPECT_EQ(session.n_steps(), 10);
  std::vector<float> unit(16);
  fill_start_noise(session.model(), 5, 8, unit.data());
  const std::vector<float>& x0 = session.start_state();
  ASSERT_EQ(x0.size(), 16u);
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(x0[i], unit[i] * float(std::sqrt(1.0 + 80.0 * 80.0))) << i;
}

TEST(FieldView, FlowQuantitiesAreTheClosedFormsOfTheOutput) {
  const DiffusionModel m = constant_output_model(0.5f, -1.0f);
  FieldLevel f;
  f.family.family = Family::Flow;
  f.family.time_input = TimeInput::TS;
  const double s = 0.25;
  f.level = NoiseLevel::flow(s);
  const std::vector<float> x = {1.0f, 2.0f, -3.0f, 0.5f};
  const float c[2] = {0.5f, -1.0f};
  std::vector<float> out(4);
  const PathField no_path = [](const float*, int, int, bool, float*) { FAIL() << "a family table: no path"; };
  const auto expect = [&](FieldQuantity q, auto value) {
    eval_field(m, f, q, x.data(), 2, out.data(), no_path);
    for (int i = 0; i < 4; ++i) EXPECT_NEAR(out[i], value(x[i], c[i % 2]), 1e-6) << field_quantity_name(q) << " " << i;
  };
  expect(FieldQuantity::Output, [](double, double v) { return v; });
  expect(FieldQuantity::X0, [&](double xi, double v) { return xi - s * v; });
  expect(FieldQuantity::Eps, [&](double xi, double v) { return xi + (1 - s) * v; });
  // The score -eps / s: field_lines draws the negative of what it is given, so the field gives eps / s.
  expect(FieldQuantity::Score, [&](double xi, double v) { return (xi + (1 - s) * v) / s; });
}

TEST(FieldView, AnEpsilonNetworkTakesThePathsFieldAtItsTimestep) {
  const DiffusionModel m = constant_output_model(0, 0);
  StepTable table;
  table.t = {700, 400};
  const FieldLevel f = field_level(m, table, 5);  // past the last step: the last step's level
  EXPECT_TRUE(f.path_eps);
  EXPECT_EQ(f.t, 400);
  const double abar = m.schedule.alphas_cumprod[400], sigma = std::sqrt(1 - abar);
  const std::vector<float> x = {3.0f, 4.0f};
  std::vector<bool> asked_x0;
  const PathField path = [&](const float* p, int n, int t, bool x0, float* o) {
    EXPECT_EQ(t, 400);
    asked_x0.push_back(x0);
    for (int i = 0; i < 2 * n; ++i) o[i] = x0 ? -p[i] : 2 * p[i];  // eps = 2 x; x0 = -x
  };
  std::vector<float> out(2);
  EXPECT_NEAR(eval_field(m, f, FieldQuantity::Eps, x.data(), 1, out.data(), path), 10.0, 1e-5);  // |(6, 8)|
  EXPECT_EQ(out, (std::vector<float>{6, 8}));
  eval_field(m, f, FieldQuantity::Output, x.data(), 1, out.data(), path);
  EXPECT_EQ(out, (std::vector<float>{6, 8}));
  const double largest = eval_field(m, f, FieldQuantity::Score, x.data(), 1, out.data(), path);
  EXPECT_NEAR(out[0], 6 / sigma, 1e-4 / sigma);
  EXPECT_NEAR(out[1], 8 / sigma, 1e-4 / sigma);
  EXPECT_NEAR(largest, 10 / sigma, 1e-4 / sigma);
  eval_field(m, f, FieldQuantity::X0, x.data(), 1, out.data(), path);
  EXPECT_EQ(out, (std::vector<float>{-3, -4}));  // the path's own x0
  EXPECT_EQ(asked_x0, (std::vector<bool>{false, false, false, true}));
}

TEST(FieldView, AMixtureAtZeroSignalGivesItsMeanAndTheNoise) {
  DiffusionModel m = constant_output_model(0, 0);
  m.mixture = GaussianMixture{2, 2, {1.0, 0.0, -1.0, 2.0}, {0.1, 0.2}, {0.25, 0.75}};
  FieldLevel f;
  f.family.family = Family::Flow;
  f.level = NoiseLevel::flow(1.0);  // s = 1: x is the noise
  const std::vector<float> x = {0.3f, -0.7f};
  const PathField no_path = [](const float*, int, int, bool, float*) { FAIL() << "a family table: no path"; };
  std::vector<float> out(2);
  eval_field(m, f, FieldQuantity::X0, x.data(), 1, out.data(), no_path);
  EXPECT_NEAR(out[0], 0.25 * 1 + 0.75 * -1, 1e-6);  // the mixture's mean
  EXPECT_NEAR(out[1], 0.25 * 0 + 0.75 * 2, 1e-6);
  eval_field(m, f, FieldQuantity::Eps, x.data(), 1, out.data(), no_path);
  EXPECT_NEAR(out[0], 0.3, 1e-6);
  EXPECT_NEAR(out[1], -0.7, 1e-6);
  eval_field(m, f, FieldQuantity::Output, x.data(), 1, out.data(), no_path);  // v = eps - x0
  EXPECT_NEAR(out[0], 0.3 - (-0.5), 1e-6);
  EXPECT_NEAR(out[1], -0.7 - 1.5, 1e-6);
}

}  // namespace
}  // namespace diffscope
