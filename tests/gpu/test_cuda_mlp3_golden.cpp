// test_cuda_mlp3_golden.cpp — the fused 3-layer MLP (general and tensor-core paths, and the unfused baseline)
// against the float64 reference, and the PyTorch golden cases (tests/data/golden/manifest.json) on the GPU.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "diffusion/cpu_reference.h"
#include "formats/npy.h"
#include "gpu/cuda_backend.h"
#include "gpu_test_util.h"
#include "kernels/kernels.h"
#include "test_paths.h"

namespace diffscope {
namespace {

using test::rel_err;

Mlp3Weights random_mlp3(int d0, int d1, int d2, int d3, uint32_t seed) {
  Mlp3Weights w;
  w.d0 = d0, w.d1 = d1, w.d2 = d2, w.d3 = d3;
  std::mt19937 rng(seed);
  auto fill = [&](std::vector<float>& v, size_t n, int fan_in) {
    std::uniform_real_distribution<float> u(-1.f / std::sqrt(float(fan_in)), 1.f / std::sqrt(float(fan_in)));
    v.resize(n);
    for (float& x : v) x = u(rng);
  };
  fill(w.W1, size_t(d1) * d0, d0);
  fill(w.W2, size_t(d2) * d1, d1);
  fill(w.W3, size_t(d3) * d2, d2);
  return w;
}

struct MlpCase {
  int B, d0, d1, d2, d3;
  Precision p;
  bool unfused;
};

// gtest prints parameters with PrintTo (else as raw bytes in test listings and failures).
void PrintTo(const MlpCase& c, std::ostream* os) {
  *os << "B " << c.B << " " << c.d0 << "-" << c.d1 << "-" << c.d2 << "-" << c.d3 << " " << precision_name(c.p)
      << (c.unfused ? " unfused" : "");
}

class Mlp3VsFloat64 : public ::testing::TestWithParam<MlpCase> {};

TEST_P(Mlp3VsFloat64, MatchesReference) {
  SKIP_WITHOUT_CUDA();
  const MlpCase c = GetParam();
  const Mlp3Weights w = random_mlp3(c.d0, c.d1, c.d2, c.d3, 11 + c.B + c.d0);
  std::vector<float> x = test::random_x(size_t(c.B) * c.d0, 12 + c.B);
  std::vector<double> xd = test::widen(x), yd(size_t(c.B) * c.d3);
  cpu_ref::mlp3<double>(w, xd.data(), c.B, yd.data());
  CudaBackend be;
  be.set_mlp3(w);
  gpu::GpuBuffer<float> dx, dy(yd.size());
  dx.copy_from_host(x);
  std::vector<float> y(yd.size(), test::nan_f());
  dy.copy_from_host(y);  // poison
  be.mlp3_device(dx.data(), c.B, dy.data(), c.p, be.stream(), c.unfused);
  dy.copy_to_host(y.data(), y.size(), be.stream());
  cudaStreamSynchronize(be.stream());
  const double err = rel_err(y, yd);
  std::printf("[measured] mlp3 B=%d %d-%d-%d-%d %s%s rel_err=%.3e\n", c.B, c.d0, c.d1, c.d2, c.d3, precision_name(c.p),
              c.unfused ? " unfused" : "", err);
  // Measured max on the H200: tf32 5.4e-4, bf16 4.5e-3 (docs/PERFORMANCE.md "Errors against float64").
  // fp16 (10 mantissa bits) takes tf32's tolerance.
  const double tol = c.p == Precision::Fp32 ? 1e-5 : (c.p == Precision::Bf16 ? 2e-2 : 2.5e-3);
  EXPECT_LT(err, tol);
}

const Precision F = Precision::Fp32, T32 = Precision::Tf32, B16 = Precision::Bf16, H16 = Precision::F16;
INSTANTIATE_TEST_SUITE_P(
    Cuda, Mlp3VsFloat64,
    ::testing::Values(MlpCase{16, 48, 64, 40, 24, F, false}, MlpCase{16, 48, 64, 40, 24, T32, false},
                      MlpCase{16, 48, 64, 40, 24, B16, false}, MlpCase{1, 48, 64, 40, 24, B16, false},
                      MlpCase{4097, 48, 64, 40, 24, F, false}, MlpCase{4097, 48, 64, 40, 24, T32, false},
                      MlpCase{4097, 48, 64, 40, 24, B16, false}, MlpCase{12345, 48, 64, 40, 24, B16, false},
                      MlpCase{1, 7, 33, 5, 3, F, false}, MlpCase{333, 7, 33, 5, 3, T32, false},
                      MlpCase{129, 300, 513, 17, 2, F, false},
                      // the one-CTA tiny-batch kernels (B <= 16): weights in registers at 48-64-40-24 (B 16, 13, 1),
                      // in shared memory elsewhere: rows < 16, odd sizes (scalar k), N = 256 / 130
                      MlpCase{13, 48, 64, 40, 24, F, false}, MlpCase{1, 48, 64, 40, 24, F, false}, MlpCase{16, 7, 33, 5, 3, F, false},
                      MlpCase{9, 20, 256, 130, 3, F, false}, MlpCase{4097, 48, 64, 40, 24, F, true},
                      MlpCase{4097, 48, 64, 40, 24, T32, true}, MlpCase{4097, 48, 64, 40, 24, B16, true},
                      // fp32 B > 64 at 48-64-40-24: the register-blocked tiles of 128 rows (mlp3_tiled.cu), one
                      // partial tile (65), a full one and one row (129), several tiles per persistent CTA and a
                      // partial last one (70001 = 546 x 128 + 113); tensor cores: several tiles per warp (prefetch)
                      MlpCase{65, 48, 64, 40, 24, F, false}, MlpCase{129, 48, 64, 40, 24, F, false},
                      MlpCase{70001, 48, 64, 40, 24, F, false}, MlpCase{70001, 48, 64, 40, 24, T32, false},
                      MlpCase{70001, 48, 64, 40, 24, B16, false},
                      // fp16 operands: the tensor-core kernel (bf16's instantiations) and the unfused baseline
                      MlpCase{16, 48, 64, 40, 24, H16, false}, MlpCase{4097, 48, 64, 40, 24, H16, false},
                      MlpCase{70001, 48, 64, 40, 24, H16, false}, MlpCase{4097, 48, 64, 40, 24, H16, true}),
    [](const ::testing::TestParamInfo<MlpCase>& i) {
      return "B" + std::to_string(i.param.B) + "_" + std::to_string(i.param.d0) + "_" + std::to_string(i.param.d1) +
             "_" + precision_name(i.param.p) + (i.param.unfused ? "_unfused" : "");
    });

// The kernels the benchmarking knobs select instead of the defaults (the fp32 one-row-per-thread kernel, the
// tensor-core loop without x prefetch), and an x not 16-byte aligned (the general kernel): float64 judges each.
TEST(Mlp3Knobs, MatchFloat64) {
  SKIP_WITHOUT_CUDA();
  const int B = 4097;
  const Mlp3Weights w = random_mlp3(48, 64, 40, 24, 77);
  std::vector<float> x = test::random_x(size_t(B + 1) * w.d0, 78);
  std::vector<double> xd(x.begin() + 1, x.begin() + 1 + size_t(B) * w.d0), yd(size_t(B) * w.d3);
  cpu_ref::mlp3<double>(w, xd.data(), B, yd.data());
  CudaBackend be;
  be.set_mlp3(w);
  gpu::GpuBuffer<float> dx(x.size()), dy(yd.size());
  const std::vector<float> x_shift(x.begin() + 1, x.end());
  auto run = [&](Precision p, bool misaligned, const std::string& what) {
    dx.copy_from_host(misaligned ? x : x_shift);
    std::vector<float> y(yd.size(), test::nan_f());
    dy.copy_from_host(y);
    be.mlp3_device(dx.data() + (misaligned ? 1 : 0), B, dy.data(), p, be.stream(), false);
    dy.copy_to_host(y.data(), y.size(), be.stream());
    cudaStreamSynchronize(be.stream());
    const double err = rel_err(y, yd);
    std::printf("[measured] mlp3 B=%d %s %s rel_err=%.3e\n", B, what.c_str(), precision_name(p), err);
    EXPECT_LT(err, p == F ? 1e-5 : (p == T32 ? 2.5e-3 : 2e-2)) << what << " " << precision_name(p);
  };
  const kernels::KernelOptions defaults = be.kernel_options();
  kernels::KernelOptions o = defaults;
  kernels::set_kernel_option(o, "mlp3_fp32", "rows");
  be.set_kernel_options(o);
  run(F, false, "fp32 rows kernel");
  EXPECT_EQ(be.last_kernel(), "rows-fp32");
  o = defaults;
  kernels::set_kernel_option(o, "mlp3_tc_prefetch", "0");
  be.set_kernel_options(o);
  run(T32, false, "tensor cores without prefetch");
  EXPECT_EQ(be.last_kernel(), "tc-tf32-no-prefetch");
  run(B16, false, "tensor cores without prefetch");
  be.set_kernel_options(defaults);
  run(F, true, "x misaligned (general kernel)");
  EXPECT_EQ(be.last_kernel(), "general-r32");
}

// Every tensor-core variant the kernel option mlp3_tc_tiles selects (one 16-row tile per warp with x through registers or
// staged in shared memory, two tiles per warp with x staged) at B = 70001 (several units per warp, so the prefetch
// of the next unit runs, and a partial last unit: 70001 = 2187 x 32 + 17); float64 judges each.
TEST(Mlp3TcTiles, MatchFloat64) {
  SKIP_WITHOUT_CUDA();
  const int B = 70001;
  const Mlp3Weights w = random_mlp3(48, 64, 40, 24, 79);
  std::vector<float> x = test::random_x(size_t(B) * w.d0, 80);
  std::vector<double> xd = test::widen(x), yd(size_t(B) * w.d3);
  cpu_ref::mlp3<double>(w, xd.data(), B, yd.data());
  CudaBackend be;
  be.set_mlp3(w);
  gpu::GpuBuffer<float> dx, dy(yd.size());
  dx.copy_from_host(x);
  for (const char* tiles : {"1", "1s", "2s"}) {
    kernels::KernelOptions o;
    kernels::set_kernel_option(o, "mlp3_tc_tiles", tiles);
    be.set_kernel_options(o);
    for (Precision p : {T32, B16}) {
      std::vector<float> y(yd.size(), test::nan_f());
      dy.copy_from_host(y);
      be.mlp3_device(dx.data(), B, dy.data(), p, be.stream(), false);
      dy.copy_to_host(y.data(), y.size(), be.stream());
      cudaStreamSynchronize(be.stream());
      const double err = rel_err(y, yd);
      EXPECT_EQ(be.last_kernel(), std::string("tc-") + precision_name(p) + "-" + tiles);
      std::printf("[measured] mlp3 B=%d tiles %s %s rel_err=%.3e\n", B, tiles, precision_name(p), err);
      EXPECT_LT(err, p == T32 ? 2.5e-3 : 2e-2) << "tiles " << tiles << " " << precision_name(p);
    }
  }
}

// ---- PyTorch golden cases ------------------------------------------------------------------------------------
std::string golden(const std::string& name) { return test::data_path("golden/" + name); }
std::vector<nlohmann::json> cases_of(const std::string& kind) {
  std::ifstream f(golden("manifest.json"));
  if (!f) return {};
  const nlohmann::json m = nlohmann::json::parse(f);
  std::vector<nlohmann::json> out;
  for (const auto& c : m)
    if (c.at("kind") == kind) out.push_back(c);
  return out;
}

TEST(CudaGolden, Denoise) {
  SKIP_WITHOUT_CUDA();
  const auto cases = cases_of("denoise");
  if (cases.empty()) GTEST_SKIP() << "no golden cases";
  CudaBackend be;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const DiffusionModel m = load_diffusion_model(golden(c.at("model")));
    const NpyDouble want = read_npy_double(golden(c.at("expected")), "expected");
    const NpyInt t = read_npy_int(golden(c.at("t_start")), "t_start");
    const int S = c.at("steps"), B = static_cast<int>(t.data.size());
    for (Precision p : {F, T32, B16}) {
      NpyFloat x = read_npy_float(golden(c.at("x")), "x");
      be.denoise(m, x.data.data(), t.data.data(), B, S, nullptr, p);
      const double err = rel_err(x.data, want.data);
      std::printf("[measured] golden %s %s rel_err=%.3e\n", c.at("name").get<std::string>().c_str(), precision_name(p), err);
      const double tol = p == F ? 1e-5 : (p == T32 ? (S >= 1000 ? 1e-3 : 1e-4) : (S >= 1000 ? 1e-2 : 5e-4));
      EXPECT_LT(err, tol) << precision_name(p);
    }
  }
}

TEST(CudaGolden, Mlp3) {
  SKIP_WITHOUT_CUDA();
  const auto cases = cases_of("mlp3");
  if (cases.empty()) GTEST_SKIP() << "no golden cases";
  CudaBackend be;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const Mlp3Weights w = load_mlp3(golden(c.at("weights")));
    const NpyDouble want = read_npy_double(golden(c.at("expected")), "expected");
    const NpyFloat x = read_npy_float(golden(c.at("x")), "x");
    const int B = static_cast<int>(x.shape.at(0));
    for (Precision p : {F, T32, B16}) {
      std::vector<float> y(want.data.size(), test::nan_f());
      be.mlp3(w, x.data.data(), B, y.data(), p);
      const double err = rel_err(y, want.data);
      std::printf("[measured] golden %s %s rel_err=%.3e\n", c.at("name").get<std::string>().c_str(), precision_name(p), err);
      EXPECT_LT(err, p == F ? 1e-5 : (p == T32 ? 2.5e-3 : 2e-2)) << precision_name(p);
    }
  }
}

