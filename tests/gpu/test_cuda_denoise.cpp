// test_cuda_denoise.cpp — the CUDA fused denoiser (every kernel path) against the CPU float64 reference
// (diffusion/cpu_reference.h) on fresh random inputs; outputs poisoned with NaN first. Tolerances: fp32 1e-5
// relative Frobenius (SEMANTICS §8); tf32/bf16 the errors measured on the H200 with headroom (docs/PERFORMANCE.md
// "Errors against float64").
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>

#include "base/arg_error.h"
#include "diffusion/cpu_reference.h"
#include "diffusion/sampling.h"
#include "diffusion/step_table.h"
#include "gpu/cuda_backend.h"
#include "gpu_test_util.h"
#include "kernels/kernels.h"

namespace diffscope {
namespace {

using kernels::DenoisePath;
using test::rel_err;

// Tolerances after S steps (relative Frobenius vs float64), about 4x the largest error measured on the H200 over
// this suite (docs/PERFORMANCE.md, "Errors against float64"): tf32 3e-5 (16 steps) / 2.5e-4 (1000 steps), bf16
// 8e-5 / 2.3e-3. fp16 (10 mantissa bits, as tf32) takes tf32's tolerances.
// Each test logs its measured error ("[measured] ...").
double tolerance(Precision p, int S) {
  switch (p) {
    case Precision::Fp32: return 1e-5;
    case Precision::Tf32:
    case Precision::F16: return S >= 1000 ? 1e-3 : 1e-4;
    case Precision::Bf16: return S >= 1000 ? 1e-2 : 5e-4;
  }
  return 0;
}

struct DenoiseCase {
  int B, dim, hidden, S;
  int t_mode;  // 0: all t_start = 999; 1: random mix in [0, 999] incl. rows that freeze; 2: all = S-1
  Precision p;
  DenoisePath path;
  int check_every = 1;  // compare every k-th row against float64 (large B)
};

std::string case_name(const DenoiseCase& c) {
  return "B" + std::to_string(c.B) + "_d" + std::to_string(c.dim) + "_h" + std::to_string(c.hidden) + "_S" +
         std::to_string(c.S) + "_t" + std::to_string(c.t_mode) + "_" + precision_name(c.p) + "_" +
         kernels::denoise_path_name(c.path);
}

// gtest prints parameters with PrintTo (else as raw bytes in test listings and failures).
void PrintTo(const DenoiseCase& c, std::ostream* os) { *os << case_name(c); }

class DenoiseVsFloat64 : public ::testing::TestWithParam<DenoiseCase> {};

TEST_P(DenoiseVsFloat64, MatchesReference) {
  SKIP_WITHOUT_CUDA();
  const DenoiseCase c = GetParam();
  if (c.path != DenoisePath::Auto && !test::path_supported(c.path, c.dim, c.hidden, c.B, c.p))
    GTEST_SKIP() << "path not supported for this shape";
  const uint32_t seed = static_cast<uint32_t>(std::hash<std::string>{}(case_name(c)));
  const DiffusionModel m = test::random_model(c.dim, c.hidden, seed);
  std::vector<float> x = test::random_x(size_t(c.B) * c.dim, seed + 1);
  std::vector<int64_t> t(c.B, 999);
  std::mt19937 rng(seed + 2);
  for (int b = 0; b < c.B; ++b) {
    if (c.t_mode == 1) t[b] = (b % 3 == 0) ? std::uniform_int_distribution<int>(0, std::min(999, c.S + 2))(rng)
                                           : std::uniform_int_distribution<int>(0, 999)(rng);
    if (c.t_mode == 2) t[b] = c.S - 1;
  }
  if (c.t_mode == 1 && c.B >= 4) t[0] = 0, t[1] = 1, t[2] = 999;
  const bool traj = size_t(c.B) * c.dim * (c.S + 1) <= (size_t(1) << 24);
  std::vector<float> trajectory(traj ? size_t(c.B) * c.dim * (c.S + 1) : 0, test::nan_f());
  std::vector<float> x_gpu = x;

  CudaBackend be;
  be.force_denoise_path(c.path);
  be.denoise(m, x_gpu.data(), t.data(), c.B, c.S, traj ? trajectory.data() : nullptr, c.p);
  if (c.path != DenoisePath::Auto) EXPECT_EQ(be.last_denoise_path(), c.path);

  // Float64 reference on every check_every-th row (rows are independent in denoise).
  std::vector<int> rows;
  for (int b = 0; b < c.B; b += c.check_every) rows.push_back(b);
  if (rows.back() != c.B - 1) rows.push_back(c.B - 1);
  const int n = static_cast<int>(rows.size());
  std::vector<double> xd(size_t(n) * c.dim), trajd(traj ? size_t(n) * c.dim * (c.S + 1) : 0);
  std::vector<int64_t> td(n);
  for (int i = 0; i < n; ++i) {
    td[i] = t[rows[i]];
    for (int d = 0; d < c.dim; ++d) xd[size_t(i) * c.dim + d] = x[size_t(rows[i]) * c.dim + d];
  }
  cpu_ref::denoise<double>(m, xd.data(), td.data(), n, c.S, traj ? trajd.data() : nullptr);
  std::vector<float> got(size_t(n) * c.dim);
  for (int i = 0; i < n; ++i)
    for (int d = 0; d < c.dim; ++d) got[size_t(i) * c.dim + d] = x_gpu[size_t(rows[i]) * c.dim + d];
  const double err = rel_err(got, xd);
  std::printf("[measured] denoise %s rel_err=%.3e (path %s)\n", case_name(c).c_str(), err,
              kernels::denoise_path_name(be.last_denoise_path()));
  EXPECT_LT(err, tolerance(c.p, c.S)) << case_name(c);
  if (traj) {
    std::vector<float> tg(trajd.size());
    for (int f = 0; f <= c.S; ++f)
      for (int i = 0; i < n; ++i)
        for (int d = 0; d < c.dim; ++d)
          tg[(size_t(f) * n + i) * c.dim + d] = trajectory[(size_t(f) * c.B + rows[i]) * c.dim + d];
    // Every element written (NaN poisoned) and close to the reference's frames.
    for (float v : trajectory) ASSERT_TRUE(std::isfinite(v)) << "unwritten trajectory element";
    // Frames: fp32 1e-5; tf32/bf16 twice the output tolerance (not logged separately).
    EXPECT_LT(rel_err(tg, trajd), c.p == Precision::Fp32 ? 1e-5 : 2 * tolerance(c.p, c.S)) << "trajectory " << case_name(c);
  }
}

const Precision F = Precision::Fp32, T32 = Precision::Tf32, B16 = Precision::Bf16, H16 = Precision::F16;
const DenoisePath AUTO = DenoisePath::Auto, GEN = DenoisePath::General, TC = DenoisePath::TensorCore,
                  CL = DenoisePath::Cluster, TIL = DenoisePath::Tiled,
                  CTA = DenoisePath::SingleCta, WG = DenoisePath::Wgmma;

INSTANTIATE_TEST_SUITE_P(
    Cuda, DenoiseVsFloat64,
    ::testing::Values(
        // The reference case on every fp32 path and the tensor-core modes.
        DenoiseCase{8, 64, 256, 16, 0, F, CL}, DenoiseCase{8, 64, 256, 16, 0, F, GEN},
        DenoiseCase{8, 64, 256, 16, 1, F, CL}, DenoiseCase{8, 64, 256, 16, 0, T32, TC},
        DenoiseCase{8, 64, 256, 16, 0, B16, TC},
        // B = 1, tiny hidden, dim 2.
        DenoiseCase{1, 2, 8, 16, 0, F, AUTO}, DenoiseCase{1, 64, 256, 16, 0, F, CL},
        DenoiseCase{1, 2, 256, 16, 0, B16, TC}, DenoiseCase{3, 5, 24, 16, 1, F, CL},
        // B not a multiple of anything, t_start mixes (frozen rows), dim 2 and 64.
        DenoiseCase{4097, 2, 256, 16, 1, F, GEN}, DenoiseCase{4097, 2, 256, 16, 1, T32, TC},
        DenoiseCase{4097, 2, 256, 16, 1, B16, TC}, DenoiseCase{12345, 64, 256, 16, 1, F, GEN, 41},
        DenoiseCase{12345, 64, 256, 16, 1, T32, TC, 41}, DenoiseCase{12345, 64, 256, 16, 1, B16, TC, 41},
        DenoiseCase{12345, 2, 256, 16, 0, B16, TC, 7}, DenoiseCase{777, 33, 256, 16, 1, B16, TC},
        DenoiseCase{777, 17, 256, 16, 1, T32, TC},
        // hidden 8 / 512 (no tensor-core fast path: the general kernel, in every precision).
        DenoiseCase{300, 2, 8, 16, 1, F, AUTO}, DenoiseCase{100, 64, 512, 16, 1, F, AUTO},
        DenoiseCase{100, 64, 512, 16, 1, B16, AUTO}, DenoiseCase{5, 64, 512, 16, 0, F, CL},
        // S = 1 and S = 1000.
        DenoiseCase{33, 64, 256, 1, 2, F, AUTO}, DenoiseCase{33, 64, 256, 1, 2, B16, TC},
        DenoiseCase{8, 64, 256, 1000, 0, F, CL}, DenoiseCase{8, 64, 256, 1000, 0, F, GEN},
        DenoiseCase{8, 64, 256, 1000, 0, T32, TC}, DenoiseCase{8, 64, 256, 1000, 0, B16, TC},
        DenoiseCase{64, 2, 256, 1000, 0, F, GEN}, DenoiseCase{64, 2, 256, 1000, 0, T32, TC},
        DenoiseCase{64, 2, 256, 1000, 0, B16, TC},
        // The tiled fp32 kernel (hidden 256; dim <= 4 or dim % 4 == 0; B not a multiple of its 128-row tile;
        // layer 3's column groups 16 / 12 / 2 (dim 64 / 48 / 8) and the k-split of dim <= 4).
        DenoiseCase{4097, 2, 256, 16, 1, F, TIL}, DenoiseCase{12345, 64, 256, 16, 1, F, TIL, 41},
        DenoiseCase{333, 48, 256, 16, 1, F, TIL},
        DenoiseCase{1, 3, 256, 16, 0, F, TIL}, DenoiseCase{131, 8, 256, 16, 1, F, TIL},
        DenoiseCase{64, 2, 256, 1000, 0, F, TIL}, DenoiseCase{70, 64, 256, 1000, 1, F, TIL},
        DenoiseCase{200, 4, 256, 1, 2, B16, TIL},
        // The single-CTA bf16 kernel (B <= 16).
        DenoiseCase{8, 64, 256, 16, 0, B16, CTA}, DenoiseCase{16, 17, 256, 16, 1, B16, CTA},
        DenoiseCase{1, 2, 256, 16, 1, B16, CTA}, DenoiseCase{13, 64, 256, 16, 1, B16, CTA},
        DenoiseCase{8, 64, 256, 1000, 0, B16, CTA}, DenoiseCase{5, 3, 256, 1000, 1, B16, CTA},
        // The cluster kernel: tf32 at B <= 8 (Auto picks it, fp32 arithmetic); dims owned by only some CTAs
        // (52 = 13 x 4 of 16; 2), steps crossing the 32-step coefficient chunks with frozen rows.
        DenoiseCase{8, 64, 256, 16, 0, T32, CL}, DenoiseCase{8, 64, 256, 16, 1, T32, AUTO},
        DenoiseCase{8, 52, 256, 40, 1, F, CL}, DenoiseCase{7, 2, 256, 70, 1, F, CL},
        DenoiseCase{6, 64, 256, 1000, 1, F, CL},
        // The sm_90a wgmma kernel (skipped elsewhere): B not a multiple of 64, frozen rows, dim 2 / 16 / 17 / 33 /
        // 64 (both layer-1 widths), S = 1 / 16 / 1000, a B where Auto picks it.
        DenoiseCase{4097, 2, 256, 16, 1, B16, WG}, DenoiseCase{12345, 64, 256, 16, 1, B16, WG, 41},
        DenoiseCase{777, 33, 256, 16, 1, B16, WG}, DenoiseCase{130, 16, 256, 16, 0, B16, WG},
        DenoiseCase{100, 17, 256, 16, 1, B16, WG}, DenoiseCase{1, 2, 256, 16, 0, B16, WG},
        DenoiseCase{33, 64, 256, 1, 2, B16, WG}, DenoiseCase{64, 2, 256, 1000, 0, B16, WG},
        DenoiseCase{8, 64, 256, 1000, 0, B16, WG}, DenoiseCase{200, 3, 256, 1000, 1, B16, WG},
        DenoiseCase{4099, 2, 256, 16, 1, B16, AUTO, 3}, DenoiseCase{65536, 2, 256, 16, 0, B16, AUTO, 97},
        // fp16 operands: the mma.sync and wgmma kernels (bf16's paths), Auto at a large batch, S = 1000.
        DenoiseCase{8, 64, 256, 16, 0, H16, TC}, DenoiseCase{4097, 2, 256, 16, 1, H16, TC},
        DenoiseCase{12345, 64, 256, 16, 1, H16, TC, 41}, DenoiseCase{777, 33, 256, 16, 1, H16, TC},
        DenoiseCase{64, 2, 256, 1000, 0, H16, TC}, DenoiseCase{4097, 2, 256, 16, 1, H16, WG},
        DenoiseCase{12345, 64, 256, 16, 1, H16, WG, 41}, DenoiseCase{777, 33, 256, 16, 1, H16, WG},
        DenoiseCase{64, 2, 256, 1000, 0, H16, WG}, DenoiseCase{65536, 2, 256, 16, 0, H16, AUTO, 97},
        DenoiseCase{8, 64, 256, 16, 0, H16, CTA}, DenoiseCase{13, 64, 256, 16, 1, H16, CTA},
        DenoiseCase{8, 64, 256, 1000, 0, H16, CTA}, DenoiseCase{8, 64, 256, 16, 1, H16, AUTO}),
    [](const ::testing::TestParamInfo<DenoiseCase>& i) {
      std::string n = case_name(i.param);
      std::replace(n.begin(), n.end(), '-', '_');
      return n;
    });

// run_steps with the stochastic samplers: the same Philox noise as the CPU (SEMANTICS §7), chunked runs equal one
// run, row_offset shifts the noise rows.
struct StepsCase {
  Sampler sampler;
  double eta;
  int t_start, n_steps, B, dim;
  Precision p;
};

void PrintTo(const StepsCase& c, std::ostream* os) {
  *os << sampler_name(c.sampler) << " eta " << c.eta << " t_start " << c.t_start << " steps " << c.n_steps << " B "
      << c.B << " dim " << c.dim << " " << precision_name(c.p);
}

class StepsVsFloat64 : public ::testing::TestWithParam<StepsCase> {};

TEST_P(StepsVsFloat64, MatchesReference) {
  SKIP_WITHOUT_CUDA();
  const StepsCase c = GetParam();
  const DiffusionModel m = test::random_model(c.dim, 256, 4242 + c.dim, 0.5f);
  const StepTable tab = build_step_table(m.schedule, c.sampler, c.t_start, c.n_steps, c.eta);
  const uint64_t seed = 0x1234abcd5678ull;
  const uint32_t row_offset = 17;
  std::vector<float> x = test::random_x(size_t(c.B) * c.dim, 99);
  std::vector<double> xd = test::widen(x);
  const int N = tab.steps(), half = N / 2;
  std::vector<double> framesd(size_t(N) * c.B * c.dim);
  cpu_ref::run_steps<double>(m, tab, 0, N, xd.data(), c.B, seed, framesd.data(), row_offset);

  CudaBackend be;
  std::vector<float> frames(size_t(N) * c.B * c.dim, test::nan_f());
  std::vector<float> xg = x;
  be.run_steps(m, tab, 0, half, xg.data(), c.B, seed, frames.data(), c.p, row_offset);
  be.run_steps(m, tab, half, N, xg.data(), c.B, seed, frames.data() + size_t(half) * c.B * c.dim, c.p, row_offset);
  const double err = rel_err(xg, xd), ferr = rel_err(frames, framesd);
  std::printf("[measured] run_steps %s eta=%.2f t=%d N=%d B=%d dim=%d %s rel_err=%.3e frames=%.3e\n",
              sampler_name(c.sampler), c.eta, c.t_start, N, c.B, c.dim, precision_name(c.p), err, ferr);
  // Measured max: tf32 3.0e-5, bf16 1.0e-5 (N <= 100 here).
  const double tol = c.p == Precision::Fp32 ? 1e-5 : (c.p == Precision::Tf32 ? 2e-4 : 1e-3);
  EXPECT_LT(err, tol);
  EXPECT_LT(ferr, tol);
}

INSTANTIATE_TEST_SUITE_P(
    Cuda, StepsVsFloat64,
    ::testing::Values(StepsCase{Sampler::Ddpm, 0.0, 99, 100, 37, 2, F}, StepsCase{Sampler::Ddpm, 0.0, 999, 1000, 37, 2, F},
                      StepsCase{Sampler::Ddim, 0.5, 300, 7, 37, 2, F}, StepsCase{Sampler::Ddim, 1.0, 999, 50, 37, 64, F},
                      StepsCase{Sampler::Ddim, 0.0, 999, 50, 1000, 2, F}, StepsCase{Sampler::DdpmMean, 0.0, 999, 1000, 5, 64, F},
                      StepsCase{Sampler::Ddpm, 0.0, 99, 100, 4097, 2, B16}, StepsCase{Sampler::Ddim, 1.0, 999, 50, 333, 64, T32},
                      StepsCase{Sampler::Ddpm, 0.0, 99, 100, 3, 64, F},
                      StepsCase{Sampler::Ddpm, 0.0, 99, 100, 4097, 2, F}, StepsCase{Sampler::Ddim, 1.0, 999, 50, 333, 64, F},
                      StepsCase{Sampler::Ddpm, 0.0, 99, 100, 11, 64, B16},
                      // B >= kWgmmaMinBatch: the wgmma kernel on sm_90a (noise, eta, ddpm-mean).
                      StepsCase{Sampler::Ddim, 1.0, 999, 50, 4100, 64, B16},
                      StepsCase{Sampler::DdpmMean, 0.0, 99, 100, 4096, 2, B16},
                      StepsCase{Sampler::Ddim, 0.0, 999, 100, 5000, 2, B16}),
    [](const ::testing::TestParamInfo<StepsCase>& i) {
      return std::string(sampler_name(i.param.sampler)).substr(0, 4) + "_i" + std::to_string(i.index) + "_" +
             precision_name(i.param.p);
    });

// The unfused cuBLAS baseline computes the same function.
TEST(CudaUnfused, DenoiseMatchesFloat64) {
  SKIP_WITHOUT_CUDA();
  for (Precision p : {F, T32, B16, H16}) {
    const int B = 1000, dim = 64, S = 16;
    const DiffusionModel m = test::random_model(dim, 256, 31);
    std::vector<float> x = test::random_x(size_t(B) * dim, 5);
    std::vector<int64_t> t(B);
    for (int b = 0; b < B; ++b) t[b] = (b * 37) % 1000;
    std::vector<double> xd = test::widen(x);
    cpu_ref::denoise<double>(m, xd.data(), t.data(), B, S, nullptr);
    CudaBackend be;
    be.set_model(m);
    gpu::GpuBuffer<float> dx;
    gpu::GpuBuffer<int32_t> dt;
    std::vector<int32_t> t32(t.begin(), t.end());
    dx.copy_from_host(x);
    dt.copy_from_host(t32);
    be.denoise_device(dx.data(), dt.data(), B, S, nullptr, p, be.stream(), /*unfused=*/true);
    std::vector<float> got(x.size(), test::nan_f());
    dx.copy_to_host(got.data(), got.size(), be.stream());
    cudaStreamSynchronize(be.stream());
    const double err = rel_err(got, xd);
    std::printf("[measured] unfused denoise B=%d dim=%d S=%d %s rel_err=%.3e\n", B, dim, S, precision_name(p), err);
    EXPECT_LT(err, tolerance(p, S)) << precision_name(p);
  }
}

// eps field and start noise on device pointers (the GUI's API).
TEST(CudaDeviceApi, EpsFieldAndStartNoise) {
  SKIP_WITHOUT_CUDA();
  const int dim = 2, n = 1031, t = 417;
  const DiffusionModel m = test::random_model(dim, 256, 8);
  CudaBackend be;
  be.set_model(m);
  std::vector<float> pts = test::random_x(size_t(n) * dim, 3, 3.f);
  gpu::GpuBuffer<float> dp, dout;
  dp.copy_from_host(pts);
  dout.resize(pts.size());
  std::vector<double> want(pts.size());
  const cpu_ref::NetT<double> net(m.net);
  std::vector<double> pd = test::widen(pts);
  cpu_ref::eps_batch<double>(net, pd.data(), n, t, m.schedule.T, want.data());
  for (int x0 = 0; x0 < 2; ++x0) {
    be.eps_field_device(dp.data(), n, t, x0 == 1, dout.data(), be.stream());
    std::vector<float> got(pts.size(), test::nan_f());
    dout.copy_to_host(got.data(), got.size(), be.stream());
    cudaStreamSynchronize(be.stream());
    std::vector<double> w = want;
    if (x0) {
      const double a = m.schedule.alphas_cumprod[t];
      for (size_t i = 0; i < w.size(); ++i) w[i] = (pd[i] - std::sqrt(1 - a) * want[i]) / std::sqrt(a);
    }
    EXPECT_LT(rel_err(got, w), 1e-5) << (x0 ? "x0" : "eps");
  }
  // Start noise equals the CPU's fill_start_noise (same Philox, float rounding of log/sin/cos).
  const int B = 4099;
  std::vector<float> cpu(size_t(B) * dim), gpu_x(size_t(B) * dim, test::nan_f());
  fill_start_noise(m, 777, B, cpu.data());
  gpu::GpuBuffer<float> dx(cpu.size());
  be.start_noise_device(dx.data(), B, 777, be.stream());
  dx.copy_to_host(gpu_x.data(), gpu_x.size(), be.stream());
  cudaStreamSynchronize(be.stream());
  EXPECT_LT(rel_err(gpu_x, cpu), 1e-6);
}

// Closed forms on the GPU (float64 values; fp32 kernels within 1e-5 relative).
TEST(CudaClosedForm, ZeroAndConstantEps) {
  SKIP_WITHOUT_CUDA();
  CudaBackend be;
  for (DenoisePath path : {GEN, CL, TIL}) {
    be.force_denoise_path(path);
    {
      const DiffusionModel m = test::constant_eps_model(4, 256, 0.f);
      std::vector<float> x = {1.f, -2.f, 0.5f, 3.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f, 1.f};
      std::vector<int64_t> t = {999, 500, 0};
      be.denoise(m, x.data(), t.data(), 3, 1000, nullptr, F);
      EXPECT_NEAR(x[0] / 1.f, 157.410457, 157.410457 * 1e-5);
      EXPECT_NEAR(x[1] / -2.f, 157.410457, 157.410457 * 1e-5);
      EXPECT_NEAR(x[4], 3.585251, 3.585251 * 1e-5);
      EXPECT_NEAR(x[8], 1.000050, 1.000050 * 1e-5);
    }
    {
      const DiffusionModel m = test::constant_eps_model(2, 256, 1.f);
      std::vector<float> x = {0.f, 0.f, 1.f, 1.f};
      std::vector<int64_t> t = {999, 0};
      be.denoise(m, x.data(), t.data(), 2, 1000, nullptr, F);
      EXPECT_NEAR(x[0], -313.380805, 313.380805 * 1e-5);
      EXPECT_NEAR(x[2], 0.99004950, 1e-5);
    }
  }
  be.force_denoise_path(AUTO);
  const DiffusionModel m = test::constant_eps_model(2, 8, 1.f);
  for (int n : {50, 2, 1000}) {
    const StepTable tab = build_step_table(m.schedule, Sampler::Ddim, 999, n, 0.0);
    std::vector<float> x = {0.f, 0.f};
    be.run_steps(m, tab, 0, tab.steps(), x.data(), 1, 1, nullptr, F);
    EXPECT_NEAR(x[0], -157.407281, 157.407281 * 1e-5) << n << " ddim steps";
  }
}

// Tiny tf32 batches run the cluster kernel (fp32 arithmetic: the one-warp tensor-core kernel is ~4x slower there).
TEST(CudaPaths, Tf32TinyBatchRunsCluster) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m = test::random_model(64, 256, 2);
  CudaBackend be;
  std::vector<float> x = test::random_x(size_t(8) * 64, 3);
  std::vector<int64_t> t(8, 999);
  be.denoise(m, x.data(), t.data(), 8, 4, nullptr, T32);
  EXPECT_EQ(be.last_denoise_path(), CL);
}

// Large bf16 batches run the wgmma kernel where the build and the device have sm_90a, else the mma.sync kernel.
TEST(CudaPaths, LargeBf16BatchRunsWgmmaOnSm90a) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m = test::random_model(2, 256, 2);
  CudaBackend be;
  const int B = kernels::kWgmmaMinBatch;
  std::vector<float> x = test::random_x(size_t(B) * 2, 3);
  std::vector<int64_t> t(B, 999);
  be.denoise(m, x.data(), t.data(), B, 2, nullptr, B16);
  const bool wg = test::path_supported(WG, 2, 256, B, B16);
  EXPECT_EQ(be.last_denoise_path(), wg ? WG : TC);
  be.denoise(m, x.data(), t.data(), B - 1, 2, nullptr, B16);
  EXPECT_EQ(be.last_denoise_path(), TC);
  int dev = 0, major = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  std::printf("[measured] compute capability major %d, wgmma path %s\n", major, wg ? "available" : "not available");
}

