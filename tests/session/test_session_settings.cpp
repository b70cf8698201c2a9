// test_session_settings.cpp — settings the session clamps because of OTHER settings keep what the user asked
// for (a new user's report: typing t_start 400 went through "4", clamped steps from 50 to 5 and never gave
// them back). SEMANTICS §3: steps in [1, t_start + 1]; steps/launch in [1, steps].
#include <gtest/gtest.h>

#include "session/sampling_session.h"
#include "session_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

TEST(SessionSettings, StepsClampedByTStartComeBackWhenTStartRises) {
  test::HostTarget target;
  SamplingSession session(&target);
  session.load_model(test::data_path("golden/d2_h256.safetensors"));
  session.set_compute_path(make_cpu_compute_path(&target), "cpu");
  SamplingSettings s;
  s.t_start = 999;
  s.steps = 50;
  s.steps_per_launch = 10;
  const SamplingSession::Applied first = session.apply(s);
  EXPECT_TRUE(first.restarted);
  EXPECT_EQ(first.note, "");
  s = first.settings;
  // Typing 400 into t_start: the UI applies "4", then "40", then "400".
  const int typed[] = {4, 40, 400};
  const int steps_after[] = {5, 41, 50}, spl_after[] = {5, 10, 10};
  for (int i = 0; i < 3; ++i) {
    s.t_start = typed[i];
    s = session.apply(s).settings;
    EXPECT_EQ(s.steps, steps_after[i]) << "t_start " << typed[i];
    EXPECT_EQ(s.steps_per_launch, spl_after[i]) << "t_start " << typed[i];
    EXPECT_EQ(session.n_steps(), steps_after[i]);
  }
  // An explicit change of steps is a new request.
  s.steps = 20;
  s = session.apply(s).settings;
  s.t_start = 9;
  s = session.apply(s).settings;
  EXPECT_EQ(s.steps, 10);
  s.t_start = 999;
  s = session.apply(s).settings;
  EXPECT_EQ(s.steps, 20);
  // Out of range on its own (steps > T) is clamped to the schedule's [1, T] and stays clamped.
  s.steps = 5000;
  s = session.apply(s).settings;
  EXPECT_EQ(s.steps, 1000);
}

}  // namespace
}  // namespace diffscope
