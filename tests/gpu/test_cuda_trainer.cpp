// test_cuda_trainer.cpp — the CUDA trainer (gpu/cuda_trainer.h) against the CPU trainer (train/trainer.h) from the
// same seed: one step's gradients (Adam's first moment after step 1 is (1 - beta1) g) and second moments against a
// float64 reference on the same batch, the parameters and the EMA after 10 steps, the batch losses, resuming
// (10 steps = 5 + set_state + 5, bit for bit), the CUDA graph against eager launches (bit for bit), and bf16 autocast's
// gradient within bfloat16 rounding. Skipped without a CUDA device.
//
// Tolerances come from float32 rounding, measured rather than guessed: the CPU trainer's own float32 error against
// the float64 reference (the same batch, the same parameters) is the scale, and the GPU's error may be a small
// multiple of it (cuBLAS sums in another order; an order-of-summation error has the same size as the CPU's, so
// 10x the CPU's error plus 1e-6 for its own float32 rounding of values near 0 passes any correct summation and fails
// a wrong term, which is O(1)).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "base/errors.h"
#include "gpu/cuda_backend.h"
#include "gpu/cuda_trainer.h"
#include "gpu_test_util.h"
#include "train/mlp.h"
#include "train/trainer.h"

namespace diffscope::train {
namespace {

// Two noisy interleaved half circles (the moons' shape), deterministic, prepared as `diffscope train` does.
TrainData moons_data(int n) {
  std::vector<float> raw(size_t(n) * 2);
  for (int i = 0; i < n; ++i) {
    const double a = M_PI * double(i % (n / 2)) / double(n / 2), jitter = 0.05 * std::sin(37.0 * i);
    const bool upper = i < n / 2;
    raw[size_t(2 * i)] = float(upper ? std::cos(a) + jitter : 1 - std::cos(a) - jitter);
    raw[size_t(2 * i + 1)] = float(upper ? std::sin(a) - jitter : 0.5 - std::sin(a) + jitter);
  }
  DataOptions o;
  o.holdout = 0.1;
  return prepare_train_data(std::move(raw), n, 2, o, "moons (test)", [](const std::string& k) { return k; });
}

TrainConfig small_config(Objective obj) {
  TrainConfig c;
  c.objective = obj;
  c.hidden = 64;
  c.batch = 1000;  // two CPU blocks, the second partial; four loss partials on the GPU
  c.steps = 100;
  c.warmup = 3;
  c.seed = 1234;
  if (obj == Objective::Flow) {
    c.time_sampling = TimeSampling::LogitNormal;
    c.weighting = LossWeighting::MinSnr;
  }
  return c;
}

double rel(const std::vector<float>& a, const std::vector<double>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i])) return INFINITY;
    num += (a[i] - ref[i]) * (a[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / den);
}

// The float64 gradient of step 0's batch at the initial parameters (train::build_batch<double>, mlp.h in double).
std::vector<double> float64_gradient(const TrainConfig& c, const TrainData& d) {
  const MlpLayout L(d.dim, c.hidden);
  const TrainState s0 = initial_state(L, c.seed);
  const std::vector<double> p(s0.params.begin(), s0.params.end());
  MlpMat<double> u(c.batch, d.dim + 1), y(c.batch, d.dim);
  std::vector<double> w, grad(L.size);
  build_batch<double>(c, level_table(c), d, 0, 0, u, y, w);
  MlpWorkspace<double> ws;
  mlp_forward(L, p.data(), u, ws);
  mlp_backward(L, p.data(), u, y, c.weighting == LossWeighting::None ? nullptr : w.data(), ws, grad.data());
  return grad;
}

std::vector<float> gradient_of(const TrainState& after_one_step, const TrainConfig& c) {
  std::vector<float> g(after_one_step.adam_m.size());
  for (size_t i = 0; i < g.size(); ++i) g[i] = after_one_step.adam_m[i] / float(1 - c.beta1);
  return g;
}

class CudaTrainer : public ::testing::TestWithParam<Objective> {};

TEST_P(CudaTrainer, OneStepGradientMatchesFloat64AsTheCpuTrainerDoes) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = small_config(GetParam());
  const TrainData d = moons_data(4000);
  auto cpu = make_cpu_trainer(c, d);
  auto gpu = gpu::make_cuda_trainer(c, d);
  const double loss_cpu = cpu->step(), loss_gpu = gpu->step();
  const std::vector<double> g64 = float64_gradient(c, d);
  const double e_cpu = rel(gradient_of(cpu->state(), c), g64), e_gpu = rel(gradient_of(gpu->state(), c), g64);
  EXPECT_LT(e_cpu, 1e-4) << "the CPU trainer's own float32 error";
  EXPECT_LE(e_gpu, 10 * e_cpu + 1e-6) << "GPU " << e_gpu << ", CPU " << e_cpu;
  EXPECT_NEAR(loss_gpu, loss_cpu, 1e-5 * loss_cpu);
  EXPECT_EQ(gpu->steps_done(), 1);
}