// A large tf32 denoise whose rows all start at one t runs that run's table on the mma.sync solver kernel
// (kernels::plain_table_on_solver); per-row starts keep the denoiser. Both against float64, frames too.
TEST(CudaPaths, UniformTf32DenoiseRunsTheSolverKernel) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m = test::random_model(2, 256, 12);
  const int B = kernels::kWgmmaMinBatch, S = 40, n_chk = 64;
  for (bool uniform : {true, false}) {
    std::vector<float> x = test::random_x(size_t(B) * 2, 13), traj(size_t(B) * 2 * (S + 1), test::nan_f());
    std::vector<int64_t> t(B, 600);
    if (!uniform) t[B - 1] = 599;
    CudaBackend be;
    std::vector<float> xg = x;
    be.denoise(m, xg.data(), t.data(), B, S, traj.data(), T32);
    EXPECT_EQ(be.last_kernel(), uniform ? "solver-tensor-core" : "tensor-core");
    std::vector<double> xd(x.begin(), x.begin() + 2 * n_chk), trajd(size_t(n_chk) * 2 * (S + 1));
    cpu_ref::denoise<double>(m, xd.data(), t.data(), n_chk, S, trajd.data());
    std::vector<float> got(xg.begin(), xg.begin() + 2 * n_chk), tg(trajd.size());
    for (int f = 0; f <= S; ++f)
      for (int i = 0; i < 2 * n_chk; ++i) tg[size_t(f) * 2 * n_chk + i] = traj[size_t(f) * 2 * B + i];
    const double err = rel_err(got, xd), err_frames = rel_err(tg, trajd);
    std::printf("[measured] uniform=%d tf32 denoise B=%d S=%d (%s) rel_err=%.3e frames %.3e\n", uniform, B, S,
                be.last_kernel().c_str(), err, err_frames);
    EXPECT_LT(err, tolerance(T32, S));
    EXPECT_LT(err_frames, 2 * tolerance(T32, S));
    for (float v : traj) ASSERT_TRUE(std::isfinite(v)) << "unwritten trajectory element";
  }
}

