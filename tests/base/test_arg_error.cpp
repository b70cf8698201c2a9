// test_arg_error.cpp — errors that name their argument by id (base/arg_error.h, SEMANTICS §9 "Arguments in
// messages"): the id's spelling per front end, the structured fields, and that only argument references are
// replaced (a JSON value in a message keeps its braces).
#include <gtest/gtest.h>

#include "base/arg_error.h"
#include "cli/cli_util.h"
#include "diffusion/step_table.h"

namespace diffscope {
namespace {

TEST(ArgError, EachFrontEndSpellsTheId) {
  EXPECT_EQ(cli::cli_flag(Arg::TStart), "--t-start");
  EXPECT_EQ(cli::cli_flag(Arg::StepsOffset), "--steps-offset");
  EXPECT_EQ(cli::cli_flag(Arg::FromData), "--from-data");
  EXPECT_EQ(cli::cli_flag(Arg::X), "--x");
  EXPECT_EQ(snake_case_name(Arg::TrajectoryStride), "trajectory_stride");
  EXPECT_EQ(spell_args("{t_start} = 5 and {steps}; {\"a\": 1} {unknown} {t_start", cli::cli_flag),
            "--t-start = 5 and --steps; {\"a\": 1} {unknown} {t_start");
}

TEST(ArgError, CarriesTheArgumentTheValueAndTheRange) {
  try {
    check_arg_range(Arg::StepsOffset, 7, 0, 5);
    FAIL() << "no throw";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.arg, Arg::StepsOffset);
    EXPECT_EQ(e.value, "7");
    EXPECT_EQ(e.valid, "[0, 5]");
    EXPECT_STREQ(e.what(), "steps_offset = 7 is out of range; valid: [0, 5]");  // Python's words
    EXPECT_EQ(e.message(cli::cli_flag), "--steps-offset = 7 is out of range; valid: [0, 5]");
  }
  // Two arguments in one message: ddpm's one timestep per step refuses another spacing.
  try {
    build_step_table(Schedule::linear(1000), Sampler::Ddpm, 10, 5, 0.0, Spacing::Karras);
    FAIL() << "no throw";
  } catch (const ArgumentError& e) {
    EXPECT_EQ(e.arg, Arg::Spacing);
    EXPECT_EQ(e.message(cli::cli_flag),
              "--spacing = karras does not apply to --sampler ddpm (one timestep per step); valid: default");
    EXPECT_STREQ(e.what(), "spacing = karras does not apply to sampler ddpm (one timestep per step); valid: default");
  }
}

}  // namespace
}  // namespace diffscope
