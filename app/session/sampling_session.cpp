// sampling_session.cpp — clamping, step tables, start states and the incremental re-simulation.
#include "session/sampling_session.h"

#include "session/settings_schema.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>

#include "base/errors.h"
#include "base/ranges.h"
#include "diffusion/input_checks.h"
#include "diffusion/sampling.h"
#include "run/finite_checks.h"
#include "run/run_plan.h"
#include "session/field_view.h"
#include "session/view_fit.h"

namespace diffscope {
namespace {
double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

void SamplingSession::load_model(const std::string& path) {
  auto m = std::make_unique<DiffusionModel>(load_diffusion_model(path));  // throws InvalidInput
  if (m_scheduler_config) apply_scheduler_config(*m, *m_scheduler_config);
  const bool index_before = m_model && t_start_is_index(gui_family(*m_model, m_settings.prediction_type));
  m_model = std::move(m);
  m_settings.model_path = path;
  m_have_good = false;  // a new model starts a new history of good runs
  m_have_checked = false;
  if (!m_have_settings) return;
  // t_start means another thing on the new model (a timestep, or an index into a list): its default there.
  if (t_start_is_index(gui_family(*m_model, m_settings.prediction_type)) != index_before)
    m_settings.t_start = family_default_t_start(*m_model, m_settings.prediction_type);
  m_settings = clamp_to_model(m_settings);
  start_run();
}

void SamplingSession::set_scheduler_config(std::shared_ptr<const SchedulerConfig> config) {
  if (config && m_model) check_config_family(*config, m_model->family, m_model->family_in_file);
  m_scheduler_config = std::move(config);
  if (!m_model) return;
  const std::string path = m_model->path;  // a copy: load_model replaces the model that holds it
  load_model(path);
}

bool SamplingSession::is_image_model() const { return m_model && diffscope::image_side(*m_model) > 0; }

int SamplingSession::image_side() const { return m_model ? diffscope::image_side(*m_model) : 0; }

void SamplingSession::set_compute_path(std::unique_ptr<ComputePath> path, std::string note) {
  m_path = std::move(path);
  m_path_note = std::move(note);
  if (m_have_settings) start_run();
}

SamplingSession::Applied SamplingSession::apply(const SamplingSettings& asked) {
  if (m_reverted) {  // a run failed and the session went back: the caller gets the settings that run
    m_reverted = false;
    m_steps_asked = m_settings.steps;  // the failed request is dropped, not retried
    m_spl_asked = m_settings.steps_per_launch;
    return {m_settings, true, std::exchange(m_revert_note, {})};
  }
  const SamplingSettings s = m_model ? clamp_to_model(asked) : asked;
  // steps_per_launch changes the launch split, not the numbers: no restart for it alone.
  SamplingSettings a = s, b = m_settings;
  a.steps_per_launch = b.steps_per_launch = 0;
  a.model_path = b.model_path = "";
  const bool changed = !m_have_settings || a != b;
  m_settings = s;
  m_settings.model_path = m_model ? m_model->path : s.model_path;
  m_have_settings = true;
  if (changed) start_run();
  return {s, changed, {}};
}

SamplingSettings SamplingSession::clamp_to_model(const SamplingSettings& asked) {
  SamplingSettings s = asked;
  const Schedule& sch = m_model->schedule;
  const bool gpu = m_path && m_path->is_gpu();
  const Family family = gui_family(*m_model, s.prediction_type);
  // steps and steps/launch are clamped by other settings (t_start, steps): what the user asked for is kept,
  // so that typing t_start 400 (through "4" and "40") or dragging it low and back does not lose steps 50.
  // A value the UI did not change since the last apply is the clamped one: use the remembered request.
  if (m_steps_asked > 0 && s.steps == m_settings.steps) s.steps = m_steps_asked;
  if (m_spl_asked > 0 && s.steps_per_launch == m_settings.steps_per_launch) s.steps_per_launch = m_spl_asked;
  m_spl_asked = std::max(1, s.steps_per_launch);
  if (t_start_is_index(family)) {  // a list of levels: steps first, t_start an index into it (FAMILIES.md)
    s.steps = static_cast<int>(family_steps_range(*m_model, family, 0).clamp(s.steps));
    m_steps_asked = s.steps;
    s.t_start = static_cast<int>(family_t_start_range(*m_model, family, s.steps).clamp(s.t_start));
  } else {
    s.t_start = static_cast<int>(t_start_range(sch).clamp(s.t_start));
    // Where alphas_cumprod is 0 or sigma overflows float32 no epsilon run can start (SEMANTICS §3 "Finite
    // coefficients"): clamp below. sample / v_prediction may start at abar = 0 ("Zero terminal SNR").
    if (const int bad = first_unusable_t(sch); bad > 0 && family == Family::Epsilon) s.t_start = std::min(s.t_start, bad - 1);
    m_steps_asked = static_cast<int>(sample_steps_range(static_cast<int>(sch.T) - 1).clamp(s.steps));
    s.steps = static_cast<int>(sample_steps_range(s.t_start).clamp(s.steps));
  }
  s.n_samples = static_cast<int>(sample_count_range(gpu).clamp(s.n_samples));
  s.eta = std::clamp(s.eta, kEtaMin, kEtaMax);
  s.steps_per_launch = std::clamp(s.steps_per_launch, 1, std::max(1, s.steps));
  s.memory_budget_mb = std::clamp(s.memory_budget_mb, 16, 65536);
  if (s.flow_shift) s.flow_shift = kFlowShiftRange.clamp(*s.flow_shift);
  if (!gpu) s.precision = Precision::Fp32;  // SEMANTICS §8: tf32/bf16/fp16 only on the GPU
  if (s.from_data && m_model->n_data == 0) s.from_data = false;
  return s;
}

void SamplingSession::restart() { start_run(); }

void SamplingSession::start_run() {
  m_error.clear();
  m_overflow = {};
  m_running = false;
  m_done_steps = 0;
  if (!m_model || !m_path) return;
  try {
    const SamplingSettings& s = m_settings;
    const int budget_mb = std::min(s.memory_budget_mb, m_max_budget_mb);
    // Every rule of the run (run/run_plan.h), before any work: a failure keeps the previous run.
    m_table = plan_run(session_request(s, m_scheduler_config.get(), m_path->is_gpu(), budget_mb, m_model.get()), *m_model).table;
    // On a family list the run takes N - t_start steps (run/run_plan.h): the table's count, not s.steps.
    m_layout = TrajectoryLayout::make(m_table.steps(), s.n_samples, dim(), size_t(budget_mb) << 20);
    // Pure noise drawn on the device is the VP start; a flow or edm start not at scale 1 is drawn on the host and
    // scaled (scale_start_noise, as run_plan's start).
    float unit = 1.0f;
    scale_start_noise(m_table, 1, &unit);
    if (!s.from_data && unit == 1.0f && m_path->begin_from_noise(*m_model, m_table, m_layout, s.seed, s.precision)) {
      m_x0.clear();  // drawn on the device
    } else {
      m_x0.resize(m_layout.frame_floats());
      const NoiseLevel first = m_table.levels.empty() ? NoiseLevel{} : m_table.levels.front();
      if (s.from_data && m_table.has_family_rows())  // noised to the family's first level (SEMANTICS §2)
        fill_start_from_data(*m_model, StartScales{float(first.alpha), float(first.sigma)}, s.seed, s.n_samples,
                             m_x0.data());
      else if (s.from_data)
        fill_start_from_data(*m_model, s.t_start, s.seed, s.n_samples, m_x0.data());
      else
        fill_start_noise(*m_model, s.seed, s.n_samples, m_x0.data());
      if (!s.from_data) scale_start_noise(m_table, m_x0.size(), m_x0.data());
      m_path->begin(*m_model, m_table, m_layout, m_x0.data(), s.seed, s.precision);
    }
    m_edit_frames.clear();
    m_edit_slots_written = -1;
    write_edited_rows(0, 0);
    m_running = true;
    m_run_start_ms = now_ms();
  } catch (const std::exception& e) {
    on_run_error(e);
  }
}

void SamplingSession::on_run_error(const std::exception& e) {
  m_running = false;
  std::string msg = e.what();
  if (m_have_good && m_good != m_settings) {
    const std::string changes = describe_kept_settings(m_good, m_settings);
    m_settings = m_good;  // m_good == m_settings now: if this run fails too, it stops (no loop)
    m_settings.model_path = m_model ? m_model->path : m_settings.model_path;
    m_reverted = true;
    m_revert_note = "kept the previous settings: " + changes;
    start_run();
    if (!m_error.empty()) msg += "; the previous settings failed too: " + m_error;
    else msg += "; kept the previous settings: " + changes;
  }
  m_error = msg;
}

SampleRequest session_request(const SamplingSettings& s, const SchedulerConfig* config, bool gpu, int budget_mb,
                              const DiffusionModel* model) {
  SampleRequest r;
  r.sampler = s.sampler;
  // The spacing picked (a scheduler config sets it when applied); ddpm and ddpm-mean leave it to plan_run, which
  // gives them one timestep per step.
  if (s.sampler != Sampler::Ddpm && s.sampler != Sampler::DdpmMean) r.spacing = s.spacing;
  r.eta = s.eta;
  r.t_start = s.t_start;
  r.steps = s.steps;
  r.n = s.n_samples;
  r.seed = s.seed;
  r.from_data = s.from_data;
  r.precision = s.precision;
  r.gpu = gpu;
  r.scheduler_config = config;
  r.keep_frames = true;
  r.memory_budget_mb = budget_mb;
  r.model_name = s.model_path;
  // The override is for a file that names no family (plan_run notes it); a file that names one keeps its own
  // (the model section says the override is ignored: ignored_override_note).
  if (!model || !model->family_in_file) r.prediction_type = s.prediction_type;
  r.flow_shift = s.flow_shift;
  return r;
}

std::string describe_kept_settings(const SamplingSettings& a, const SamplingSettings& b) {
  return describe_sampling_differences(a, b);  // the settings schema's rows (session/settings_schema.h)
}

int SamplingSession::tick(int max_steps, double budget_ms) {
  if (!m_running || complete() || max_steps <= 0) return 0;
  const double t0 = now_ms();
  int done = 0;
  try {
    // Under a time budget (the CPU) one step per call, so a frame stops near its budget; S is the fused kernel's.
    const int per_call = budget_ms > 0 ? 1 : m_settings.steps_per_launch;
    while (done < max_steps && !complete()) {
      const int k0 = m_done_steps;
      const int k1 = std::min({n_steps(), k0 + per_call, k0 + (max_steps - done)});
      m_path->advance(k0, k1);
      done += k1 - k0;
      m_done_steps = k1;
      if (stop_if_overflowed()) return done;
      if (!m_have_good || m_good != m_settings) {  // a launch of this run went through: it is a good run
        m_good = m_settings;
        m_have_good = true;
      }
      if (budget_ms > 0 && now_ms() - t0 >= budget_ms) break;
    }
  } catch (const std::exception& e) {
    on_run_error(e);
    return done;
  }
  write_edited_rows(m_edit_slots_written + 1, newest_slot());
  if (complete() && m_running && !m_path->checks_finite()) check_finished_run();
  if (complete() && m_running) {
    m_last_run_ms = now_ms() - m_run_start_ms;
    ++m_runs;
    m_running = false;
  }
  return done;
}

bool SamplingSession::stop_if_overflowed() {
  if (!m_path->checks_finite()) return false;
  const NonFiniteFrame nf = m_path->first_nonfinite_frame();
  if (nf.frame < 0) return false;
  stop_overflowed(nf, true);
  return true;
}

void SamplingSession::check_finished_run() {
  SamplingSettings a = m_settings;
  a.seed = m_checked.seed;
  a.steps_per_launch = m_checked.steps_per_launch;
  if (m_have_checked && a == m_checked) return;  // the loop's next seed: no read-back (PERFORMANCE.md)
  m_path->before_draw();  // nothing may stay mapped while GL reads
  std::vector<float> f(m_layout.frame_floats());
  const int64_t n = static_cast<int64_t>(f.size());
  auto first_bad = [&](int slot) {
    m_target->download(size_t(slot) * m_layout.frame_bytes(), m_layout.frame_bytes(), f.data());
    const int64_t i = first_nonfinite(f.data(), n);
    return NonFiniteFrame{i < 0 ? -1 : m_layout.frame_of_slot(slot), i, i < 0 ? 0.f : f[i]};
  };
  NonFiniteFrame bad = first_bad(newest_slot());
  if (bad.frame < 0) {
    m_checked = m_settings;
    m_have_checked = true;
    return;
  }
  // A sample that is not finite stays so (every solver's update is linear in it), so the kept frames holding
  // one are a suffix: bisect for the first. Slot 0, the start state, is finite (drawn or checked on the host).
  int lo = 0, hi = newest_slot();
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (const NonFiniteFrame b = first_bad(mid); b.frame >= 0)
      hi = mid, bad = b;
    else
      lo = mid;
  }
  stop_overflowed(bad, m_layout.stride <= 1);
}

void SamplingSession::stop_overflowed(const NonFiniteFrame& nf, bool exact) {
  m_running = false;
  m_overflow = nf;
  m_done_steps = nf.frame;
  const int d = std::max(1, dim());
  char value[32];
  std::snprintf(value, sizeof value, "%g", double(nf.value));
  const int k = nf.frame - 1;  // the step that made the frame
  m_error = "samples overflowed " + std::string(exact ? "at" : "by") + " step " + std::to_string(nf.frame) + " of " +
            std::to_string(n_steps()) + " (from t = " + std::to_string(k >= 0 && k < n_steps() ? m_table.t[k] : -1) +
            (exact ? "" : "; frames are kept every " + std::to_string(m_layout.stride) + " steps") + "): sample " +
            std::to_string(nf.index / d) + ", coordinate " + std::to_string(nf.index % d) + " = " + value +
            " is not finite (SEMANTICS §9); the frames before it are finite. Try a lower t_start, another sampler, "
            "or check the model (its weights and schedule)";
}

void SamplingSession::set_start_edits(const std::vector<StartEdit>& edits) {
  if (edits == m_edits) return;
  const auto find = [](const std::vector<StartEdit>& v, int row) {
    return std::find_if(v.begin(), v.end(), [row](const StartEdit& e) { return e.row == row; });
  };
  bool taken_back = false;
  for (const StartEdit& old : m_edits) taken_back = taken_back || find(edits, old.row) == edits.end();
  std::vector<int> moved;
  for (const StartEdit& e : edits)
    if (const auto it = find(m_edits, e.row); it == m_edits.end() || *it != e) moved.push_back(e.row);
  m_edits = edits;
  if (taken_back) {  // the row's own start again: only a new run has its frames
    start_run();
    return;
  }
  for (int row : moved) {
    m_edit_frames.erase(row);
    write_edited_rows(0, m_edit_slots_written, row);
  }
}

const std::vector<float>* SamplingSession::edited_row_frames(const StartEdit& e) {
  if (!start_edit_applies(e)) return nullptr;
  auto it = m_edit_frames.find(e.row);
  if (it == m_edit_frames.end())
    it = m_edit_frames.emplace(e.row, run_one_row(*m_model, m_table, m_layout, m_settings.seed, e.row, e.x.data())).first;
  return &it->second;
}

void SamplingSession::write_edited_rows(int lo, int hi, int only_row) {
  if (only_row < 0) m_edit_slots_written = std::max(m_edit_slots_written, hi);
  if (m_edits.empty() || lo > hi || !m_path) return;
  m_path->before_draw();  // nothing may stay mapped while GL writes
  const size_t row_bytes = static_cast<size_t>(m_layout.dim) * sizeof(float);
  for (const StartEdit& e : m_edits) {
    if (only_row >= 0 && e.row != only_row) continue;
    const std::vector<float>* f = edited_row_frames(e);
    if (!f) continue;
    for (int s = lo; s <= hi; ++s)
      m_target->upload(static_cast<size_t>(s) * m_layout.frame_bytes() + static_cast<size_t>(e.row) * row_bytes,
                       row_bytes, f->data() + static_cast<size_t>(s) * m_layout.dim);
  }
}

int SamplingSession::newest_slot() const {
  if (!m_model || m_layout.n_slots == 0) return 0;
  int s = m_layout.slot_at_or_before(m_done_steps);
  // slot_at_or_before(N) is the last slot only once N is computed.
  if (m_layout.frame_of_slot(s) > m_done_steps) --s;
  return std::max(0, s);
}

int SamplingSession::timestep_of_frame(int j) const {
  if (j < 0 || j >= n_steps()) return -1;
  return m_table.t[j];
}

}  // namespace diffscope
