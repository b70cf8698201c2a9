// test_session_faults.cpp — "CUDA out of memory when the user asks for too many samples: clear
// message, the app keeps the previous session", on the session itself (no GL, no GPU): the CPU compute path
// behind a wrapper that fails the way the CUDA path does (ResourceUnavailable "out of GPU memory ...") when
// a run asks for more rows or a longer launch than a fixed device limit. The real CUDA failure runs on the
// H200 (tests/ui/test_compute_paths.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "base/errors.h"
#include "session/sampling_session.h"
#include "session_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

// The CPU path, failing like a device with room for `max_rows` rows and `max_launch` steps per launch.
class LimitedPath final : public ComputePath {
 public:
  LimitedPath(TrajectoryBufferTarget* t, int max_rows, int max_launch)
      : m_inner(make_cpu_compute_path(t)), m_max_rows(max_rows), m_max_launch(max_launch) {}
  std::string name() const override { return "limited"; }
  std::string why() const override { return "test"; }
  std::string device() const override { return "test device"; }
  bool is_gpu() const override { return false; }
  void begin(const DiffusionModel& m, const StepTable& st, const TrajectoryLayout& l, const float* x0, uint64_t seed,
             Precision p) override {
    if (l.B > m_max_rows) throw ResourceUnavailable("out of GPU memory (cudaMalloc: test limit)");
    m_inner->begin(m, st, l, x0, seed, p);
  }
  void advance(int k0, int k1) override {
    if (k1 - k0 > m_max_launch) throw ResourceUnavailable("out of GPU memory (frames of one launch: test limit)");
    m_inner->advance(k0, k1);
  }
  void field(const float* pts, int n, int t, bool x0, float* out) override { m_inner->field(pts, n, t, x0, out); }
  ComputeTimings take_timings() override { return m_inner->take_timings(); }

 private:
  std::unique_ptr<ComputePath> m_inner;
  int m_max_rows, m_max_launch;
};

struct Fixture {
  test::HostTarget target;
  SamplingSession session{&target};
  SamplingSettings s;
  Fixture() {
    session.load_model(test::data_path("golden/d2_h256.safetensors"));
    session.set_compute_path(std::make_unique<LimitedPath>(&target, 1000, 8), "test");
    s.n_samples = 300;
    s.steps = 20;
    s.t_start = 500;
    s.steps_per_launch = 5;
    s.seed = 7;
    session.apply(s);
  }
  void run_to_end() {
    for (int i = 0; i < 100 && !session.complete(); ++i) session.tick(1000, 0);
  }
  std::vector<float> last_frame() const {
    const TrajectoryLayout& l = session.layout();
    std::vector<float> x(l.frame_floats());
    target.download(size_t(l.n_slots - 1) * l.frame_bytes(), l.frame_bytes(), x.data());
    return x;
  }
};

TEST(SessionFaults, TooManySamplesKeepsThePreviousRun) {
  Fixture f;
  f.run_to_end();
  ASSERT_TRUE(f.session.complete()) << f.session.error();
  const std::vector<float> before = f.last_frame();

  f.s.n_samples = 100000;  // the "device" has room for 1000 rows
  f.session.apply(f.s);
  EXPECT_NE(f.session.error().find("out of GPU memory"), std::string::npos) << f.session.error();
  EXPECT_NE(f.session.error().find("kept the previous settings: n 300 (asked 100000)"), std::string::npos)
      << f.session.error();
  // The next apply hands the kept settings back to the caller (the UI's copy) with the note, and restarts
  // nothing else.
  SamplingSettings ui = f.s;
  const SamplingSession::Applied kept = f.session.apply(ui);
  EXPECT_EQ(ui.n_samples, 100000) << "apply() leaves the caller's settings alone";
  EXPECT_EQ(kept.note, "kept the previous settings: n 300 (asked 100000)");
  ui = kept.settings;
  EXPECT_EQ(ui.n_samples, 300);
  EXPECT_EQ(f.session.settings().n_samples, 300);
  EXPECT_FALSE(f.session.apply(ui).restarted);  // now in step: no further restart
  f.run_to_end();
  ASSERT_TRUE(f.session.complete());
  EXPECT_EQ(f.last_frame(), before);  // the same run, recomputed: bit for bit
  EXPECT_FALSE(f.session.error().empty());  // the message stays until the next run
}

TEST(SessionFaults, TooLongLaunchFailingMidRunKeepsThePreviousRun) {
  Fixture f;
  f.run_to_end();
  const std::vector<float> before = f.last_frame();
  f.s.steps_per_launch = 20;  // fails in the first launch, after the run started
  f.s.eta = 0.5;
  f.session.apply(f.s);
  f.session.tick(1000, 0);
  EXPECT_NE(f.session.error().find("kept the previous settings: eta 0 (asked 0.5), steps_per_launch 5 (asked 20)"),
            std::string::npos)
      << f.session.error();
  SamplingSettings ui = f.session.apply(f.s).settings;
  EXPECT_EQ(ui.steps_per_launch, 5);
  EXPECT_EQ(ui.eta, 0.0);
  f.run_to_end();
  ASSERT_TRUE(f.session.complete());
  EXPECT_EQ(f.last_frame(), before);
  // A setting that fits runs normally afterwards and clears the message.
  ui.n_samples = 500;
  EXPECT_TRUE(f.session.apply(ui).restarted);
  EXPECT_TRUE(f.session.error().empty());
  f.run_to_end();
  EXPECT_TRUE(f.session.complete());
}

TEST(SessionFaults, FailureWithoutAnEarlierGoodRunStopsWithTheError) {
  test::HostTarget target;
  SamplingSession session(&target);
  session.load_model(test::data_path("golden/d2_h256.safetensors"));
  session.set_compute_path(std::make_unique<LimitedPath>(&target, 10, 8), "test");
  SamplingSettings s;
  s.n_samples = 11;
  s.steps_per_launch = 5;
  session.apply(s);
  EXPECT_NE(session.error().find("out of GPU memory"), std::string::npos);
  EXPECT_EQ(session.error().find("kept"), std::string::npos);
  EXPECT_EQ(session.tick(1000, 0), 0);
  EXPECT_FALSE(session.complete());
  s.n_samples = 10;  // the user lowers n: it runs
  session.apply(s);
  EXPECT_TRUE(session.error().empty());
  for (int i = 0; i < 100 && !session.complete(); ++i) session.tick(1000, 0);
  EXPECT_TRUE(session.complete());
}

}  // namespace
}  // namespace diffscope
