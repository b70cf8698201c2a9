// app.h — the desktop app's state and its one-frame function, shared by the GLFW window and the headless
// (EGL + script) loop. The frame: apply settings -> compute some steps -> draw the scene -> panels.
// Panels (panel_*.cpp) are plain functions of this state; no CUDA here, GL only through render/.
#pragma once
#include <deque>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "picture/exporter.h"
#include "render/gl_buffers.h"
#include "render/renderer.h"
#include "run/frame_probe.h"
#include "run/kernel_bench.h"
#include "session/compute_services.h"
#include "session/run_only.h"
#include "session/sampling_session.h"
#include "session/settings_io.h"
#include "ui/key_queue.h"
#include "ui/layout_audit.h"

namespace diffscope {
class ExactLab;
}

namespace diffscope::ui {

// One command-line value: `--set key=value`, or `--n` / `--steps` / `--t-start` as their keys.
struct SettingOverride {
  std::string key, value;
  std::string arg;  // how the user wrote it, for messages ("--set trail", "--steps")
};

struct AppOptions {
  std::string model;          // bundled name or path; "" = settings' model, else moons
  std::string backend;        // auto | cpu | cuda; "" = settings' backend
  bool headless = false;
  bool persist = true;        // read/write settings in config_dir
  std::string config_dir;     // "" = $XDG_CONFIG_HOME/diffscope
  // Applied after the saved settings, refused when out of range, for this run only (never saved).
  std::vector<SettingOverride> sets;
  int frame = -1;             // --restore: the frame to show once computed (-1: follow the run)
  double camera_aspect = 0;   // --restore: the pane aspect of the restored camera (keep_camera_aspect; 0: none)
};

// Figures of the last frames, for the timing panel.
// steps_ms: GPU time of the launches whose timing finished during this frame (read without waiting, so a frame
// or more after they were enqueued); draw_gpu_ms likewise for the scene draw.
struct FrameStats {
  double frame_ms = 0, fps = 0, draw_gpu_ms = 0, steps_ms = 0, map_ms = 0, unmap_ms = 0, upload_ms = 0;
  int steps_this_frame = 0;
  std::deque<float> frame_ms_history;  // last 240 frames
};

// A widget's rectangle in ImGui coordinates (the last frame's), for scripted clicks (`click ITEM`).
struct ItemRect {
  float x0 = 0, y0 = 0, x1 = 0, y1 = 0;
};
// The items App::name_item records: the model path field, the scheduler config field, the export folder field.
const std::vector<std::string>& named_item_names();

class App {
 public:
  // services: how compute paths and GPU bench rows are made (the shell passes the CUDA ones).
  App(AppOptions o, ComputeServices services);
  ~App();
  // Needs a current GL 4.3 context and an ImGui context; content_scale scales the UI (HiDPI).
  void init(float content_scale);
  // One frame: ImGui::NewFrame() already called; draws into the bound framebuffer (fb_w x fb_h pixels).
  void frame(int fb_w, int fb_h);
  // Saves the settings (when persisting) and frees GL resources; call with the context current.
  void shutdown();

  // Loads a model (drag-and-drop, path field, picker); on failure shows the error, the current model runs on.
  // t_start_follows: a t_start at the top of the old model's range (t_start_max_usable) moves to the new model's
  // top, the default t_start of SEMANTICS §3 (a restore keeps the sidecar's t_start instead).
  void load_model(const std::string& path, bool t_start_follows = true);
  // Applies a diffusers scheduler_config.json (SEMANTICS §3) to the model and its spacing to the settings;
  // "" clears it. On failure shows the error in the model section; the current run goes on.
  void load_scheduler_config(const std::string& path);
  void select_backend(const std::string& backend);
  void restart_run();
  // Keyboard actions (also used by scripts).
  void toggle_play();
  void step_cursor(int delta);
  // Restore: shows frame j (paused) once the run has computed it; -1 does nothing.
  void show_frame_when_computed(int j) { m_pending_frame = j; }
  // A restored camera keeps the pane aspect it was set in (the sidecar's camera_aspect) for exports until the
  // user moves it, so a restore into a window of another shape re-exports the same pixels (SEMANTICS §6).
  void keep_camera_aspect(double aspect) { m_restored_camera_aspect = aspect; }
  void request_snapshot() { m_want_snapshot = true; }
  // Every export (the S key, the Export buttons, the script's `export`): Exporter::run over export_view().
  ExportResult run_export(ExportKind kind, const std::string& path = "");
  // The read-only view of this state that exports read.
  ExportView export_view() const;
  // One shortcut key (Space, arrows, Home/End, S snapshot, V video, H); auto-repeats act only for the arrows.
  void on_key(const KeyPress& p);

