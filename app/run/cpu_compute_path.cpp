// cpu_compute_path.cpp — the CPU compute path: the reference backend (run/cpu_backend) runs the steps on
// the host; each kept frame is uploaded into the GL trajectory buffer (glBufferSubData by the target).
#include <chrono>
#include <cmath>
#include <thread>

#include "diffusion/cpu_reference.h"
#include "diffusion/field_eval.h"
#include "run/compute_path.h"
#include "run/finite_checks.h"

namespace diffscope {
namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class CpuComputePath final : public ComputePath {
 public:
  explicit CpuComputePath(TrajectoryBufferTarget* target) : m_target(target), m_backend(make_cpu_backend()) {}
  std::string name() const override { return "cpu"; }
  std::string why() const override { return m_why; }
  std::string device() const override { return cpu_device_name(); }
  bool is_gpu() const override { return false; }
  void set_why(std::string w) { m_why = std::move(w); }

  void begin(const DiffusionModel& model, const StepTable& table, const TrajectoryLayout& layout, const float* x0,
             uint64_t seed, Precision precision) override {
    m_model = &model;
    m_table = table;
    m_layout = layout;
    m_seed = seed;
    m_precision = precision;
    m_x.assign(x0, x0 + layout.frame_floats());
    m_nonfinite = {};
    m_prev.assign(table.uses_prev() ? layout.frame_floats() : 0, 0.f);  // SEMANTICS §3: survives advance() calls
    if (m_target->size_bytes() != layout.total_bytes()) m_target->resize(layout.total_bytes());
    const double t0 = now_ms();
    m_target->upload(0, layout.frame_bytes(), m_x.data());
    m_timings.upload_ms += now_ms() - t0;
  }

  void advance(int k_begin, int k_end) override {
    if (!m_model || k_end <= k_begin) return;
    const size_t ff = m_layout.frame_floats();
    m_frames.resize(static_cast<size_t>(k_end - k_begin) * ff);
    const double t0 = now_ms();
    m_backend->run_steps(*m_model, m_table, k_begin, k_end, m_x.data(), m_layout.B, m_seed, m_frames.data(),
                         Precision::Fp32, 0, m_prev.empty() ? nullptr : m_prev.data());
    const double t1 = now_ms();
    for (int j = k_begin + 1; j <= k_end; ++j) {
      const float* frame = m_frames.data() + static_cast<size_t>(j - k_begin - 1) * ff;
      if (m_nonfinite.frame < 0)  // SEMANTICS §9: every step's output, kept or not
        if (const int64_t i = first_nonfinite(frame, static_cast<int64_t>(ff)); i >= 0) m_nonfinite = {j, i, frame[i]};
      const int s = m_layout.slot_of_frame(j);
      if (s >= 0)
        m_target->upload(static_cast<size_t>(s) * m_layout.frame_bytes(), m_layout.frame_bytes(),
                         frame);
    }
    m_timings.steps_ms += t1 - t0;
    m_timings.upload_ms += now_ms() - t1;
    m_timings.steps += k_end - k_begin;
  }

  bool checks_finite() const override { return true; }
  NonFiniteFrame first_nonfinite_frame() const override { return m_nonfinite; }

  void field(const float* pts, int n, int t, bool x0, float* out) override {
    if (m_model) eval_field_cpu(*m_model, pts, n, t, x0, out);
  }

  ComputeTimings take_timings() override {
    ComputeTimings t = m_timings;
    m_timings = {};
    return t;
  }

 private:
  TrajectoryBufferTarget* m_target;
  std::unique_ptr<DenoiserBackend> m_backend;
  const DiffusionModel* m_model = nullptr;
  StepTable m_table;
  TrajectoryLayout m_layout;
  uint64_t m_seed = 0;
  Precision m_precision = Precision::Fp32;
  std::vector<float> m_x, m_frames, m_prev;
  ComputeTimings m_timings;
  NonFiniteFrame m_nonfinite;  // the first frame of this run (since begin) holding a non-finite value
  std::string m_why = "built without CUDA";
};

}  // namespace

std::unique_ptr<ComputePath> make_cpu_compute_path(TrajectoryBufferTarget* target) {
  return std::make_unique<CpuComputePath>(target);
}

}  // namespace diffscope
