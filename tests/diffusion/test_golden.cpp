// test_golden.cpp — the CPU backend (float32) and the float64 reference against PyTorch's float64 outputs
// in tests/data/golden (manifest.json, written by tools/make_golden.py; format in its README.md).
// Tolerances: float32 within 1e-5 relative Frobenius, float64 within 1e-9.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diffusion/cpu_reference.h"
#include "diffusion/step_table.h"
#include "formats/npy.h"
#include "model/model.h"
#include "model_fixtures.h"
#include "run/backend.h"
#include "test_paths.h"

namespace diffscope {
namespace {

std::string golden(const std::string& name) { return test::data_path("golden/" + name); }

// The manifest's cases of one kind; skips the test when the manifest is absent.
std::vector<nlohmann::json> cases_of(const std::string& kind) {
  std::ifstream f(golden("manifest.json"));
  if (!f) return {};
  const nlohmann::json m = nlohmann::json::parse(f);
  std::vector<nlohmann::json> out;
  for (const auto& c : m)
    if (c.at("kind") == kind) out.push_back(c);
  return out;
}

#define SKIP_IF_EMPTY(cases) \
  if ((cases).empty()) GTEST_SKIP() << "no golden cases in " << golden("manifest.json")

TEST(Golden, Denoise) {
  const auto cases = cases_of("denoise");
  SKIP_IF_EMPTY(cases);
  auto be = make_cpu_backend();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const DiffusionModel m = load_diffusion_model(golden(c.at("model")));
    const NpyDouble want = read_npy_double(golden(c.at("expected")), "expected");
    const NpyInt t = read_npy_int(golden(c.at("t_start")), "t_start");
    const int S = c.at("steps"), B = static_cast<int>(t.data.size());
    ASSERT_EQ(want.shape, (std::vector<int64_t>{B, m.net.dim}));

    NpyFloat x = read_npy_float(golden(c.at("x")), "x");
    be->denoise(m, x.data.data(), t.data.data(), B, S, nullptr, Precision::Fp32);
    EXPECT_LT(test::rel_frobenius(x.data, want.data), 1e-5);

    NpyDouble xd = read_npy_double(golden(c.at("x")), "x");
    cpu_ref::denoise<double>(m, xd.data.data(), t.data.data(), B, S, nullptr);
    EXPECT_LT(test::rel_frobenius(xd.data, want.data), 1e-9);
  }
}

TEST(Golden, Mlp3) {
  const auto cases = cases_of("mlp3");
  SKIP_IF_EMPTY(cases);
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const Mlp3Weights w = load_mlp3(golden(c.at("weights")));
    const NpyDouble want = read_npy_double(golden(c.at("expected")), "expected");
    const NpyFloat x = read_npy_float(golden(c.at("x")), "x");
    const int B = static_cast<int>(x.shape.at(0));
    ASSERT_EQ(want.shape, (std::vector<int64_t>{B, w.d3}));
    std::vector<float> y(want.data.size());
    make_cpu_backend()->mlp3(w, x.data.data(), B, y.data(), Precision::Fp32);
    EXPECT_LT(test::rel_frobenius(y, want.data), 1e-5);
    const NpyDouble xd = read_npy_double(golden(c.at("x")), "x");
    std::vector<double> yd(want.data.size());
    cpu_ref::mlp3<double>(w, xd.data.data(), B, yd.data());
    EXPECT_LT(test::rel_frobenius(yd, want.data), 1e-9);
  }
}

TEST(Golden, Sample) {
  const auto cases = cases_of("sample");
  SKIP_IF_EMPTY(cases);
  auto be = make_cpu_backend();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.at("name").get<std::string>());
    const DiffusionModel m = load_diffusion_model(golden(c.at("model")));
    const StepTable tab = build_step_table(m.schedule, parse_sampler(c.at("sampler")), c.at("t_start_scalar"),
                                           c.at("steps"), c.at("eta").get<double>());
    const uint64_t seed = c.at("seed");
    const int n = c.at("n"), dim = m.net.dim;
    const NpyDouble want = read_npy_double(golden(c.at("expected")), "expected");
    ASSERT_EQ(want.shape, (std::vector<int64_t>{n, dim}));

    // The start noise (step_key T) agrees with PyTorch's float64 draw, in both paths.
    const NpyDouble x_start = read_npy_double(golden(c.at("x_start")), "x_start");
    std::vector<double> xd(size_t(n) * dim);
    cpu_ref::start_noise<double>(m.schedule.T, dim, seed, n, xd.data());
    EXPECT_LT(test::rel_frobenius(xd, x_start.data), 1e-12);
    std::vector<float> x(size_t(n) * dim);
    cpu_ref::start_noise<float>(m.schedule.T, dim, seed, n, x.data());
    EXPECT_LT(test::rel_frobenius(x, x_start.data), 1e-6);

    be->run_steps(m, tab, 0, tab.steps(), x.data(), n, seed, nullptr, Precision::Fp32);
    EXPECT_LT(test::rel_frobenius(x, want.data), 1e-5);
    cpu_ref::run_steps<double>(m, tab, 0, tab.steps(), xd.data(), n, seed, nullptr);
    EXPECT_LT(test::rel_frobenius(xd, want.data), 1e-9);
  }
}

}  // namespace
}  // namespace diffscope
