// test_trainer.cpp — the CPU trainer (app/train/): gradients against central finite differences in float64, one
// Adam step against Kingma & Ba's Algorithm 1, the objectives' targets against their closed forms and the families'
// output maps, the learning-rate schedule, determinism and resuming, and the saved file read back by the loader.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "diffusion/cpu_reference.h"
#include "formats/safetensors.h"
#include "model/family.h"
#include "model/model.h"
#include "model/model_load.h"
#include "platform/cpu_threads.h"
#include "io_test_util.h"
#include "train/adam.h"
#include "train/mlp.h"
#include "train/objective.h"
#include "train/train_file.h"
#include "train/train_rng.h"
#include "train/train_run.h"
#include "train/trainer.h"

namespace diffscope::train {
namespace {

template <class Real>
MlpMat<Real> random_matrix(int rows, int cols, std::mt19937& g) {
  std::normal_distribution<double> n(0.0, 1.0);
  MlpMat<Real> m(rows, cols);
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) m(i, j) = Real(n(g));
  return m;
}

// The weighted loss alone (float64), for the finite differences.
double loss_at(const MlpLayout& L, const std::vector<double>& p, const MlpMat<double>& u, const MlpMat<double>& y,
               const std::vector<double>& w) {
  MlpWorkspace<double> ws;
  mlp_forward(L, p.data(), u, ws);
  double s = 0;
  for (int b = 0; b < u.rows(); ++b) s += w[size_t(b)] * (ws.out.row(b) - y.row(b)).squaredNorm();
  return s / double(u.rows() * L.dim);
}

TEST(Trainer, BackwardMatchesCentralFiniteDifferencesInFloat64) {
  const MlpLayout L(3, 7);
  std::mt19937 g(1);
  std::uniform_real_distribution<double> uni(-0.8, 0.8);
  std::vector<double> p(L.size), w = {0.5, 1.0, 2.0, 0.25, 1.5};
  for (double& v : p) v = uni(g);
  const MlpMat<double> u = random_matrix<double>(5, 4, g), y = random_matrix<double>(5, 3, g);
  MlpWorkspace<double> ws;
  std::vector<double> grad(L.size);
  mlp_forward(L, p.data(), u, ws);
  const double loss = mlp_backward(L, p.data(), u, y, w.data(), ws, grad.data());
  EXPECT_NEAR(loss, loss_at(L, p, u, y, w), 1e-14);
  const double h = 1e-6;
  for (size_t i = 0; i < L.size; ++i) {
    std::vector<double> a = p, b = p;
    a[i] += h;
    b[i] -= h;
    const double fd = (loss_at(L, a, u, y, w) - loss_at(L, b, u, y, w)) / (2 * h);
    EXPECT_NEAR(grad[i], fd, 1e-8 * (1 + std::fabs(fd))) << "parameter " << i;
  }
}

TEST(Trainer, Float32BackwardIsTheFloat64OneWithinRounding) {
  const MlpLayout L(2, 64);
  std::mt19937 g(2);
  std::uniform_real_distribution<double> uni(-0.3, 0.3);
  std::vector<double> p(L.size);
  for (double& v : p) v = uni(g);
  const std::vector<float> pf(p.begin(), p.end());
  const MlpMat<double> u = random_matrix<double>(64, 3, g), y = random_matrix<double>(64, 2, g);
  const MlpMat<double> ud = u.cast<float>().cast<double>(), yd = y.cast<float>().cast<double>();
  std::vector<double> gd(L.size);
  std::vector<float> gf(L.size);
  std::vector<double> pd(pf.begin(), pf.end());
  MlpWorkspace<double> wsd;
  MlpWorkspace<float> wsf;
  mlp_forward(L, pd.data(), ud, wsd);
  mlp_backward(L, pd.data(), ud, yd, static_cast<const double*>(nullptr), wsd, gd.data());
  const MlpMat<float> uf = u.cast<float>(), yf = y.cast<float>();
  mlp_forward(L, pf.data(), uf, wsf);
  mlp_backward(L, pf.data(), uf, yf, static_cast<const float*>(nullptr), wsf, gf.data());
  double err = 0, norm = 0;
  for (size_t i = 0; i < L.size; ++i) {
    err += (gf[i] - gd[i]) * (gf[i] - gd[i]);
    norm += gd[i] * gd[i];
  }
  EXPECT_LT(std::sqrt(err / norm), 1e-5);
}

// Kingma & Ba 2015 Algorithm 1, written out: m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t),
// p -= lr m_hat / (sqrt(v_hat) + eps).
TEST(Trainer, AdamStepsEqualAlgorithm1) {
  const double lr = 1e-3, b1 = 0.9, b2 = 0.999, eps = 1e-8;
  std::vector<double> p = {0.5, -1.0, 2.0, 0.0}, m(4, 0.0), v(4, 0.0);
  const std::vector<double> g1 = {0.1, -2.0, 1e-9, 3.0}, g2 = {-0.4, 1.0, 0.5, 3.0};
  const std::vector<double> p0 = p;
  adam_step(p.data(), g1.data(), m.data(), v.data(), 4, 1, lr, b1, b2, eps);
  for (size_t i = 0; i < 4; ++i)  // step 1: m_hat = g, v_hat = g^2
    EXPECT_NEAR(p[i], p0[i] - lr * g1[i] / (std::fabs(g1[i]) + eps), 1e-15) << i;
  adam_step(p.data(), g2.data(), m.data(), v.data(), 4, 2, lr, b1, b2, eps);
  for (size_t i = 0; i < 4; ++i) {
    const double mm = b1 * (1 - b1) * g1[i] + (1 - b1) * g2[i];
    const double vv = b2 * (1 - b2) * g1[i] * g1[i] + (1 - b2) * g2[i] * g2[i];
    const double m_hat = mm / (1 - b1 * b1), v_hat = vv / (1 - b2 * b2);
    const double p1 = p0[i] - lr * g1[i] / (std::fabs(g1[i]) + eps);
    EXPECT_NEAR(p[i], p1 - lr * m_hat / (std::sqrt(v_hat) + eps), 1e-14) << i;
  }
}

TEST(Trainer, EmaDecayWarmsUpAndAverages) {
  EXPECT_DOUBLE_EQ(ema_decay(0.9995, 0), 0.1);
  EXPECT_DOUBLE_EQ(ema_decay(0.9995, 90), 91.0 / 100.0);
  EXPECT_DOUBLE_EQ(ema_decay(0.9995, 100000), 0.9995);
  float e = 1.0f;
  const float p = 3.0f;
  ema_update(&e, &p, 1, 0.75);
  EXPECT_FLOAT_EQ(e, 1.5f);
}

TEST(Trainer, TargetsAreTheClosedFormsAndMapBackToTheData) {
  const double x0[2] = {0.7, -1.2}, eps[2] = {-0.3, 0.9};
  const double alpha = 0.6, sigma = 0.8;
  const struct { Objective o; const char* name; double want[2]; } cases[] = {
      {Objective::Epsilon, "epsilon", {-0.3, 0.9}},
      {Objective::Sample, "sample", {0.7, -1.2}},
      {Objective::VPrediction, "v_prediction", {0.6 * -0.3 - 0.8 * 0.7, 0.6 * 0.9 - 0.8 * -1.2}},
      {Objective::Flow, "flow", {-0.3 - 0.7, 0.9 + 1.2}}};
  for (const auto& c : cases) {
    double o[2];
    objective_target<double>(c.o, x0, eps, alpha, sigma, 2, o);
    // flow's level: alpha = 1 - s, sigma = s; the VP ones alpha^2 + sigma^2 = 1.
    const NoiseLevel lv = c.o == Objective::Flow ? NoiseLevel::flow(0.4) : NoiseLevel{alpha, sigma, 0};
    if (c.o == Objective::Flow) objective_target<double>(c.o, x0, eps, lv.alpha, lv.sigma, 2, o);
    const OutputMap m = output_map(family_from_metadata({{"prediction_type", c.name}}, "test"), lv);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(o[i], c.want[i], 1e-15) << c.name;
      const double x = lv.alpha * x0[i] + lv.sigma * eps[i];
      EXPECT_NEAR(m.dx * x + m.d_out * o[i], x0[i], 1e-12) << c.name << ": D";
      EXPECT_NEAR(m.ex * x + m.e_out * o[i], eps[i], 1e-12) << c.name << ": eps";
    }
  }
}

