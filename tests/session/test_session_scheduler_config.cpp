// test_session_scheduler_config.cpp — the app's scheduler_config.json (SEMANTICS §3) through the SamplingSession:
// an analytic model takes the config's betas, every run its steps_offset (diffusers' leading list worked by hand),
// a network file keeps its own betas with a warning, clearing the config brings the file's schedule back, and a
// config of another family than the model's is refused, changing nothing.
#include <gtest/gtest.h>

#include <filesystem>

#include "diffusion/scheduler_config.h"
#include "session/sampling_session.h"
#include "io_test_util.h"
#include "session_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

std::shared_ptr<const SchedulerConfig> config(const std::string& text) {
  return std::make_shared<const SchedulerConfig>(parse_scheduler_config(text, "cfg.json"));
}

TEST(SessionSchedulerConfig, AnalyticModelTakesTheConfigAndRunsUseItsOffset) {
  const std::string model = test::repo_root() + "/assets/models/gaussians8-exact.safetensors";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "no " << model;
  test::HostTarget target;
  SamplingSession session(&target);
  session.load_model(model);
  session.set_compute_path(make_cpu_compute_path(&target), "cpu");
  const std::vector<double> own = session.model().schedule.betas;
  SamplingSettings s;
  s.n_samples = 16;
  s.t_start = 999;
  s.steps = 10;
  s.spacing = Spacing::Leading;
  session.apply(s);
  session.set_scheduler_config(config(R"({"beta_schedule": "squaredcos_cap_v2", "steps_offset": 1, "clip_sample": false})"));
  EXPECT_EQ(session.model().schedule.betas, Schedule::cosine(1000).betas);
  // diffusers' leading, T = 1000, N = 10: (arange(10) * 100)[::-1] + steps_offset.
  const std::vector<int32_t> leading1 = {901, 801, 701, 601, 501, 401, 301, 201, 101, 1};
  EXPECT_EQ(session.table().t, leading1);
  session.set_scheduler_config(nullptr);
  EXPECT_EQ(session.model().schedule.betas, own);
  const std::vector<int32_t> leading0 = {900, 800, 700, 600, 500, 400, 300, 200, 100, 0};
  EXPECT_EQ(session.table().t, leading0);
}

TEST(SessionSchedulerConfig, NetworkKeepsItsOwnSchedule) {
  test::HostTarget target;
  SamplingSession session(&target);
  session.load_model(test::data_path("golden/d2_h256.safetensors"));
  const std::vector<double> own = session.model().schedule.betas;
  session.set_scheduler_config(config(R"({"beta_schedule": "squaredcos_cap_v2", "clip_sample": false})"));
  EXPECT_EQ(session.model().schedule.betas, own);
  if (session.model().schedule_in_file) {
    ASSERT_FALSE(session.model().warnings.empty());
    EXPECT_NE(session.model().warnings.back().find("the model file's schedule is used"), std::string::npos);
  }
}

TEST(SessionSchedulerConfig, ConfigOfAnotherFamilyChangesNothing) {
  test::HostTarget target;
  SamplingSession session(&target);
  session.load_model(test::data_path("golden/d2_h256.safetensors"));  // an epsilon network
  session.set_scheduler_config(config(R"({"beta_schedule": "squaredcos_cap_v2", "clip_sample": false})"));
  const SchedulerConfig* before = session.scheduler_config();
  const std::string msg = test::invalid_input_message([&] {
    session.set_scheduler_config(config(R"({"_class_name": "FlowMatchEulerDiscreteScheduler", "shift": 3.0})"));
  });
  EXPECT_NE(msg.find("does not go with the model's family epsilon"), std::string::npos) << msg;
  EXPECT_EQ(session.scheduler_config(), before);
}

}  // namespace
}  // namespace diffscope