  // --- state (read and edited by the panels) ---
  AppOptions opts;
  ComputeServices services;
  AppSettings settings;
  std::string config_dir, settings_note, model_error, status_line;
  std::string input_error;     // a refused command-line value (--model): headless runs exit 2 with it
  bool status_is_error = false;
  double m_ui_hidden_at = -100;  // ImGui time of the last H (hide/show UI)
  // Settings reach the disk a second after they stop changing, not only at exit (a crash or kill keeps them).
  void autosave_settings();
  std::string m_saved_settings, m_pending_settings;  // JSON as last saved / as last seen changing
  double m_pending_since = 0;  // status_line reports a failure (drawn in the error colour)
  std::unique_ptr<render::GlTrajectoryBuffer> trajectory;
  std::unique_ptr<render::Renderer> renderer;
  std::unique_ptr<SamplingSession> session;
  std::unique_ptr<Exporter> exporter;
  KernelBench bench;
  KeyQueue keys;               // the window's key callback feeds it; handle_keys() drains it each frame
  render::GpuTimer draw_timer;
  FrameStats stats;
  // Phase split and GPU-wait counts per frame: the loop (window or headless) calls begin_frame() first in each
  // iteration and marks imgui_render and present; frame() marks the rest.
  FrameProbe probe;
  float content_scale = 1.0f;
  double cursor = 0;           // shown frame index j in [0, N] (fractional while playing)
  bool playing = true;
  bool replaying = false;      // playing a finished run from the start at play_speed (Space at the end)
  std::string path_field;      // the model path text box
  std::string scheduler_config_field;  // the scheduler_config.json path text box (not persisted)
  std::string backend_choice = "auto";
  bool backend_changed = false;
  bool vsync_dirty = true;     // the window applies settings.view.vsync when set
  // Named widgets drawn in the last frame (named_item_names()), for scripted clicks.
  std::map<std::string, ItemRect> named_items;
  void name_item(const std::string& name);  // records the last item's rectangle under `name`
  int exports_run = 0;         // run_export calls (the S / V keys, the buttons, scripts) since start
  LayoutAudit layout_audit;    // clipped text of the last frame (filled when enabled: scripts, tests)
  // The timeline slider's rectangle in ImGui coordinates (for scripted drags).
  float timeline_x0 = 0, timeline_x1 = 0, timeline_y = 0;
  int fb_w = 0, fb_h = 0;
  int max_budget_mb = 65536;   // GL_MAX_SHADER_STORAGE_BLOCK_SIZE: the renderer binds the whole trajectory
  bool open_kernels = false;   // expand the kernel panel on the next frame (scripts)
  std::set<std::string> open_sections;  // left panel sections to expand on the next frame (scripts: section_names())
  bool open_schedule = false;  // expand the Schedule section and scroll to it on the next frame (scripts)
  // Analytic models: errors vs the exact ODE, in the background (made by panel_schedule when first shown).
  std::unique_ptr<ExactLab> exact_lab;
  // ImGui units covered by the panels (last frame; panels.cpp): the scene's views go in the rest.
  float ui_inset = 0;          // left: the controls
  float ui_inset_bottom = 0;   // bottom: the timeline and the kernel panel
  float ui_inset_top = 0;      // top: the status strip

  int shown_frame() const;   // cursor clamped to the computed frames
  bool at_end() const;       // a complete run shown at its last frame (Space / the button replay it)
  int shown_slot() const;    // slot of the shown frame (or the nearest kept one before it)
  render::SceneInput scene_input(int slot) const;
  // Fits the camera to the data samples and the start-noise box of the current model in the 2D view's pane;
  // include_newest also fits the newest frame's samples (a read-back of one frame: only when the user asks,
  // "Fit view"). Counted by count_camera_fit().
  void fit_camera(bool include_newest);
  // The framebuffer pixels the UI covers (none while it is hidden with H).
  render::Insets ui_insets_px() const;
  // The 2D view's pane for the current framebuffer and UI insets (GL pixels).
  render::Rect scatter_pane() const;

 private:
  void apply_settings();
  void advance_simulation();
  void update_cursor(double dt);
  void update_field();
  void handle_view_input();
  void handle_keys();
  void update_projection();
  void save_settings();
  // The settings as saved: the user's own spacing in place of the one an applied scheduler config set.
  AppSettings settings_to_persist() const;
  void load_initial_model();  // --model, else the saved model, else the default

  int m_pending_frame = -1;    // show_frame_when_computed
  double m_restored_camera_aspect = 0;  // keep_camera_aspect; 0: the window's pane
  // The spacing before the first scheduler config was applied (Clear and the settings file get it back).
  std::optional<Spacing> m_spacing_before_config;
  RunOnlyValues m_run_only;    // the command line's values, kept out of the settings file
  bool m_want_snapshot = false, m_want_video = false;
  double m_last_time = 0;
  // field cache key
  int m_field_t = -2, m_field_grid = 0;
  bool m_field_x0 = false;
  double m_field_cam[3] = {0, 0, 0};
  const void* m_field_model = nullptr;
  std::vector<render::LineVertex> m_field_lines;  // the window's field (exports draw their own, then put it back)
  int m_field_runs = -1;
  const void* m_proj_model = nullptr;
  int m_fit_w = -1, m_fit_h = -1;  // the pane size of the last fit (cam_auto refits when it changes)
};

}  // namespace diffscope::ui