TEST(Trainer, MinSnrWeightIsHangEtAlsForEpsilon) {
  TrainConfig c;
  c.weighting = LossWeighting::MinSnr;
  c.snr_gamma = 5;
  const double a = std::sqrt(0.2), s = std::sqrt(0.8);  // SNR 0.25
  EXPECT_NEAR(loss_weight(c, a, s), 1.0, 1e-12);        // min(SNR, 5) / SNR
  const double a2 = std::sqrt(0.99), s2 = std::sqrt(0.01);  // SNR 99
  EXPECT_NEAR(loss_weight(c, a2, s2), 5.0 / 99.0, 1e-12);
  c.objective = Objective::VPrediction;
  EXPECT_NEAR(loss_weight(c, a2, s2), 5.0 / 100.0, 1e-12);  // min(SNR, 5) / (SNR + 1)
  c.weighting = LossWeighting::None;
  EXPECT_EQ(loss_weight(c, a2, s2), 1.0);
}

TEST(Trainer, LearningRateWarmsUpThenDecaysByACosine) {
  TrainConfig c;
  c.steps = 1100;
  c.lr = 1e-3;
  c.final_lr_frac = 0.01;
  EXPECT_EQ(c.warmup_steps(), 110);
  EXPECT_DOUBLE_EQ(learning_rate(c, 0), 1e-3 / 110);
  EXPECT_DOUBLE_EQ(learning_rate(c, 109), 1e-3);
  EXPECT_NEAR(learning_rate(c, 110 + 495), 1e-3 * (0.01 + 0.99 * 0.5), 1e-15);
  EXPECT_NEAR(learning_rate(c, 1100), 1e-5, 1e-18);
}