// A class-conditional network is refused by the CUDA backend for every call (its kernels have no class rows), with
// the CPU named; the same network without classes runs.
TEST(CudaPaths, ClassConditionalNetworkIsRefused) {
  SKIP_WITHOUT_CUDA();
  DiffusionModel m = test::random_model(2, 256, 14);
  m.net.classes = 2;
  m.net.class_emb.assign(size_t(3) * 256, 0.25f);
  std::vector<float> x = test::random_x(2 * 16, 15);
  std::vector<int64_t> t(16, 10);
  CudaBackend be;
  try {
    be.denoise(m, x.data(), t.data(), 16, 2, nullptr, F);
    ADD_FAILURE() << "a class-conditional network ran on the CUDA backend";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("cpu"), std::string::npos) << e.what();
  }
  m.net.classes = 0;
  m.net.class_emb.clear();
  be.denoise(m, x.data(), t.data(), 16, 2, nullptr, F);
  for (float v : x) EXPECT_TRUE(std::isfinite(v));
}

// Runs the wgmma kernel with kernel option `key` = `value` on a random dim-`dim` model, B rows (every 5th freezing
// early), S steps; returns the relative error against float64.
double wgmma_with_option(const char* key, const char* value, int B, int dim, int S) {
  const DiffusionModel m = test::random_model(dim, 256, 40 + B + dim);
  std::vector<float> x = test::random_x(size_t(B) * dim, 6);
  std::vector<int64_t> t(B);
  for (int b = 0; b < B; ++b) t[b] = b % 5 == 0 ? b % 17 : 999;
  std::vector<double> xd = test::widen(x);
  cpu_ref::denoise<double>(m, xd.data(), t.data(), B, S, nullptr);
  CudaBackend be;
  kernels::KernelOptions o;
  kernels::set_kernel_option(o, key, value);
  be.set_kernel_options(o);
  be.force_denoise_path(DenoisePath::Wgmma);
  be.denoise(m, x.data(), t.data(), B, S, nullptr, Precision::Bf16);
  EXPECT_EQ(be.last_kernel(), std::string(value) == "1" ? "wgmma-pingpong" : "wgmma");
  const double err = rel_err(x, xd);
  std::printf("[measured] wgmma %s=%s B=%d dim=%d S=%d rel_err=%.3e\n", key, value, B, dim, S, err);
  return err;
}

