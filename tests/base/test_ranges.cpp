// test_ranges.cpp — base/ranges.h, the one definition of each user-facing range (SEMANTICS §3):
// t_start in [0, T-1] (T from the model's schedule), steps in [1, t_start + 1], n in [1, 1e6], eta in
// [0, 1]. Every boundary: lo and hi are inside, lo - 1 and hi + 1 outside; clamp() maps outside values to
// the nearest bound; check_range/check_eta refuse with a message naming the argument, value and range.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "base/errors.h"
#include "base/ranges.h"
#include "diffusion/input_checks.h"
#include "io_test_util.h"
#include "model/schedule.h"

namespace diffscope {
namespace {

// lo and hi are in, lo-1 and hi+1 out; clamp() is the identity inside and maps outside to the nearest end.
void expect_boundaries(const IntRange& r, int64_t lo, int64_t hi) {
  EXPECT_EQ(r.lo, lo);
  EXPECT_EQ(r.hi, hi);
  EXPECT_TRUE(r.contains(lo));
  EXPECT_TRUE(r.contains(hi));
  EXPECT_FALSE(r.contains(lo - 1));
  EXPECT_FALSE(r.contains(hi + 1));
  EXPECT_EQ(r.clamp(lo), lo);
  EXPECT_EQ(r.clamp(hi), hi);
  EXPECT_EQ(r.clamp(lo - 1), lo);
  EXPECT_EQ(r.clamp(hi + 1), hi);
  EXPECT_EQ(r.clamp(std::numeric_limits<int64_t>::min()), lo);
  EXPECT_EQ(r.clamp(std::numeric_limits<int64_t>::max()), hi);
}

TEST(Ranges, TStartFollowsTheSchedule) {
  expect_boundaries(t_start_range(Schedule::linear(1000)), 0, 999);  // the default T (SEMANTICS §1)
  expect_boundaries(t_start_range(Schedule::linear(50)), 0, 49);
  expect_boundaries(t_start_range(Schedule::cosine(2)), 0, 1);
  expect_boundaries(t_start_range(Schedule::from_betas({0.5}, "test")), 0, 0);  // T = 1: only t = 0
}

TEST(Ranges, StepsUpToTStartPlusOne) {
  expect_boundaries(sample_steps_range(0), 1, 1);
  expect_boundaries(sample_steps_range(9), 1, 10);
  expect_boundaries(sample_steps_range(999), 1, 1000);
}

TEST(Ranges, SampleCountSameOnBothBackends) {
  expect_boundaries(sample_count_range(false), 1, 1'000'000);
  expect_boundaries(sample_count_range(true), 1, 1'000'000);
}

TEST(Ranges, CheckRangeMessageNamesArgumentValueAndRange) {
  const IntRange r = t_start_range(Schedule::linear(1000));
  EXPECT_NO_THROW(check_range("--t-start", 0, r));
  EXPECT_NO_THROW(check_range("--t-start", 999, r));
  EXPECT_EQ(test::invalid_input_message([&] { check_range("--t-start", 1000, r); }),
            "--t-start = 1000 is out of range; valid: [0, 999]");
  EXPECT_EQ(test::invalid_input_message([&] { check_range("--t-start", -1, r); }),
            "--t-start = -1 is out of range; valid: [0, 999]");
  EXPECT_EQ(test::invalid_input_message([&] { check_range("--n", 1'000'001, sample_count_range(false)); }),
            "--n = 1000001 is out of range; valid: [1, 1000000]");
  EXPECT_EQ(test::invalid_input_message([&] { check_range("--steps", 0, sample_steps_range(5)); }),
            "--steps = 0 is out of range; valid: [1, 6]");
}

TEST(Ranges, EtaClosedUnitInterval) {
  EXPECT_NO_THROW(check_eta(0.0));
  EXPECT_NO_THROW(check_eta(1.0));
  EXPECT_NO_THROW(check_eta(0.5));
  const double below = std::nextafter(0.0, -1.0), above = std::nextafter(1.0, 2.0);
  EXPECT_NE(test::cli_error_message([&] { check_eta(below); }).find("--eta = "), std::string::npos);
  EXPECT_EQ(test::cli_error_message([&] { check_eta(-1.0); }), "--eta = -1 is out of range; valid: [0, 1]");
  EXPECT_NE(test::cli_error_message([&] { check_eta(above); }).find("valid: [0, 1]"), std::string::npos);
  EXPECT_EQ(test::cli_error_message([&] { check_eta(2.0); }), "--eta = 2 is out of range; valid: [0, 1]");
  EXPECT_NE(test::cli_error_message([&] { check_eta(std::nan("")); }).find("--eta"), std::string::npos);
  EXPECT_NE(test::cli_error_message([&] { check_eta(INFINITY); }).find("--eta"), std::string::npos);
  // what() names the argument by its id, Python's keyword; a caller's own spelling is used as given.
  EXPECT_EQ(test::invalid_input_message([&] { check_eta(2.0); }), "eta = 2 is out of range; valid: [0, 1]");
  EXPECT_EQ(test::invalid_input_message([&] { check_eta(2.0, "--eta"); }), "--eta = 2 is out of range; valid: [0, 1]");
  EXPECT_EQ(kEtaMin, 0.0);
  EXPECT_EQ(kEtaMax, 1.0);
}

}  // namespace
}  // namespace diffscope