TEST(Trainer, LevelsAreUniformOrLogitNormal) {
  TrainConfig c;
  const LevelTable vp = level_table(c);
  ASSERT_EQ(vp.sqrt_abar.size(), 1000u);
  int64_t t_sum = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const auto w = batch_row_words(0, 1, uint32_t(i));
    const Level lv = draw_level(c, vp, w[1], w[2]);
    const int t = int(std::lround(lv.time * 1000));
    ASSERT_GE(t, 0);
    ASSERT_LE(t, 999);
    EXPECT_DOUBLE_EQ(lv.alpha * lv.alpha + lv.sigma * lv.sigma, 1.0);
    t_sum += t;
  }
  EXPECT_NEAR(double(t_sum) / n, 499.5, 5.0);  // uniform on 0..999: mean 499.5, sd of the mean 2.0
  c.objective = Objective::Flow;
  c.time_sampling = TimeSampling::LogitNormal;
  c.logit_mean = 0.5;
  c.logit_std = 0.8;
  double sum = 0, sq = 0;
  for (int i = 0; i < n; ++i) {
    const auto w = batch_row_words(0, 2, uint32_t(i));
    const Level lv = draw_level(c, level_table(c), w[1], w[2]);
    ASSERT_GT(lv.time, 0.0);
    ASSERT_LT(lv.time, 1.0);
    EXPECT_EQ(lv.sigma, lv.time);
    EXPECT_EQ(lv.alpha, 1.0 - lv.time);
    const double logit = std::log(lv.time / (1 - lv.time));
    sum += logit;
    sq += logit * logit;
  }
  EXPECT_NEAR(sum / n, 0.5, 0.02);  // sd of the mean 0.8 / sqrt(20000) = 0.006
  EXPECT_NEAR(std::sqrt(sq / n - (sum / n) * (sum / n)), 0.8, 0.02);
}

TrainData small_data(int n = 256) {
  std::vector<float> raw(size_t(n) * 2);
  for (int i = 0; i < n; ++i) {
    raw[size_t(2 * i)] = float(std::cos(0.1 * i) * 3 + 1);
    raw[size_t(2 * i + 1)] = float(std::sin(0.1 * i));
  }
  DataOptions o;
  return prepare_train_data(raw, n, 2, o, "test", [](const std::string& k) { return k; });
}

TEST(Trainer, DataAreNormalisedAndSplit) {
  const TrainData d = small_data(200);
  EXPECT_EQ(d.n_held, 20);
  EXPECT_EQ(d.n_train, 180);
  double sum[2] = {0, 0}, sq = 0;
  for (const auto* v : {&d.train, &d.held})
    for (size_t i = 0; i < v->size(); ++i) sum[i % 2] += (*v)[i], sq += double((*v)[i]) * (*v)[i];
  EXPECT_NEAR(sum[0] / 200, 0, 1e-6);
  EXPECT_NEAR(sum[1] / 200, 0, 1e-6);
  EXPECT_NEAR(sq / 400, 1.0, 1e-5);  // mean per-coordinate variance 1
}

TEST(Trainer, TheSameSeedGivesTheSameWeightsAndResumingContinuesTheRun) {
  const TrainData d = small_data();
  TrainConfig c;
  c.hidden = 64;
  c.batch = 600;  // two blocks, the second partial
  c.steps = 6;
  c.objective = Objective::Flow;
  auto a = make_cpu_trainer(c, d), b = make_cpu_trainer(c, d);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(a->step(), b->step());
  EXPECT_EQ(a->state().ema, b->state().ema);
  auto first = make_cpu_trainer(c, d);
  for (int k = 0; k < 3; ++k) first->step();
  auto resumed = make_cpu_trainer(c, d);
  resumed->set_state(first->state());
  for (int k = 0; k < 3; ++k) resumed->step();
  EXPECT_EQ(resumed->state().params, a->state().params);
  EXPECT_EQ(resumed->state().adam_v, a->state().adam_v);
  c.seed = 1;
  auto other = make_cpu_trainer(c, d);
  EXPECT_NE(other->state().params, a->state().params);
}

