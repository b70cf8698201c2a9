// app.h — the desktop app's state and its one-frame function, shared by the GLFW window and the headless
// (EGL + script) loop. The frame: actions -> apply settings -> compute some steps -> draw the scene -> panels ->
// keys and actions -> autosave. The App owns its state: panels (panel_*.cpp) read it through a const App, edit
// the settings they show and push Actions; no CUDA here, GL only through render/.
#pragma once
#include <deque>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "grid/grid_live.h"
#include "picture/exporter.h"
#include "render/gl_buffers.h"
#include "render/renderer.h"
#include "run/frame_probe.h"
#include "run/kernel_bench.h"
#include "session/compute_services.h"
#include "session/run_only.h"
#include "session/sampling_session.h"
#include "session/settings_io.h"
#include "session/training/training_session.h"
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
// The items UiState::name_item records: the model path field, the scheduler config field, the export folder field,
// the training panel's .npy and save-path fields.
const std::vector<std::string>& named_item_names();

// What the user asks the app to do. A widget, a shortcut key (key_action), a dropped file and a headless script
// line push the same Action; App::apply_actions applies the queue in one place, at the start and at the end of
// each frame (and at once when a script line asks). The list is docs/ARCHITECTURE.md's "The App's state".
enum class ActionKind {
  LoadModel,            // text: a bundled model's name or a .safetensors path
  LoadSchedulerConfig,  // text: a diffusers scheduler_config.json; "" clears it
  SelectBackend,        // text: auto | cpu | cuda
  Restore,              // text: an export's .png, .json or video (its sidecar): model, settings, view
  SetSetting,           // text: a settings key (session/settings_keys.h), value: its value; out of range: InvalidInput
  RestartRun,           // "Re-simulate": the same settings again
  TogglePlay,           // Space, Play / Pause / Replay
  StepFrames,           // number: frames to move (Left / Right: -1 / 1, with Shift -10 / 10), paused
  ShowFrame,            // number: the frame to show, paused (Home: 0, End: -1 = the last computed, the timeline)
  ToggleUi,             // H: hide / show the panels
  CycleViewMode,        // D: the view_mode points -> density -> both -> points
  FitView,              // "Fit view": the camera fitted to the data and the newest samples, and kept fitted
  Snapshot,             // S: a snapshot of the views after the next scene draw
  Video,                // V: a video of frames 0 .. the shown one, started after the next scene draw
  Export,               // number: the ExportKind, text: the path ("": the export folder's next name),
                        // value: a video's fps ("": the Export section's)
  OpenSection,          // text: one of section_names(): expanded on the next frame
  OpenSchedule,         // the Schedule section expanded and scrolled to on the next frame
  RunBench,             // text: cpu | gpu, value: the GPU rows' filter: the kernel panel's rows, the panel opened
  Pick,                 // text: "X,Y" in the 2D view's data units; number 1: add to the picks (Shift+click), 0: pick
                        // only it; the nearest sample of the shown frame within kPickRadiusPx (App::pick_at)
  Train,                // the training panel (ui/app_train.cpp App::train_action): text start | stop | resume |
                        // save (value: the path) | checkpoint (number: the kept checkpoint shown, -1: follow the
                        // newest) | set:KEY (value) | brush_add (value "X,Y,R", number: points) | brush_erase
                        // (value "X,Y,R") | brush_undo | brush_clear
  GridClick,            // number: a cell of the comparison grid (row-major as planned): its settings become the
                        // single view's (a model axis loads its model), the grid hidden (App::click_grid)
};

// What the last applied action made of itself: false and why when it failed (a restore, a GPU bench), and the
// note of an old setting name (SetSetting). Exports keep their ExportResult (App::last_export).
struct ActionOutcome {
  bool ok = true;
  std::string note;
};

