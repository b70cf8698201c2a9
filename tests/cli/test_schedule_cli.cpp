// test_schedule_cli.cpp — schedules at their edges through the diffscope binary: a schedule that underflows or
// overflows float32 is refused for every sampler from the first t it cannot run (info says which), the default
// t_start is the model's last usable timestep, and 2^31 - 1 steps without a trajectory finish.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "formats/npy.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using Result = test::CliResult;

class ScheduleCli : public test::CliFixture {};

// Found by the public bug reports (tests/data/reported/).
// schedule-underflow: every sampler used to write all-NaN samples with exit 0.
TEST_F(ScheduleCli, UnderflowingScheduleRefusedForEverySampler) {
  const std::string under = reported("schedule-underflow/underflow_betas.safetensors");
  for (const char* sampler : {"ddim", "ddpm", "ddpm-mean"})
    expect_refused("sample --model '" + under + "' --sampler " + sampler + " --steps 10 --t-start 119 --n 8 --out '" +
                       out("s.npy") + "' --trajectory '" + out("t.npy") + "'",
                   2, {std::string("sampler ") + sampler, "underflows to 0 in float64 from t = 107", "t_start <= 24"});
  expect_refused("sample --model '" + reported("schedule-underflow/lin_T20000.safetensors") +
                     "' --sampler ddim --steps 10 --t-start 19999 --n 8 --out '" + out("s.npy") + "'",
                 2, {"sampler ddim", "overflow float32 from t = ", "t_start <= "});
  // denoise (the t-indexed ddpm-mean table) with a row starting at 119.
  test::TempDir in;
  test::write_npy_i64(in.file("t.npy"), {119});
  expect_refused("denoise --model '" + under + "' --x '" + reported("schedule-underflow/x1.npy") + "' --t-start '" +
                     in.file("t.npy") + "' --steps 120 --out '" + out("d.npy") + "'",
                 2, {"sampler ddpm-mean", "from t = 107", "t_start <= 24"});
  // info says from which t runs are refused instead of printing alphas_cumprod[T-1] = 0 without a word.
  const Result r = run("info --model '" + under + "'");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.out, "overflows float32 from t = 25")) << r.out;
  EXPECT_TRUE(has(r.out, "alphas_cumprod underflows to 0 in float64 from t = 107")) << r.out;
  EXPECT_TRUE(has(r.out, "runs that visit t >= 25 are refused")) << r.out;
}

// Found by the public bug reports (tests/data/reported/).
// t-not-1000: a model of T = 500 said "--t-start = 999 is out of range" though no --t-start was typed. The
// default t_start is T - 1 of the model (the same run as --t-start 499, bit for bit), and where the schedule refuses
// T - 1 (120 betas of 0.999: sigma overflows float32 from t = 25) the last usable t, with a note.
TEST_F(ScheduleCli, DefaultTStartIsTheModelsLastUsableTimestep) {
  const std::string t500 = reported("t-not-1000/t500.safetensors");
  Result r = run("sample --model '" + t500 + "' --n 8 --steps 5 --out '" + out("a.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(has(r.err, "--t-start")) << r.err;
  r = run("sample --model '" + t500 + "' --n 8 --steps 5 --t-start 499 --out '" + out("b.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_npy_float(out("a.npy"), "a").data, read_npy_float(out("b.npy"), "b").data);
  r = run("sample --model '" + t500 + "' --n 8 --steps 5 --t-start 999 --out '" + out("c.npy") + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "--t-start = 999 is out of range; valid: [0, 499]")) << r.err;  // typed: named

  const std::string under = reported("schedule-underflow/underflow_betas.safetensors");
  r = run("sample --model '" + under + "' --n 8 --out '" + out("d.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(has(r.err, "note: t_start defaults to 24, not T - 1 = 119")) << r.err;
  EXPECT_FALSE(has(r.err, "--t-start")) << r.err;
  r = run("sample --model '" + under + "' --n 8 --t-start 24 --steps 25 --out '" + out("e.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_npy_float(out("d.npy"), "d").data, read_npy_float(out("e.npy"), "e").data);
}

// Found by the public bug reports (tests/data/reported/).
// The same S = 2^31 - 1 without a trajectory: the row freezes after its step at t = 0, so the run is short.
// eps = 0 (all weights zero) leaves x <- x / sqrt(alpha_t) for t = 5..0: x / sqrt(abar[5]) with the default
// linear betas (1e-4 + (0.02 - 1e-4) t / 999).
TEST_F(ScheduleCli, HugeStepCountWithoutTrajectoryFinishes) {
  const Result r = run("denoise --model '" + reported("huge-trajectory/zero_d1_h4.safetensors") + "' --x '" +
                       reported("huge-trajectory/x1d1.npy") + "' --t-start '" + reported("huge-trajectory/t5.npy") +
                       "' --steps 2147483647 --out '" + out("d.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  double abar = 1;
  for (int t = 0; t <= 5; ++t) abar *= 1.0 - (1e-4 + (0.02 - 1e-4) * t / 999.0);
  const NpyFloat d = read_npy_float(out("d.npy"), "d");
  ASSERT_EQ(d.data.size(), 1u);
  EXPECT_NEAR(d.data[0], 1.0 / std::sqrt(abar), 1e-5);
}

}  // namespace
}  // namespace diffscope