TEST(CudaGolden, Sample) {
  SKIP_WITHOUT_CUDA();
  const auto cases = cases_of("sample");
  if (cases.empty()) GTEST_SKIP() << "no golden cases";
  CudaBackend be;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const DiffusionModel m = load_diffusion_model(golden(c.at("model")));
    const StepTable tab = build_step_table(m.schedule, parse_sampler(c.at("sampler")), c.at("t_start_scalar"),
                                           c.at("steps"), c.at("eta").get<double>());
    const uint64_t seed = c.at("seed");
    const int n = c.at("n"), dim = m.net.dim;
    const NpyDouble want = read_npy_double(golden(c.at("expected")), "expected");
    // Start noise on the GPU, then the whole run on the GPU.
    be.set_model(m);
    gpu::GpuBuffer<float> dx(size_t(n) * dim);
    be.start_noise_device(dx.data(), n, seed, be.stream());
    std::vector<float> x(size_t(n) * dim, test::nan_f());
    dx.copy_to_host(x.data(), x.size(), be.stream());
    cudaStreamSynchronize(be.stream());
    const NpyDouble x_start = read_npy_double(golden(c.at("x_start")), "x_start");
    EXPECT_LT(rel_err(x, x_start.data), 1e-6);
    be.run_steps(m, tab, 0, tab.steps(), x.data(), n, seed, nullptr, F);
    const double err = rel_err(x, want.data);
    std::printf("[measured] golden %s fp32 rel_err=%.3e\n", c.at("name").get<std::string>().c_str(), err);
    EXPECT_LT(err, 1e-5);
  }
}

}  // namespace
}  // namespace diffscope
