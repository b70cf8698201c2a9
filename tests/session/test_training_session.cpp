// test_training_session.cpp — the app's training run without the window (session/training/): the ideal
// (empirical) denoiser against its closed form recomputed here in long double, the brush's points and undo, the
// panel's settings and their refusals, and a small run on the CPU whose loss falls and which resumes.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "base/errors.h"
#include "session/training/brush_points.h"
#include "base/philox_normal.h"
#include "session/training/ideal_denoiser.h"
#include "session/training/level_loss.h"
#include "session/training/training_session.h"
#include "train/mlp.h"

namespace diffscope {
namespace {

// E[x0 | x] = sum_i w_i d_i, w_i = exp(-|x - alpha d_i|^2 / (2 sigma^2)) / sum_j (...): directly, in long double
// (no shift by the largest exponent: the test's values keep every weight representable).
std::vector<long double> posterior_mean(const std::vector<float>& d, int dim, const std::vector<double>& x,
                                        double alpha, double sigma) {
  const size_t m = d.size() / dim, n = x.size() / dim;
  std::vector<long double> out(x.size(), 0.0L);
  for (size_t r = 0; r < n; ++r) {
    long double total = 0;
    for (size_t i = 0; i < m; ++i) {
      long double e2 = 0;
      for (int j = 0; j < dim; ++j) {
        const long double e = (long double)x[r * dim + j] - (long double)alpha * d[i * dim + j];
        e2 += e * e;
      }
      const long double w = std::exp(-e2 / (2.0L * sigma * sigma));
      total += w;
      for (int j = 0; j < dim; ++j) out[r * dim + j] += w * d[i * dim + j];
    }
    for (int j = 0; j < dim; ++j) out[r * dim + j] /= total;
  }
  return out;
}

TEST(IdealDenoiser, EqualsTheSoftmaxWeightedMeanOfTheDataInLongDouble) {
  const int dim = 3;
  std::vector<float> data;
  for (int i = 0; i < 40; ++i)
    for (int j = 0; j < dim; ++j) data.push_back(float(std::sin(1.3 * i + 0.7 * j) * (1 + 0.1 * j)));
  std::vector<double> x;
  for (int r = 0; r < 25; ++r)
    for (int j = 0; j < dim; ++j) x.push_back(1.5 * std::cos(0.9 * r - 0.4 * j));
  for (const auto& [alpha, sigma] : {std::pair{0.2, 0.98}, {0.8, 0.6}, {0.99, 0.14}, {1.0, 0.3}}) {
    std::vector<double> got;
    ideal_denoiser(data, dim, x, alpha, sigma, got);
    const std::vector<long double> want = posterior_mean(data, dim, x, alpha, sigma);
    for (size_t k = 0; k < x.size(); ++k) EXPECT_NEAR(got[k], double(want[k]), 1e-12) << alpha << " " << k;
  }
}

TEST(IdealDenoiser, AtATinyNoiseLevelGivesTheNearestRowAndSamplesOfOneRowAreThatRow) {
  const std::vector<float> data = {0, 0, 3, 1, -2, 4};
  std::vector<double> x = {2.8, 0.9, -1, 3, 0.1, -0.2}, x0;
  ideal_denoiser(data, 2, x, 1.0, 1e-3, x0);  // weights 1 on the nearest row, e^-(1e5 or more) elsewhere
  const std::vector<double> nearest = {3, 1, -2, 4, 0, 0};
  for (size_t k = 0; k < x.size(); ++k) EXPECT_DOUBLE_EQ(x0[k], nearest[k]);
  // One row: E[x0 | x] is that row at every level, so every sample ends on it.
  const std::vector<float> one = {0.5f, -1.25f};
  const std::vector<float> z = {1, 2, -3, 0.5f, 0, 0};
  const std::vector<float> s = ideal_samples(one, 2, z, {{0.01, 0.99995}, {0.5, 0.866}, {0.9, 0.43}});
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_FLOAT_EQ(s[2 * r], 0.5f);
    EXPECT_FLOAT_EQ(s[2 * r + 1], -1.25f);
  }
}

// A network whose weights are all 0 outputs 0, so its loss at every level is the mean square of the target: eps
// (epsilon; the documented noise stream) or x0 (sample), computed here.
TEST(LevelLoss, ZeroWeightsGiveTheMeanSquareOfTheTargetAtEveryLevel) {
  train::TrainData d;
  d.dim = 3;
  d.n_train = 300;
  for (int i = 0; i < 300 * 3; ++i) d.train.push_back(float(std::sin(0.37 * i)));
  train::TrainConfig c;
  c.hidden = 64;
  c.seed = 7;
  const std::vector<float> zero(train::MlpLayout(3, 64).size, 0.0f);
  double eps2 = 0, x2 = 0;
  for (int r = 0; r < kLevelRows; ++r) {
    float z[3];
    philox_normal_row(7, uint32_t(r), 0xC0FFEEu, 3, z);
    for (int k = 0; k < 3; ++k) eps2 += double(z[k]) * z[k], x2 += double(d.train[size_t(r) * 3 + k]) * d.train[size_t(r) * 3 + k];
  }
  eps2 /= kLevelRows * 3.0, x2 /= kLevelRows * 3.0;
  const std::vector<float> e = loss_per_level(c, d, zero);
  c.objective = train::Objective::Sample;
  const std::vector<float> x = loss_per_level(c, d, zero);
  ASSERT_EQ(e.size(), size_t(kLevelBins));
  for (int j = 0; j < kLevelBins; ++j) {
    EXPECT_NEAR(e[size_t(j)], eps2, 1e-6 * eps2) << j;
    EXPECT_NEAR(x[size_t(j)], x2, 1e-6 * x2) << j;
  }
}

TEST(BrushPoints, DabsLieInTheirDiscEraseRemovesAndUndoGoesBackStepByStep) {
  BrushPoints b;
  b.add(1, 2, 0.5, 100);
  ASSERT_EQ(b.size(), 100);
  for (int64_t i = 0; i < b.size(); ++i) EXPECT_LE(std::hypot(b.xy()[2 * i] - 1, b.xy()[2 * i + 1] - 2), 0.5 + 1e-6);
  const std::vector<float> first = b.xy();
  b.begin_stroke();  // a stroke of three dabs is one undo step
  b.add(-3, 0, 0.2, 10);
  b.add(-3.1, 0, 0.2, 10);
  b.add(-3.2, 0, 0.2, 10);
  b.end_stroke();
  EXPECT_EQ(b.size(), 130);
  const int64_t removed = b.erase(1, 2, 0.25);
  EXPECT_GT(removed, 0);
  EXPECT_EQ(b.size(), 130 - removed);
  ASSERT_TRUE(b.undo());  // the erase
  EXPECT_EQ(b.size(), 130);
  ASSERT_TRUE(b.undo());  // the stroke
  EXPECT_EQ(b.xy(), first);
  ASSERT_TRUE(b.undo());  // the first dab
  EXPECT_EQ(b.size(), 0);
  EXPECT_FALSE(b.undo());
}

TEST(TrainSettings, BadValuesAreRefusedNamingTheKeyAndTheRange) {
  TrainSettings s;
  set_train_setting(s, "steps", "300");
  EXPECT_EQ(s.steps, 300);
  auto refused = [&](const std::string& k, const std::string& v, const std::string& part) {
    try {
      set_train_setting(s, k, v);
      ADD_FAILURE() << k << " = " << v << " was taken";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused("hidden", "32", "hidden = 32 is out of range; valid: an integer in [64, 512]");
  refused("steps", "1e3", "steps = 1e3");
  refused("lr", "0", "lr = 0 is out of range");
  refused("objective", "x0", "objective");
  refused("source", "camera", "valid: brush, bundled, npy");
  refused("stepz", "1", "train setting 'stepz' is unknown");
  EXPECT_EQ(s.steps, 300);
}

void wait_for(const TrainingSession& t) {
  for (int k = 0; k < 6000 && t.running(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_FALSE(t.running());
}

TEST(TrainingSession, ABrushRunOnTheCpuLowersTheLossKeepsCheckpointsAndAStoppedRunResumes) {
  TrainingSession t;
  EXPECT_THROW(t.start(TrainSettings()), InvalidInput);  // no points drawn
  t.brush().add(-1, 0, 0.2, 200);
  t.brush().add(1, 0.5, 0.2, 200);
  TrainSettings s;
  s.steps = 300, s.batch = 256, s.hidden = 64, s.preview_every = 50;
  t.start(s);
  t.stop();  // asked at once: the run ends after its current step (a fast machine may have finished it)
  wait_for(t);
  const int64_t stopped_at = t.progress().step;
  EXPECT_EQ(t.resume(), stopped_at < 300);
  wait_for(t);
  EXPECT_EQ(t.progress().step, 300);
  const std::vector<float> loss = t.losses();
  ASSERT_EQ(loss.size(), 300u);
  double first = 0, last = 0;
  for (int k = 0; k < 20; ++k) first += loss[k], last += loss[280 + k];
  EXPECT_LT(last, 0.6 * first);
  // Every 50 steps, and the step the run stopped at.
  const std::vector<int64_t> ck = t.checkpoint_steps();
  for (int64_t k = 50; k <= 300; k += 50) EXPECT_NE(std::find(ck.begin(), ck.end(), k), ck.end()) << k;
  EXPECT_EQ(ck.back(), 300);
  EXPECT_LE(ck.size(), 7u);
  const std::vector<std::vector<float>> levels = t.level_losses();
  ASSERT_EQ(levels.size(), ck.size());
  for (const auto& l : levels) EXPECT_EQ(l.size(), size_t(kLevelBins));
  EXPECT_EQ(t.ideal().size(), size_t(TrainingSession::kIdealSamples) * 2);  // 360 rows <= kIdealMaxRows
  EXPECT_FALSE(t.resume());  // a finished run is done
  EXPECT_TRUE(t.progress().error.empty());
  EXPECT_GT(t.model_bytes(0).size(), 1000u);
}

}  // namespace
}  // namespace diffscope