struct Action {
  ActionKind kind = ActionKind::RestartRun;
  std::string text, value;
  int number = 0;
  bool operator==(const Action& o) const {
    return kind == o.kind && text == o.text && value == o.value && number == o.number;
  }
  static Action load_model(const std::string& path) { return {ActionKind::LoadModel, path}; }
  static Action load_scheduler_config(const std::string& path) { return {ActionKind::LoadSchedulerConfig, path}; }
  static Action select_backend(const std::string& b) { return {ActionKind::SelectBackend, b}; }
  static Action restore(const std::string& file) { return {ActionKind::Restore, file}; }
  static Action set_setting(const std::string& key, const std::string& v) { return {ActionKind::SetSetting, key, v}; }
  static Action simple(ActionKind k) { return {k}; }
  static Action step_frames(int delta) { return {ActionKind::StepFrames, "", "", delta}; }
  static Action show_frame(int j) { return {ActionKind::ShowFrame, "", "", j}; }
  static Action export_file(ExportKind kind, const std::string& path = "", int fps = 0) {
    return {ActionKind::Export, path, fps > 0 ? std::to_string(fps) : "", static_cast<int>(kind)};
  }
  static Action open_section(const std::string& name) { return {ActionKind::OpenSection, name}; }
  static Action run_bench(const std::string& backend, const std::string& filter = "") {
    return {ActionKind::RunBench, backend, filter};
  }
  static Action pick(double x, double y, bool add);
  static Action train(const std::string& what, const std::string& value = "", int number = 0) {
    return {ActionKind::Train, what, value, number};
  }
  static Action grid_click(int cell) { return {ActionKind::GridClick, "", "", cell}; }
};

// The action of one shortcut key (Space, arrows, Home / End, S, V, H, D, Ctrl+Z: the brush's undo); none for other
// keys, for Ctrl+S / Ctrl+V and for an auto-repeat of a key other than the arrows.
std::optional<Action> key_action(const KeyPress& p);

// The panels' own state (not settings, not saved with them): the text fields, what the last frame drew where
// (for the layout and scripted clicks), and the sections a script asked to open.
struct UiState {
  std::string path_field;              // the model path text box
  std::string scheduler_config_field;  // the scheduler_config.json path text box (not persisted)
  std::map<std::string, ItemRect> named_items;  // named_item_names() drawn in the last frame, for scripted clicks
  LayoutAudit layout_audit;            // clipped text of the last frame (filled when enabled: scripts, tests)
  // The timeline slider's rectangle in ImGui coordinates (for scripted drags).
  float timeline_x0 = 0, timeline_x1 = 0, timeline_y = 0;
  // ImGui units covered by the panels (last frame; panels.cpp): the scene's views go in the rest.
  float inset_left = 0;    // the controls
  float inset_bottom = 0;  // the timeline and the kernel panel
  float inset_top = 0;     // the status strip
  std::set<std::string> open_sections;  // left panel sections to expand on the next frame (section_names())
  bool open_kernels = false;   // expand the kernel panel on the next frame
  bool open_schedule = false;  // expand the Schedule section and scroll to it on the next frame
  // Analytic models: errors vs the exact ODE, in the background (made by panel_schedule when first shown).
  std::unique_ptr<ExactLab> exact_lab;
  // The Grid section's fields: each dimension's axis (an index into grid_axis_names(), 0: none) and values as
  // typed, and why the last Apply was refused ("" when it was not).
  int grid_axis[2] = {0, 0};
  std::string grid_values[2];
  std::string grid_field_error;
  std::string grid_fields_from;  // the spec the fields were last filled from
  void name_item(const std::string& name);  // records the last ImGui item's rectangle under `name`
  // The Train section: its settings, the brush (0 off, 1 add, 2 erase; radius in data units, points a dab), the
  // save path, and the last train action's message.
  TrainSettings train;
  int brush_mode = 0;
  float brush_radius = 0.15f;
  int brush_density = 8;
  std::string train_save_path = "trained.safetensors";
  std::string train_message;
  bool train_message_error = false;
};