TEST_P(CudaTrainer, TenStepsFollowTheCpuTrainer) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = small_config(GetParam());
  const TrainData d = moons_data(4000);
  auto cpu = make_cpu_trainer(c, d);
  auto gpu = gpu::make_cuda_trainer(c, d);
  const TrainState s0 = cpu->state();
  std::vector<double> l_cpu(10), l_gpu(10);
  cpu->run_steps(10, l_cpu.data());
  gpu->run_steps(10, l_gpu.data());
  for (int i = 0; i < 10; ++i) EXPECT_NEAR(l_gpu[size_t(i)], l_cpu[size_t(i)], 1e-4 * l_cpu[size_t(i)]) << "step " << i;
  const TrainState a = cpu->state(), b = gpu->state();
  ASSERT_EQ(b.step, 10);
  // Adam moves each parameter by about lr a step whatever the gradient's size, so the measure is the difference
  // against the distance moved: an element whose gradient is within rounding of 0 may move either way (its share is
  // a few lr of the total), a wrong gradient moves every element the wrong way (a relative difference near 1).
  double num = 0, den = 0, num_ema = 0;
  for (size_t i = 0; i < a.params.size(); ++i) {
    num += std::pow(double(b.params[i]) - a.params[i], 2);
    den += std::pow(double(a.params[i]) - s0.params[i], 2);
    num_ema += std::pow(double(b.ema[i]) - a.ema[i], 2);
  }
  EXPECT_LT(std::sqrt(num / den), 1e-2);
  EXPECT_LT(std::sqrt(num_ema / den), 1e-2);
}

TEST_P(CudaTrainer, ResumingIsBitForBitAndTheGraphEqualsEagerLaunches) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = small_config(GetParam());
  const TrainData d = moons_data(4000);
  auto whole = gpu::make_cuda_trainer(c, d);
  std::vector<double> losses(10);
  whole->run_steps(10, losses.data());
  auto first = gpu::make_cuda_trainer(c, d);
  for (int i = 0; i < 5; ++i) first->step();
  auto second = gpu::make_cuda_trainer(c, d);
  second->set_state(first->state());
  second->run_steps(5, losses.data());
  gpu::CudaTrainerOptions eager_options;
  eager_options.graph = false;
  auto eager = gpu::make_cuda_trainer(c, d, eager_options);
  eager->run_steps(10, losses.data());
  const TrainState a = whole->state(), b = second->state(), e = eager->state();
  ASSERT_EQ(b.step, 10);
  for (const TrainState* s : {&b, &e}) {
    EXPECT_EQ(0, std::memcmp(a.params.data(), s->params.data(), a.params.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(a.adam_v.data(), s->adam_v.data(), a.adam_v.size() * sizeof(float)));
    EXPECT_EQ(0, std::memcmp(a.ema.data(), s->ema.data(), a.ema.size() * sizeof(float)));
  }
}

// bf16 autocast: the GEMM operands rounded to bfloat16 (unit roundoff 2^-8 = 3.9e-3); a gradient is a sum of
// products of two rounded operands through two layers, about 3 roundings of 2^-9 each on average, so a relative
// error of a few 1e-3 is expected and 3e-2 (8x the unit roundoff) fails only a wrong term.
TEST_P(CudaTrainer, Bf16AutocastGradientIsWithinBfloat16Rounding) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = small_config(GetParam());
  const TrainData d = moons_data(4000);
  gpu::CudaTrainerOptions o;
  o.precision = gpu::TrainPrecision::Bf16;
  auto gpu = gpu::make_cuda_trainer(c, d, o);
  EXPECT_STREQ(gpu->backend(), "cuda, bf16");
  gpu->step();
  EXPECT_LT(rel(gradient_of(gpu->state(), c), float64_gradient(c, d)), 3e-2);
}

INSTANTIATE_TEST_SUITE_P(Objectives, CudaTrainer, ::testing::Values(Objective::Epsilon, Objective::Flow),
                         [](const auto& info) { return std::string(objective_name(info.param)); });

TEST(CudaTrainerState, AStateOfAnotherShapeIsRefused) {
  SKIP_WITHOUT_CUDA();
  const TrainConfig c = small_config(Objective::Epsilon);
  const TrainData d = moons_data(400);
  auto gpu = gpu::make_cuda_trainer(c, d);
  TrainState s = gpu->state();
  s.adam_v.pop_back();
  EXPECT_THROW(gpu->set_state(s), InvalidInput);
}

}  // namespace
}  // namespace diffscope::train