// The wgmma kernel with and without the ping-pong schedule of its two warpgroups (option wgmma_pingpong), on
// tile counts that leave the second warpgroup of the last CTA a tile past B (1 tile, 3 tiles, 65 tiles), frozen rows.
TEST(CudaPaths, WgmmaPingPongMatchesFloat64) {
  SKIP_WITHOUT_CUDA();
  if (!test::path_supported(WG, 2, 256, 1, B16)) GTEST_SKIP() << "no sm_90a wgmma path here";
  for (const char* pp : {"1", "0"})
    for (int B : {5, 130, 4097})
      EXPECT_LT(wgmma_with_option("wgmma_pingpong", pp, B, 2, 24), tolerance(B16, 24)) << pp << " B " << B;
}

// A wrong forced path is an error, not a silent fallback.
TEST(CudaPaths, UnsupportedForcedPathThrows) {
  SKIP_WITHOUT_CUDA();
  const DiffusionModel m = test::random_model(64, 512, 1);
  CudaBackend be;
  be.force_denoise_path(TC);
  std::vector<float> x(64, 0.5f);
  std::vector<int64_t> t = {10};
  EXPECT_THROW(be.denoise(m, x.data(), t.data(), 1, 4, nullptr, B16), std::invalid_argument);
}

}  // namespace
}  // namespace diffscope