class App;
// What a panel works with: the app to read, the settings it shows (edited in place by its widgets; a widget
// that changed one sets `edited` through edit()), the panels' own state, the export and kernel-bench options, and
// the action queue for everything else.
struct Panel {
  const App& app;
  AppSettings& settings;
  UiState& ui;
  Exporter& exporter;
  KernelBench& bench;
  std::vector<Action>& actions;
  bool edited = false;
  // `changed` is a widget's result (ImGui returns true when it changed the value); returns it.
  bool edit(bool changed) {
    edited = edited || changed;
    return changed;
  }
  void push(Action a) { actions.push_back(std::move(a)); }
};

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

  // Queues an action; the frame applies it (at its start or its end, whichever comes first).
  void push(Action a) { m_actions.push_back(std::move(a)); }
  // Applies the queued actions in order, now. A SetSetting out of range throws InvalidInput (the rest stay queued).
  void apply_actions();
  // From the window's key callback: one press (or auto-repeat); handled in the next frame as key_action says.
  void push_key(const KeyPress& p) { m_keys.push(p); }
  void connect_keys() { m_keys.connect(); }  // presses come from push_key only (else from ImGui's io.KeysDown)
  // The display's vsync when it should change (the first frame, then after an edit), else none.
  std::optional<bool> take_vsync_change();
  void clear_export_error() { m_exporter->last_error.clear(); }  // a script watches the next export's outcome

  // --- read-only state ---
  const AppSettings& settings() const { return m_settings; }
  const SamplingSession& session() const { return *m_session; }
  const TrainingSession& training() const { return *m_training; }
  // The kept checkpoint the main view shows (-1: it follows the newest as the run makes them).
  int train_checkpoint_shown() const { return m_train_checkpoint; }
  const Exporter& exporter() const { return *m_exporter; }
  const KernelBench& bench() const { return m_bench; }
  const UiState& ui() const { return m_ui; }
  const FrameStats& stats() const { return m_stats; }
  // Phase split and GPU-wait counts per frame: the loop (window or headless) calls begin_frame() first in each
  // iteration and marks imgui_render and present; frame() marks the rest.
  FrameProbe& probe() { return m_probe; }
  const FrameProbe& probe() const { return m_probe; }
  const std::string& settings_note() const { return m_settings_note; }
  const std::string& model_error() const { return m_model_error; }
  const std::string& input_error() const { return m_input_error; }  // a refused --model: headless exits 2
  const std::string& status_line() const { return m_status_line; }
  bool status_is_error() const { return m_status_is_error; }
  const std::string& backend_choice() const { return m_backend_choice; }
  bool cuda_available() const { return m_services.cuda_available && m_services.cuda_available(); }
  bool playing() const { return m_playing; }
  float content_scale() const { return m_content_scale; }
  int fb_w() const { return m_fb_w; }
  int fb_h() const { return m_fb_h; }
  int max_budget_mb() const { return m_max_budget_mb; }  // GL_MAX_SHADER_STORAGE_BLOCK_SIZE in MB
  double ui_hidden_at() const { return m_ui_hidden_at; }  // ImGui time of the last H
  int exports_run() const { return m_exports_run; }       // exports (keys, buttons, scripts) since start
  const ExportResult& last_export() const { return m_last_export; }
  const ActionOutcome& last_outcome() const { return m_outcome; }
  // Persistence (with --config-dir / the default folder): the settings are marked dirty by the widgets' edits,
  // the applied actions and the view's mouse input, and reach the disk a second after they stop changing.
  int settings_dirty_marks() const { return m_dirty_marks; }        // clean -> dirty transitions so far
  int settings_serialisations() const { return m_serialisations; }  // to_json calls for persistence so far

  int shown_frame() const;   // cursor clamped to the computed frames
  // The largest |eps|, |output| or |score| over the field's grid points at the shown frame (0: none drawn).
  double field_largest() const { return m_field_largest; }
  // The density view's largest bin count (render/renderer.h density_max: the latest the GPU finished; 0 before).
  uint32_t density_max() const { return m_renderer ? m_renderer->density_max() : 0; }
  bool at_end() const;       // a complete run shown at its last frame (Space / the button replay it)
  int shown_slot() const;    // slot of the shown frame (or the nearest kept one before it)
  render::SceneInput scene_input(int slot) const;
  // The read-only view of this state that exports read.
  ExportView export_view() const;
  // The framebuffer pixels the UI covers (none while it is hidden with H).
  render::Insets ui_insets_px() const;
  // The 2D view's pane for the current framebuffer and UI insets (GL pixels).
  render::Rect scatter_pane() const;
  // Picked particles (ui/app_pick.cpp; SEMANTICS §6 "Picked particles and edited starts"). The row the last pick
  // found (-1: none within the radius) and the radius it used (data units).
  int last_pick() const { return m_last_pick; }
  double pick_radius() const;
  // Row `row`'s 2D positions in the kept slots computed so far ((slots, 2) floats), gathered on the GPU once per
  // change of the run (cached).
  const std::vector<float>& pick_path(int row) const;
  // The comparison grid (ui/app_grid.cpp; SEMANTICS §10 "The grid in the window"): shown in place of the single
  // view while the settings' grid_show is on and its spec is set. The grid as last run, why the last run of it
  // failed ("" when it did not), the timeline position its cells show (the shown frame / the run's steps), and
  // where its cells go (GL pixels, in drawing order) with the labels' margins.
  bool grid_shown() const { return m_settings.view.grid_show && !m_settings.view.grid.empty(); }
  const GridLive& grid() const { return *m_grid; }
  const std::string& grid_error() const { return m_grid_error; }
  int grid_runs() const { return m_grid_runs; }  // grids run since start (a change of settings re-runs it)
  double grid_position() const;
  GridAlign grid_align() const;
  struct GridPane {
    render::Rect area;              // the labels' margins and the cells
    int label_left = 0, label_top = 0;
    std::vector<render::Rect> cells;  // drawing position k: the cell order[k]
    std::vector<int> order;           // grid().order(grid_metric, grid_sort)
    int cols = 0;
  };
  GridPane grid_pane() const;

 private:
  void apply(const Action& a);
  // Loads a model (drag-and-drop, path field, picker); on failure shows the error, the current model runs on.
  // t_start_follows: a t_start at the top of the old model's range (t_start_max_usable) moves to the new model's
  // top, the default t_start of SEMANTICS §3 (a restore keeps the sidecar's t_start instead).
  void load_model(const std::string& path, bool t_start_follows = true);
  // Applies a diffusers scheduler_config.json (SEMANTICS §3) to the model and its spacing to the settings;
  // "" clears it. On failure shows the error in the model section; the current run goes on.
  void load_scheduler_config(const std::string& path);
  void select_backend(const std::string& backend);
  // A sidecar's model, settings and view (picture/restore.h plan_restore); the note or error goes to the Export
  // section's messages. Changes nothing on an error.
  bool restore(const std::string& file);
  void set_setting(const std::string& key, const std::string& value);
  void run_bench(const std::string& backend, const std::string& filter);
  void toggle_play();
  void step_cursor(int delta);
  void show_frame(int j);
  // Every export (the S key, the Export buttons, the script's `export`): Exporter::run over export_view().
  ExportResult run_export(ExportKind kind, const std::string& path = "");
  void on_key(const KeyPress& p);  // pushes key_action(p)
  // Fits the camera to the data samples and the start-noise box of the current model in the 2D view's pane;
  // include_newest also fits the newest frame's samples (a read-back of one frame: only when the user asks,
  // "Fit view"). Counted by count_camera_fit().
  void fit_camera(bool include_newest);
  void init_style();
  void apply_settings();
  void advance_simulation();
  void update_cursor(double dt);
  void update_field();
  void handle_view_input();
  // A left click picks, Shift+click adds, a drag from a picked particle's start moves that start (dim 2); returns
  // true while such a drag holds the mouse (the view does not pan).
  bool handle_pick_input(double wx, double wy);
  // Action::pick: the nearest sample of the shown frame within pick_radius() of (x, y).
  void pick_at(double x, double y, bool add);
  // The grid (ui/app_grid.cpp): re-run when its spec, the sampling settings or the model changed; its cells'
  // states at the timeline position uploaded for drawing; drawn in place of the single view; a click on a cell.
  void update_grid();
  void draw_grid(int w, int h);
  void handle_grid_input(double mx, double my);
  void click_grid(int cell);
  // Which picked row's start (slot 0) is within the pick radius of (x, y) (-1: none).
  int start_handle_at(double x, double y) const;
  void handle_keys();
  // The training panel (ui/app_train.cpp): its actions; each frame, the newest kept EMA weights into the main view
  // (a model file written to a temporary folder and loaded, so the sampler runs its fixed noise through them);
  // the brush in the 2D view (true while it holds the mouse: no pan, no pick).
  void train_action(const Action& a);
  void poll_training();
  void show_train_checkpoint(int i);
  bool handle_brush_input(double wx, double wy);
  void update_projection();
  void draw_ui();
  void record_stats(double dt, const ComputeTimings& ct);
  // The settings changed (an edit, an action, the mouse on the view, a new run's seed): saved a second after the
  // last change (autosave_settings).
  void mark_settings_dirty();
  // Settings reach the disk a second after they stop changing, not only at exit (a crash or kill keeps them).
  void autosave_settings();
  void save_settings();
  // The settings as saved: the user's own spacing in place of the one an applied scheduler config set.
  AppSettings settings_to_persist() const;
  void load_initial_model();  // --model, else the saved model, else the default

  AppOptions m_opts;
  ComputeServices m_services;
  AppSettings m_settings;
  std::string m_config_dir, m_settings_note, m_model_error, m_status_line;
  std::string m_input_error;  // a refused command-line value (--model): headless runs exit 2 with it
  bool m_status_is_error = false;  // status_line reports a failure (drawn in the error colour)
  double m_ui_hidden_at = -100;   // ImGui time of the last H (hide/show UI)
  std::unique_ptr<render::GlTrajectoryBuffer> m_trajectory;
  std::unique_ptr<render::Renderer> m_renderer;
  std::unique_ptr<SamplingSession> m_session;
  std::unique_ptr<Exporter> m_exporter;
  KernelBench m_bench;
  KeyQueue m_keys;  // the window's key callback feeds it; handle_keys() drains it each frame
  std::vector<Action> m_actions;  // pushed, not yet applied
  render::GpuTimer m_draw_timer;
  FrameStats m_stats;
  FrameProbe m_probe;
  UiState m_ui;
  float m_content_scale = 1.0f;
  double m_cursor = 0;      // shown frame index j in [0, N] (fractional while playing)
  bool m_playing = true;
  bool m_replaying = false;  // playing a finished run from the start at play_speed (Space at the end)
  std::string m_backend_choice = "auto";
  std::optional<bool> m_vsync_applied;  // the vsync the display has (take_vsync_change)
  int m_exports_run = 0;
  ExportResult m_last_export;
  ActionOutcome m_outcome;
  int m_fb_w = 0, m_fb_h = 0;
  int m_max_budget_mb = 65536;  // GL_MAX_SHADER_STORAGE_BLOCK_SIZE: the renderer binds the whole trajectory
  // Persistence: the JSON as last saved, whether the settings changed since, and since when they rest.
  std::string m_saved_settings;
  bool m_settings_dirty = false;
  double m_dirty_since = 0;
  int m_dirty_marks = 0, m_serialisations = 0;
  int m_pending_frame = -1;  // a restore's frame to show once computed (-1: follow the run)
  double m_restored_camera_aspect = 0;  // a restored camera's pane aspect until the user moves it; 0: the window's
  // The spacing before the first scheduler config was applied (Clear and the settings file get it back).
  std::optional<Spacing> m_spacing_before_config;
  RunOnlyValues m_run_only;  // the command line's values, kept out of the settings file
  bool m_want_snapshot = false, m_want_video = false;
  double m_last_time = 0;
  // field cache key
  int m_field_frame = -2, m_field_grid = 0;
  FieldQuantity m_field_quantity = FieldQuantity::Eps;
  const void* m_field_table = nullptr;  // the run's step table (a new run: new levels)
  double m_field_largest = 0;           // the largest |quantity| on the grid (field_largest)
  double m_field_cam[3] = {0, 0, 0};
  const void* m_field_model = nullptr;
  std::vector<render::LineVertex> m_field_lines;  // the window's field (exports draw their own, then put it back)
  const void* m_proj_model = nullptr;
  int m_fit_w = -1, m_fit_h = -1;  // the pane size of the last fit (cam_auto refits when it changes)
  // Picking: the last pick's row, the row whose start a drag moves (-1: none), where the press was (GL pixels),
  // and the picked rows' paths for the state of the run they were gathered in (pick_path).
  int m_last_pick = -1, m_drag_row = -1;
  double m_press_x = 0, m_press_y = 0;
  mutable std::map<int, std::vector<float>> m_pick_paths;
  mutable std::string m_pick_paths_key;
  // Training: the run, the checkpoint shown (-1: the newest), the generation last shown, the preview files.
  std::unique_ptr<TrainingSession> m_training;
  int m_train_checkpoint = -1;
  int64_t m_train_generation_shown = 0;
  std::deque<std::string> m_train_files;
  int m_train_file_count = 0;
  // The preview files' folder, and the model shown before the first preview (what the settings file keeps: a
  // preview is a temporary file).
  std::string m_train_dir, m_model_before_training;
  double m_brush_x = 1e300, m_brush_y = 1e300;  // the last dab of this stroke (data units)
  // The comparison grid: the grid, the buffer of its cells' shown states (one slot a cell), the backend it runs
  // on, what it was run for and what was uploaded, the models its cells load (by name), its last error.
  std::unique_ptr<GridLive> m_grid;
  std::unique_ptr<render::GlTrajectoryBuffer> m_grid_points;
  std::unique_ptr<DenoiserBackend> m_grid_backend;
  bool m_grid_backend_gpu = false;
  std::string m_grid_key, m_grid_error;
  std::string m_grid_upload_key;
  std::map<std::string, std::shared_ptr<const DiffusionModel>> m_grid_models;
  int m_grid_runs = 0;
};

}  // namespace diffscope::ui