TEST(Trainer, TheWeightsDoNotDependOnTheThreadCount) {
  const TrainData d = small_data();
  TrainConfig c;
  c.hidden = 64;
  c.batch = 1500;  // three blocks
  c.steps = 3;
  std::vector<float> params[2];
  for (int threads : {1, 2}) {
    set_cpu_threads(threads);
    auto t = make_cpu_trainer(c, d);
    for (int k = 0; k < 3; ++k) t->step();
    params[threads - 1] = t->state().params;
  }
  set_cpu_threads(0);
  EXPECT_EQ(params[0], params[1]);
}

// A backend that runs several steps a call (as the CUDA trainer does): the CPU trainer behind run_steps with a chunk of
// 4, recording the calls' sizes.
class ChunkedTrainer final : public Trainer {
 public:
  ChunkedTrainer(const TrainConfig& c, const TrainData& d, std::vector<int64_t>* calls)
      : m_inner(make_cpu_trainer(c, d)), m_calls(calls) {}
  const char* backend() const override { return "chunked"; }
  double step() override { return m_inner->step(); }
  void run_steps(int64_t n, double* losses) override {
    m_calls->push_back(n);
    Trainer::run_steps(n, losses);
  }
  int64_t steps_per_call() const override { return 4; }
  TrainState state() const override { return m_inner->state(); }
  int64_t steps_done() const override { return m_inner->steps_done(); }
  void set_state(const TrainState& s) override { m_inner->set_state(s); }

 private:
  std::unique_ptr<Trainer> m_inner;
  std::vector<int64_t>* m_calls;
};

// run_training gives a trainer up to its steps_per_call steps a call, stops each call at a periodic checkpoint, and
// still reports every step's progress in order; the weights are the step-by-step run's.
TEST(Trainer, RunTrainingChunksStepsAtCheckpointsAndReportsEveryStep) {
  const TrainData d = small_data();
  TrainConfig c;
  c.hidden = 64;
  c.batch = 64;
  c.steps = 10;
  test::TempDir dir;
  RunOptions o;
  o.out = dir.file("m.safetensors");
  o.checkpoint = dir.file("m.ckpt.safetensors");
  o.checkpoint_every = 3;
  std::vector<int64_t> calls, reported;
  o.make_trainer = [&](const TrainConfig& cc, const TrainData& dd) {
    return std::make_unique<ChunkedTrainer>(cc, dd, &calls);
  };
  const RunResult r = run_training(c, d, o, [&](int64_t done, int64_t, double, double) { reported.push_back(done); },
                                   nullptr);
  EXPECT_EQ(r.steps, 10);
  EXPECT_EQ(calls, (std::vector<int64_t>{3, 3, 3, 1}));
  EXPECT_EQ(reported, (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  auto plain = make_cpu_trainer(c, d);
  for (int k = 0; k < 10; ++k) plain->step();
  EXPECT_EQ(read_checkpoint(o.checkpoint, "checkpoint").state.params, plain->state().params);
}

TEST(Trainer, TheModelFileLoadsAndItsNetworkIsTheTrainersForward) {
  const TrainData d = small_data();
  // A cosine schedule too: its betas near 0.999 show float32 rounding, which the saved buffers must not disagree with.
  for (const auto& [obj, schedule] : {std::pair{Objective::Epsilon, "linear"}, std::pair{Objective::Epsilon, "cosine"},
                                      std::pair{Objective::Flow, "linear"}}) {
    TrainConfig c;
    c.schedule = schedule;
    c.hidden = 64;
    c.batch = 64;
    c.steps = 3;
    c.objective = obj;
    auto t = make_cpu_trainer(c, d);
    for (int k = 0; k < 3; ++k) t->step();
    const TrainState s = t->state();
    const std::string bytes = model_file_bytes(c, d, s, {});
    const DiffusionModel m = diffusion_model_from(SafetensorsFile::from_bytes(bytes, "trained"));
    EXPECT_TRUE(m.warnings.empty()) << schedule << ": " << m.warnings.front();
    EXPECT_EQ(m.n_data, d.n_held);
    EXPECT_EQ(m.family.family, obj == Objective::Flow ? Family::Flow : Family::Epsilon);
    EXPECT_EQ(m.family.time_input, obj == Objective::Flow ? TimeInput::S : TimeInput::TOverT);
    std::mt19937 g(3);
    MlpMat<float> u = random_matrix<float>(16, 3, g);
    MlpWorkspace<float> ws;
    mlp_forward(MlpLayout(2, 64), s.ema.data(), u, ws);
    cpu_ref::Scratch<double> sc;
    sc.U = u.cast<double>();
    cpu_ref::eps_rows(cpu_ref::NetT<double>(m.net), sc);
    EXPECT_LT((sc.E - ws.out.cast<double>()).cwiseAbs().maxCoeff(), 1e-5);
  }
}

}  // namespace
}  // namespace diffscope::train
