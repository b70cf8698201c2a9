// sampling_session.h — the live sampling run behind the GUI: model, clamped settings, step table, start
// state and the incremental re-simulation of the trajectory through a ComputePath (ARCHITECTURE.md
// "One frame, as data"). Domain logic: no GL, no CUDA, no ImGui; the UI hands it settings and
// shows what apply() returns.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "diffusion/scheduler_config.h"
#include "diffusion/step_table.h"
#include "model/model.h"
#include "run/compute_path.h"
#include "run/run_plan.h"
#include "run/start_edit.h"
#include "run/trajectory_store.h"
#include "session/settings_io.h"

namespace diffscope {

class SamplingSession {
 public:
  explicit SamplingSession(TrajectoryBufferTarget* target) : m_target(target) {}

  // Loads a model file. On failure throws InvalidInput and keeps the current model running.
  void load_model(const std::string& path);
  bool has_model() const { return static_cast<bool>(m_model); }
  const DiffusionModel& model() const { return *m_model; }
  int dim() const { return m_model ? m_model->net.dim : 0; }
  bool is_image_model() const;  // dim = 64 (8x8) or image_shape metadata
  int image_side() const;       // 8 for 8x8

  // A diffusers scheduler_config.json applied to every model loaded (SEMANTICS §3 "Which schedule wins") and its
  // steps_offset to every run; nullptr clears it. Reloads the current model file (its own schedule first); the
  // run restarts. Throws InvalidInput, changing nothing, for a config of another family than the current model's
  // (check_config_family), and when the file cannot be read again (the config is kept).
  void set_scheduler_config(std::shared_ptr<const SchedulerConfig> config);
  const SchedulerConfig* scheduler_config() const { return m_scheduler_config.get(); }

  // Replaces the compute path (backend switch); the run restarts.
  void set_compute_path(std::unique_ptr<ComputePath> path, std::string note);
  ComputePath* compute_path() const { return m_path.get(); }
  // "cpu: built without CUDA: CPU backend", "cuda + interop: ..." (live: staging can replace interop).
  std::string path_note() const {
    return m_path && m_path->is_gpu() ? m_path->name() + ": " + m_path->why() : m_path_note;
  }

  // What apply() made of the settings asked for.
  struct Applied {
    SamplingSettings settings;  // the effective settings: the caller (the UI) shows these from now on
    bool restarted = false;     // something that affects the numbers changed: the run restarted
    std::string note;           // "" or why `settings` differs from the request beyond the clamps (a failed
                                // run's settings were dropped): "kept the previous settings: n 4096 (asked ...)"
  };
  // Clamps `asked` into the valid ranges (SEMANTICS §3, base/ranges.h; the GUI clamps, the CLI refuses) and,
  // if anything that affects the numbers changed, restarts the run. After a failed run went back to the last
  // good settings (error()), the next call returns those instead, with the note, and drops the request.
  Applied apply(const SamplingSettings& asked);
  // The most the trajectory may take whatever the settings say (the GL limit of one shader storage block).
  void set_max_budget_mb(int mb) { m_max_budget_mb = mb; }
  // Forces a restart with the current settings (e.g. "re-simulate").
  void restart();

  // Edited starts (run/start_edit.h; SEMANTICS §6 "Picked particles and edited starts"): an edited row's kept
  // frames are a one-row CPU run from its start (run_one_row), written over that row of the trajectory buffer as
  // the run computes its frames; the other rows stay the run's, byte for byte. A new or moved edit re-runs only
  // its row (the frames computed so far are written at once); an edit taken back restarts the run (the row's own
  // start again). Edits of a row >= n or of a length other than dim are kept but not applied (start_edit_applies).
  void set_start_edits(const std::vector<StartEdit>& edits);
  const std::vector<StartEdit>& start_edits() const { return m_edits; }
  bool start_edit_applies(const StartEdit& e) const {
    return m_model && e.row < m_layout.B && static_cast<int>(e.x.size()) == m_layout.dim;
  }
  // Kept frames of an applied edit's row ((n_slots, dim) floats), computed when first asked; nullptr when the edit
  // does not apply.
  const std::vector<float>* edited_row_frames(const StartEdit& e);

  // Computes up to `max_steps` more steps in launches of steps_per_launch, stopping after `budget_ms` of
  // wall time (0: no time limit). Returns the steps done.
  int tick(int max_steps, double budget_ms);

