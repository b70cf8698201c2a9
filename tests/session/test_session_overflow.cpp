// test_session_overflow.cpp — a GUI run whose samples overflow (SEMANTICS §9) stops at the first non-finite
// frame with an error, instead of showing "100 / 100 steps" with nothing drawn (found by a newcomer trial).
// On the session itself (no GL): the CPU path, which checks every step as it computes it, and the CPU path behind
// a wrapper that does not check (as the GPU paths), whose run is read back once at its end and bisected.
//
// The model (test::write_overflowing_model, io_test_util.h) gives eps = 0 for t >= 51 and inf for t <= 50:
// ddim with t_start 99 and 100 steps visits t = 99 - k at step k (0-based): eps is finite (0) until the step
// from t = 50 (k = 49), whose output, frame 50, is the first that is not finite (x0 prediction -inf, then
// -inf + inf = NaN). With t_start 60 and 61 steps: t = 60 - k, the step from t = 50 is k = 10, frame 11.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "io_test_util.h"
#include "run/finite_checks.h"
#include "session/sampling_session.h"
#include "session_test_util.h"

namespace diffscope {
namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The CPU path without its per-step check: the session's run-end read-back (the GPU paths' way) finds the overflow.
class UncheckedPath final : public ComputePath {
 public:
  explicit UncheckedPath(TrajectoryBufferTarget* t) : m_inner(make_cpu_compute_path(t)) {}
  std::string name() const override { return "unchecked"; }
  std::string why() const override { return "test"; }
  std::string device() const override { return "test"; }
  bool is_gpu() const override { return false; }
  void begin(const DiffusionModel& m, const StepTable& st, const TrajectoryLayout& l, const float* x0, uint64_t seed,
             Precision p) override {
    m_inner->begin(m, st, l, x0, seed, p);
  }
  void advance(int k0, int k1) override { m_inner->advance(k0, k1); }
  void field(const float* pts, int n, int t, bool x0, float* out) override { m_inner->field(pts, n, t, x0, out); }
  ComputeTimings take_timings() override { return m_inner->take_timings(); }

 private:
  std::unique_ptr<ComputePath> m_inner;
};

struct OverflowRun {
  test::TempDir dir;
  test::HostTarget target;
  SamplingSession session{&target};
  SamplingSettings s;
  explicit OverflowRun(bool checked, int n = 64) {
    session.load_model(test::write_overflowing_model(dir.file("overflow.safetensors")));
    session.set_compute_path(checked ? make_cpu_compute_path(&target) : std::make_unique<UncheckedPath>(&target), "test");
    s.n_samples = n;
    s.t_start = 99;
    s.steps = 100;
    s.steps_per_launch = 7;  // launches that do not end at the overflow: the run still stops at its frame
  }
  void run_to_end() {
    session.apply(s);
    for (int i = 0; i < 1000 && !session.complete() && session.error().empty(); ++i) session.tick(1000, 0);
  }
  std::vector<float> frame(int j) const {
    const TrajectoryLayout& l = session.layout();
    std::vector<float> x(l.frame_floats());
    target.download(size_t(l.slot_of_frame(j)) * l.frame_bytes(), l.frame_bytes(), x.data());
    return x;
  }
};

void expect_stopped_at(const OverflowRun& r, int frame, const std::string& where) {
  EXPECT_FALSE(r.session.complete());
  EXPECT_EQ(r.session.overflow_frame(), frame);
  EXPECT_EQ(r.session.computed_steps(), frame);
  EXPECT_EQ(r.session.runs_completed(), 0);
  const std::string& e = r.session.error();
  EXPECT_TRUE(has(e, "samples overflowed " + where)) << e;
  EXPECT_TRUE(has(e, "sample 0, coordinate 0 = ")) << e;
  EXPECT_TRUE(has(e, "is not finite (SEMANTICS §9)")) << e;
  EXPECT_TRUE(has(e, "Try a lower t_start, another sampler, or check the model")) << e;
}

TEST(SessionOverflow, CpuPathStopsAtTheFirstNonFiniteStep) {
  OverflowRun r(true);
  r.run_to_end();
  expect_stopped_at(r, 50, "at step 50 of 100 (from t = 50)");
  EXPECT_EQ(first_nonfinite(r.frame(49).data(), 128), -1);  // the frames before it are finite
  EXPECT_EQ(first_nonfinite(r.frame(50).data(), 128), 0);
  // New settings start a new run: the error goes, and this run overflows at its own step from t = 50.
  r.s.t_start = 60;
  r.s.steps = 61;
  r.session.apply(r.s);
  EXPECT_EQ(r.session.overflow_frame(), -1);
  EXPECT_TRUE(r.session.error().empty()) << r.session.error();
  r.run_to_end();
  expect_stopped_at(r, 11, "at step 11 of 61 (from t = 50)");
}

TEST(SessionOverflow, UncheckedPathIsReadBackAtTheEndAndBisected) {
  OverflowRun r(false);
  r.run_to_end();
  ASSERT_EQ(r.session.layout().stride, 1);
  expect_stopped_at(r, 50, "at step 50 of 100 (from t = 50)");
}

TEST(SessionOverflow, UncheckedPathWithKeptFramesNamesTheFirstKeptOne) {
  // 40,000 samples x 2 x 4 bytes = 320,000 bytes a frame: the 16 MB budget holds 52 frames, so of 101 every 2nd
  // is kept (TrajectoryLayout: the smallest stride that fits; frames 0, 2, ..., 100); frame 50 is a kept one.
  OverflowRun r(false, 40000);
  r.s.memory_budget_mb = 16;
  r.run_to_end();
  ASSERT_EQ(r.session.layout().stride, 2);
  expect_stopped_at(r, 50, "by step 50 of 100 (from t = 50; frames are kept every 2 steps)");
  r.s.t_start = 60;  // 62 frames > 52, stride 2: kept 0, 2, ..., 10, 12, ...: the overflow at frame 11 is found at 12
  r.s.steps = 61;
  r.run_to_end();
  ASSERT_EQ(r.session.layout().stride, 2);
  expect_stopped_at(r, 12, "by step 12 of 61 (from t = 49; frames are kept every 2 steps)");
}

}  // namespace
}  // namespace diffscope
