// test_cpu_backend.cpp — the CPU reference (cpu_reference.h) and the CPU backend against a plain scalar
// float64 implementation of SEMANTICS §2-§5 written out in this file (loops, no Eigen), per-row t_start
// and frozen rows (§4), the noise layout (§7), start states (§3) and the precision refusal (§8).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/arg_error.h"
#include "base/errors.h"
#include "base/philox_normal.h"
#include "cli/cli_util.h"
#include "diffusion/cpu_reference.h"
#include "diffusion/sampling.h"
#include "model_fixtures.h"
#include "run/backend.h"
#include "run/backend.h"

namespace diffscope {
namespace {

// eps of one row at timestep t (SEMANTICS §2), scalar float64.
std::vector<double> naive_eps(const EpsNet& n, const std::vector<double>& x, int t, int T) {
  std::vector<double> u(x), h1(n.hidden), h2(n.hidden), e(n.dim);
  u.push_back(double(t) / T);
  auto silu = [](double z) { return z / (1 + std::exp(-z)); };
  for (int i = 0; i < n.hidden; ++i) {
    double s = n.b1[i];
    for (int j = 0; j <= n.dim; ++j) s += double(n.W1[i * (n.dim + 1) + j]) * u[j];
    h1[i] = silu(s);
  }
  for (int i = 0; i < n.hidden; ++i) {
    double s = n.b2[i];
    for (int j = 0; j < n.hidden; ++j) s += double(n.W2[i * n.hidden + j]) * h1[j];
    h2[i] = silu(s);
  }
  for (int i = 0; i < n.dim; ++i) {
    double s = n.b3[i];
    for (int j = 0; j < n.hidden; ++j) s += double(n.W3[i * n.hidden + j]) * h2[j];
    e[i] = s;
  }
  return e;
}

// SEMANTICS §4 for one row: S ddpm-mean steps x <- c1 (x - c2 eps), frozen once t < 0. Returns S+1 frames.
std::vector<std::vector<double>> naive_denoise_row(const DiffusionModel& m, std::vector<double> x, int64_t t_start,
                                                   int S) {
  std::vector<std::vector<double>> frames{x};
  for (int k = 0; k < S; ++k) {
    const int64_t t = t_start - k;
    if (t >= 0) {
      const auto e = naive_eps(m.net, x, int(t), m.schedule.T);
      const double c1 = m.schedule.sqrt_recip_alphas[t], c2 = m.schedule.coef_eps[t];
      for (int d = 0; d < m.net.dim; ++d) x[d] = c1 * (x[d] - c2 * e[d]);
    }
    frames.push_back(x);
  }
  return frames;
}

TEST(CpuReference, MixedTStartBatchEqualsEachRowAloneAndFreezes) {
  const DiffusionModel m = test::random_model(3, 32, 11);
  const std::vector<int64_t> t_start{999, 500, 1, 0};
  const int B = 4, dim = 3, S = 1000;
  const std::vector<float> x0 = test::random_values(B * dim, 5);
  std::vector<double> x(x0.begin(), x0.end());
  std::vector<double> traj(size_t(S + 1) * B * dim);
  cpu_ref::denoise<double>(m, x.data(), t_start.data(), B, S, traj.data());
  for (int b = 0; b < B; ++b) {
    const auto frames = naive_denoise_row(m, std::vector<double>(x0.begin() + b * dim, x0.begin() + (b + 1) * dim),
                                          t_start[b], S);
    for (int k = 0; k <= S; ++k) {
      for (int d = 0; d < dim; ++d) {
        const double got = traj[(size_t(k) * B + b) * dim + d], want = frames[k][d];
        ASSERT_NEAR(got, want, 1e-9 * (1 + std::abs(want))) << "row " << b << " frame " << k << " dim " << d;
        // Frozen after the step at t = 0 (frame t_start + 1): later frames repeat it bit for bit.
        if (k > t_start[b] + 1) ASSERT_EQ(got, traj[(size_t(t_start[b] + 1) * B + b) * dim + d]);
      }
    }
    for (int d = 0; d < dim; ++d) EXPECT_EQ(x[b * dim + d], traj[(size_t(S) * B + b) * dim + d]);
  }
  // Each row alone through the reference gives the same as in the batch.
  for (int b = 0; b < B; ++b) {
    std::vector<double> xr(x0.begin() + b * dim, x0.begin() + (b + 1) * dim);
    cpu_ref::denoise<double>(m, xr.data(), &t_start[b], 1, S, nullptr);
    for (int d = 0; d < dim; ++d) EXPECT_NEAR(xr[d], x[b * dim + d], 1e-12 * (1 + std::abs(xr[d])));
  }
}

TEST(CpuBackend, Fp32MatchesFloat64AtTheReferenceShape) {
  // The reference configuration: B = 8, dim = 64, hidden = 256, 16 steps, t_start in [15, 999].
  const DiffusionModel m = test::random_model(64, 256, 3);
  const int B = 8, dim = 64, S = 16;
  const std::vector<int64_t> t_start{999, 15, 500, 16, 731, 100, 42, 998};
  const std::vector<float> x0 = test::random_values(B * dim, 9);
  std::vector<double> want(B * dim);
  for (int b = 0; b < B; ++b) {
    const auto f = naive_denoise_row(m, std::vector<double>(x0.begin() + b * dim, x0.begin() + (b + 1) * dim),
                                     t_start[b], S);
    std::copy(f.back().begin(), f.back().end(), want.begin() + b * dim);
  }
  std::vector<float> x(x0);
  auto be = make_cpu_backend();
  be->denoise(m, x.data(), t_start.data(), B, S, nullptr, Precision::Fp32);
  EXPECT_LT(test::rel_frobenius(x, want), 1e-5);
  std::vector<double> xd(x0.begin(), x0.end());
  cpu_ref::denoise<double>(m, xd.data(), t_start.data(), B, S, nullptr);
  EXPECT_LT(test::rel_frobenius(xd, want), 1e-12);
}

TEST(CpuBackend, ManyBlocksAndFrozenRows) {
  // 600 rows span three 256-row blocks (two threads); t_start cycles so some rows freeze early.
  const DiffusionModel m = test::random_model(2, 64, 4);
  const int B = 600, dim = 2, S = 40;
  std::vector<int64_t> t_start(B);
  for (int b = 0; b < B; ++b) t_start[b] = (b * 37) % 1000;
  const std::vector<float> x0 = test::random_values(B * dim, 1);
  std::vector<float> x(x0), traj(size_t(S + 1) * B * dim);
  make_cpu_backend()->denoise(m, x.data(), t_start.data(), B, S, traj.data(), Precision::Fp32);
  std::vector<double> want(B * dim);
  for (int b = 0; b < B; ++b) {
    const auto f = naive_denoise_row(m, std::vector<double>(x0.begin() + b * dim, x0.begin() + (b + 1) * dim),
                                     t_start[b], S);
    std::copy(f.back().begin(), f.back().end(), want.begin() + b * dim);
  }
  EXPECT_LT(test::rel_frobenius(x, want), 1e-5);
  for (int i = 0; i < B * dim; ++i) EXPECT_EQ(traj[i], x0[i]);  // frame 0 is the input
}

TEST(CpuBackend, RefusesTensorCorePrecisions) {
  const DiffusionModel m = test::random_model(2, 8, 1);
  auto be = make_cpu_backend();
  std::vector<float> x{0.f, 0.f};
  int64_t t = 5;
  for (Precision p : {Precision::Tf32, Precision::Bf16}) {
    try {
      be->denoise(m, x.data(), &t, 1, 1, nullptr, p);
      FAIL() << "no throw";
    } catch (const ArgumentError& e) {
      EXPECT_EQ(e.arg, Arg::Precision);
      EXPECT_NE(e.message(cli::cli_flag).find("needs --backend cuda"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("needs backend cuda"), std::string::npos) << e.what();
    }
  }
  Mlp3Weights w;
  w.d0 = w.d1 = w.d2 = w.d3 = 1;
  w.W1 = w.W2 = w.W3 = {1.f};
  float y = 0;
  EXPECT_THROW(be->mlp3(w, x.data(), 1, &y, Precision::Bf16), InvalidInput);
}

TEST(CpuBackend, RunStepsNoiseFollowsRowAndTimestep) {
  // eps = 0: one ddpm step at t is x <- c1[t] x + sigma[t] z, z = Philox(seed, row, step_key t) (SEMANTICS §7).
  const DiffusionModel m = test::constant_eps_model(5, 8, 0.f);
  const int B = 7, dim = 5;
  const uint64_t seed = 0x1234567890ULL;
  const StepTable tab = build_step_table(m.schedule, Sampler::Ddpm, 600, 3);  // t = 600, 599, 598
  const std::vector<float> x0 = test::random_values(B * dim, 2);
  std::vector<float> x(x0);
  auto be = make_cpu_backend();
  be->run_steps(m, tab, 1, 2, x.data(), B, seed, nullptr, Precision::Fp32, /*row_offset=*/100);
  for (int b = 0; b < B; ++b) {
    float z[dim];
    philox_normal_row(seed, 100 + b, 599, dim, z);
    for (int d = 0; d < dim; ++d) {
      const double want = m.schedule.sqrt_recip_alphas[599] * x0[b * dim + d] + m.schedule.posterior_sigma[599] * z[d];
      EXPECT_NEAR(x[b * dim + d], want, 1e-6);
    }
  }
}

TEST(CpuBackend, RunStepsSplitsAndSubBatchesAgree) {
  // Running steps [0,4) then [4,9) equals [0,9); frames hold the state after each step; rows 3..5 run as
  // their own batch with row_offset 3 give the same as in the full batch (noise does not depend on B).
  const DiffusionModel m = test::random_model(4, 16, 8);
  const int B = 9, dim = 4, N = 9;
  const StepTable tab = build_step_table(m.schedule, Sampler::Ddim, 800, N, 0.7);
  const std::vector<float> x0 = test::random_values(B * dim, 3);
  auto be = make_cpu_backend();
  std::vector<float> whole(x0), frames(size_t(N) * B * dim);
  be->run_steps(m, tab, 0, N, whole.data(), B, 77, frames.data(), Precision::Fp32);
  std::vector<float> split(x0);
  be->run_steps(m, tab, 0, 4, split.data(), B, 77, nullptr, Precision::Fp32);
  for (int i = 0; i < B * dim; ++i) EXPECT_EQ(split[i], frames[size_t(3) * B * dim + i]);
  be->run_steps(m, tab, 4, N, split.data(), B, 77, nullptr, Precision::Fp32);
  EXPECT_EQ(split, whole);
  for (int i = 0; i < B * dim; ++i) EXPECT_EQ(frames[size_t(N - 1) * B * dim + i], whole[i]);
  std::vector<float> sub(x0.begin() + 3 * dim, x0.begin() + 6 * dim);
  be->run_steps(m, tab, 0, N, sub.data(), 3, 77, nullptr, Precision::Fp32, 3);
  for (int i = 0; i < 3 * dim; ++i) EXPECT_NEAR(sub[i], whole[3 * dim + i], 1e-6 * (1 + std::abs(whole[3 * dim + i])));
}

TEST(CpuReference, Mlp3MatchesScalarLoops) {
  // Odd sizes (7 -> 33 -> 5 -> 3) and the reference sizes (48 -> 64 -> 40 -> 24), B across blocks.
  for (auto dims : {std::vector<int>{7, 33, 5, 3}, std::vector<int>{48, 64, 40, 24}}) {
    for (int B : {1, 16, 300}) {
      Mlp3Weights w;
      w.d0 = dims[0], w.d1 = dims[1], w.d2 = dims[2], w.d3 = dims[3];
      w.W1 = test::random_values(size_t(w.d1) * w.d0, 1);
      w.W2 = test::random_values(size_t(w.d2) * w.d1, 2);
      w.W3 = test::random_values(size_t(w.d3) * w.d2, 3);
      const std::vector<float> x = test::random_values(size_t(B) * w.d0, 4);
      std::vector<double> want(size_t(B) * w.d3);
      auto layer = [](const std::vector<double>& in, const std::vector<float>& W, int out_n, bool relu) {
        const int in_n = int(in.size());
        std::vector<double> o(out_n);
        for (int i = 0; i < out_n; ++i) {
          double s = 0;
          for (int j = 0; j < in_n; ++j) s += double(W[size_t(i) * in_n + j]) * in[j];
          o[i] = relu ? std::max(0.0, s) : s;
        }
        return o;
      };
      for (int b = 0; b < B; ++b) {
        std::vector<double> r(x.begin() + size_t(b) * w.d0, x.begin() + size_t(b + 1) * w.d0);
        r = layer(layer(layer(r, w.W1, w.d1, true), w.W2, w.d2, true), w.W3, w.d3, false);
        std::copy(r.begin(), r.end(), want.begin() + size_t(b) * w.d3);
      }
      std::vector<double> xd(x.begin(), x.end()), yd(want.size());
      cpu_ref::mlp3<double>(w, xd.data(), B, yd.data());
      EXPECT_LT(test::rel_frobenius(yd, want), 1e-13);
      std::vector<float> y(want.size());
      make_cpu_backend()->mlp3(w, x.data(), B, y.data(), Precision::Fp32);
      EXPECT_LT(test::rel_frobenius(y, want), 1e-5);
    }
  }
}

TEST(Sampling, StartStatesFollowSemantics) {
  DiffusionModel m = test::constant_eps_model(3, 4, 0.f);
  const int n = 5, dim = 3;
  const uint64_t seed = 9;
  std::vector<float> x(n * dim);
  fill_start_noise(m, seed, n, x.data(), 10);
  for (int i = 0; i < n; ++i) {
    float z[dim];
    philox_normal_row(seed, 10 + i, 1000, dim, z);  // step_key T for the starting noise
    for (int d = 0; d < dim; ++d) EXPECT_EQ(x[i * dim + d], z[d]);
  }
  EXPECT_THROW(fill_start_from_data(m, 500, seed, n, x.data()), InvalidInput);  // no data_samples
  m.n_data = 2;
  m.data_samples = {1.f, 2.f, 3.f, -1.f, -2.f, -3.f};
  fill_start_from_data(m, 500, seed, n, x.data());
  const double abar = m.schedule.alphas_cumprod[500];
  for (int i = 0; i < n; ++i) {
    float z[dim];
    philox_normal_row(seed, i, 1001, dim, z);  // step_key T + 1 for "start from data"
    for (int d = 0; d < dim; ++d) {
      const double want = std::sqrt(abar) * m.data_samples[(i % 2) * dim + d] + std::sqrt(1 - abar) * z[d];
      EXPECT_NEAR(x[i * dim + d], want, 1e-6);
    }
  }
}

}  // namespace
}  // namespace diffscope