  const SamplingSettings& settings() const { return m_settings; }
  const StepTable& table() const { return m_table; }
  const TrajectoryLayout& layout() const { return m_layout; }
  int n_steps() const { return m_table.steps(); }
  int computed_steps() const { return m_done_steps; }  // frames 0..computed_steps are valid
  // All steps computed and every frame finite (a run that overflowed is not complete: overflow_frame()).
  bool complete() const { return m_model && m_overflow.frame < 0 && m_done_steps >= n_steps(); }
  // The run overflowed (SEMANTICS §9): the first frame found holding a value that is not finite, else -1. The
  // run stopped there (computed_steps() = that frame, error() says where and what to change). The CPU path
  // checks every step as it computes it, so this is the first such step; a GPU path's run is read back once
  // when it ends (its newest frame, then a bisection over the kept frames) — except a run that differs from the
  // last checked one only in its seed (the loop's next seed waits for nothing: PERFORMANCE.md "The live loop").
  int overflow_frame() const { return m_overflow.frame; }
  double progress() const { return n_steps() ? double(m_done_steps) / n_steps() : 0.0; }
  // Newest slot holding a computed frame.
  int newest_slot() const;
  // Timestep label of frame j: t of the next step, or -1 ("clean") after the last one.
  int timestep_of_frame(int j) const;
  // The start state (frame 0) on the host; empty when the GPU path drew it on the device.
  const std::vector<float>& start_state() const { return m_x0; }
  // Wall time of the last complete run (ms) and its step count.
  double last_run_ms() const { return m_last_run_ms; }
  int runs_completed() const { return m_runs; }
  // The last error of a run ("" when none). When a run fails (e.g. out of GPU memory for the asked n or
  // steps/launch) after an earlier run succeeded, the session goes back to that run's settings, restarts it
  // and the error ends with "kept the previous settings: n 4096 (asked 1000000)": the next apply() returns
  // the restored settings to the caller.
  const std::string& error() const { return m_error; }

 private:
  // `asked` clamped into the ranges of the current model (SEMANTICS §3; on a list of levels t_start is an
  // index: session/field_view.h). Remembers the steps and steps/launch asked (m_steps_asked, m_spl_asked).
  SamplingSettings clamp_to_model(const SamplingSettings& asked);
  void start_run();
  // After steps of a path that checks them (the CPU path): the first non-finite frame stops the run.
  bool stop_if_overflowed();
  // When a run of a path that does not check its steps ends: its newest frame read back and checked.
  void check_finished_run();
  // Stops the run at `nf`: overflow_frame(), computed_steps() and the error say where.
  void stop_overflowed(const NonFiniteFrame& nf, bool exact);
  // A run failed with `e`: revert to the last good settings and restart them, or stop with the error.
  void on_run_error(const std::exception& e);
  // Writes the applied edits' rows into slots [lo, hi] of the trajectory buffer (only `only_row` when >= 0).
  void write_edited_rows(int lo, int hi, int only_row = -1);

  TrajectoryBufferTarget* m_target;
  std::unique_ptr<DiffusionModel> m_model;
  std::shared_ptr<const SchedulerConfig> m_scheduler_config;
  std::unique_ptr<ComputePath> m_path;
  std::string m_path_note;
  SamplingSettings m_settings;
  bool m_have_settings = false;
  StepTable m_table;
  TrajectoryLayout m_layout;
  std::vector<float> m_x0;
  int m_done_steps = 0;
  bool m_running = false;
  double m_run_start_ms = 0, m_last_run_ms = 0;
  int m_runs = 0;
  int m_max_budget_mb = 1 << 30;
  std::string m_error;
  NonFiniteFrame m_overflow;  // overflow_frame()
  SamplingSettings m_checked;  // the settings of the last GPU run whose end was read back and found finite
  bool m_have_checked = false;
  // Settings of the last run that started and computed a launch without error (for this model).
  SamplingSettings m_good;
  bool m_have_good = false;
  bool m_reverted = false;  // m_settings went back to m_good; apply() hands them to the caller once
  std::string m_revert_note;  // apply()'s note when it does
  int m_steps_asked = 0, m_spl_asked = 0;  // steps and steps/launch as asked, before the clamps by t_start/steps
  std::vector<StartEdit> m_edits;                     // start_edits()
  std::map<int, std::vector<float>> m_edit_frames;    // row -> its kept frames in this run (edited_row_frames)
  int m_edit_slots_written = -1;                      // the edits are written into slots [0, this] of this run
};

// The run the session starts for settings `s` (clamped by apply) as a sampling request (run/run_plan.h): every
// value given; the spacing left to the scheduler config's rule for ddpm / ddpm-mean; steps_offset the config's;
// the trajectory kept under budget_mb (MB, the trail stride); prediction_type and flow_shift as set, the
// prediction_type override left out when `model` names its own family (SEMANTICS §2: the file's family wins in
// the GUI, with a note, where the CLI refuses a contradiction).
SampleRequest session_request(const SamplingSettings& s, const SchedulerConfig* config, bool gpu, int budget_mb,
                              const DiffusionModel* model = nullptr);

// "n 4096 (asked 1000000), steps_per_launch 10 (asked 1000)": the settings where `kept` differs from `asked`.
std::string describe_kept_settings(const SamplingSettings& kept, const SamplingSettings& asked);

}  // namespace diffscope
