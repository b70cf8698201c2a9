// app.cpp — the frame: settings -> steps -> scene -> panels (the loop around it: shell/frame_loop.h; the
// panels: panel_*.cpp).
#include "ui/app.h"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "base/errors.h"
#include "base/ranges.h"
#include "base/words.h"
#include "diffusion/exact_lab.h"
#include "diffusion/input_checks.h"
#include "picture/export_dir.h"
#include "picture/picture.h"
#include "platform/model_paths.h"
#include "platform/paths.h"
#include "run/finite_checks.h"
#include "session/backend_defaults.h"
#include "session/settings_keys.h"
#include "session/view_fit.h"
#include "ui/hidden_ui_hint.h"
#include "ui/keys.h"
#include "ui/panels.h"

namespace diffscope::ui {

namespace {
// The model path field's text: a bundled model's name (the field loads names too), else the path relative to
// the working directory when under it, so the file name stays visible in the narrow field.
std::string short_path(const std::string& path) {
  for (const auto& [name, p] : bundled_models())
    if (p == path) return name;
  std::error_code ec;
  const std::string rel = std::filesystem::proximate(path, ec).string();
  return !ec && !rel.empty() && rel.rfind("..", 0) != 0 ? rel : path;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The settings file's t_start and steps that the model's schedule clamps (the file's own ranges do not know T;
// SEMANTICS §3: the settings file clamps), one note line each, as the file's other clamps are noted. Values at
// their defaults or given on the command line (refused there instead) are not the file's.
std::string model_clamp_note(const SamplingSettings& s, const Schedule& schedule, bool t_start_given, bool steps_given) {
  const SamplingSettings defaults;
  std::string note;
  auto add = [&note](const char* key, int64_t v, IntRange r, const std::string& why) {
    if (!r.contains(v))
      note += std::string("settings: sampling.") + key + " = " + std::to_string(v) + " clamped to " +
              std::to_string(r.clamp(v)) + " (valid: [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]" +
              why + ")\n";
  };
  const IntRange t_range = t_start_range(schedule);
  if (!t_start_given && s.t_start != defaults.t_start)
    add("t_start", s.t_start, t_range, " for this model, T = " + std::to_string(schedule.T));
  if (!steps_given && s.steps != defaults.steps)
    add("steps", s.steps, sample_steps_range(static_cast<int>(t_range.clamp(s.t_start))), ": at most t_start + 1");
  return note;
}
}  // namespace

App::App(AppOptions o, ComputeServices s) : opts(std::move(o)), services(std::move(s)) {
  bench.set_gpu(services.cuda_available, services.gpu_bench, services.gpu_missing);
}
App::~App() = default;

void App::init(float scale) {
  content_scale = scale > 0 ? scale : 1.0f;
  layout_audit.enabled = opts.headless;  // scripts and tests read it (`expect clipped`); the window needs none
  config_dir = opts.config_dir.empty() ? default_config_dir() : opts.config_dir;
  if (opts.persist) settings = load_app_settings(config_dir + "/settings.json", &settings_note);

  ImGuiIO& io = ImGui::GetIO();
  static std::string ini_path;
  if (opts.persist) {
    std::error_code ec;
    std::filesystem::create_directories(config_dir, ec);
    ini_path = config_dir + "/imgui.ini";
    io.IniFilename = ini_path.c_str();
  } else {
    io.IniFilename = nullptr;
  }
  ImGui::StyleColorsDark();
  ImGuiStyle& style = ImGui::GetStyle();
  style.WindowRounding = 6.0f;
  style.FrameRounding = 4.0f;
  style.GrabRounding = 4.0f;
  style.WindowBorderSize = 0.0f;
  style.Colors[ImGuiCol_WindowBg].w = 0.86f;
  style.Colors[ImGuiCol_TextDisabled] = ImVec4(0.66f, 0.68f, 0.72f, 1.0f);  // hints readable on the dark panels
  style.ScaleAllSizes(content_scale);
  ImFontConfig font;
  font.SizePixels = std::round(13.0f * content_scale);
  io.Fonts->Clear();
  io.Fonts->AddFontDefault(&font);

  if (const size_t max_ssbo = render::max_storage_block_bytes(); max_ssbo > 0)
    max_budget_mb = static_cast<int>(std::min<size_t>(max_ssbo >> 20, 65536));
  trajectory = std::make_unique<render::GlTrajectoryBuffer>();
  renderer = std::make_unique<render::Renderer>();
  session = std::make_unique<SamplingSession>(trajectory.get());
  session->set_max_budget_mb(max_budget_mb);
  exporter = std::make_unique<Exporter>();

  settings.export_dir = resolve_export_dir(settings.export_dir);  // shown and saved as the full folder
  // Command-line values (SEMANTICS §3): refused when out of range (exit 2), and for this run only (not saved).
  const nlohmann::json saved = to_json(settings);
  std::vector<std::pair<std::string, std::string>> given;  // (key, argument) of each command-line value
  if (!opts.backend.empty()) settings.sampling.backend = opts.backend;
  for (const SettingOverride& o : opts.sets) {
    apply_setting(settings, o.key, o.value, o.arg, &settings_note);  // an old name: a note
    given.emplace_back(canonical_setting_key(o.key), o.arg);
  }
  auto is_given = [&](const char* key) {
    return std::any_of(given.begin(), given.end(), [&](const auto& g) { return g.first == key; });
  };
  backend_choice = settings.sampling.backend;
  std::string note;
  auto path = services.make_path(backend_choice, trajectory.get(), &note);
  session->set_compute_path(std::move(path), note);
  if (!session->compute_path()->is_gpu()) apply_cpu_defaults(settings, is_given("n"), is_given("trail_frames"));

  load_initial_model();
  // The default t_start is the model's top (SEMANTICS §3): T - 1, or below the first unusable t.
  if (session->has_model() && !is_given("t_start") && settings.sampling.t_start == SamplingSettings{}.t_start &&
      t_start_max_usable(session->model().schedule) >= 0)
    settings.sampling.t_start = t_start_max_usable(session->model().schedule);
  if (session->has_model()) {
    check_model_ranges(settings.sampling, session->model().schedule, session->compute_path()->is_gpu(), given);
    if (opts.persist)
      settings_note += model_clamp_note(settings.sampling, session->model().schedule, is_given("t_start"), is_given("steps"));
  }
  m_run_only = RunOnlyValues(saved, to_json(settings), !opts.model.empty());
  m_pending_frame = opts.frame;
  m_restored_camera_aspect = opts.camera_aspect;
  m_last_time = now_s();
}

void App::load_initial_model() {
  if (!opts.model.empty()) {  // a command-line model: refused in headless runs, the default shown in the window
    std::string path;
    try {
      path = resolve_model_arg("--model", opts.model);  // a mistyped bundled name lists the bundled ones
      load_model(path);
      if (!model_error.empty()) input_error = "--model = " + opts.model + ": " + after_label(model_error, path);
    } catch (const InvalidInput& e) {
      input_error = e.what();
    }
    if (input_error.empty()) return;
    if (!default_model_path().empty()) load_model(default_model_path());
    model_error = input_error + (session->has_model() ? "  (showing the default model instead)" : "");
    return;
  }
  std::string model = settings.sampling.model_path;
  std::error_code ec;
  if (!model.empty() && !std::filesystem::exists(model, ec)) {
    settings_note += "model " + model + " from the settings is gone; opening the default\n";
    model.clear();
  }
  if (model.empty()) model = default_model_path();
  if (model.empty()) {
    model_error = "no bundled model found (assets/models/*.safetensors under $DIFFSCOPE_ROOT, the executable's "
                  "../.., or the working directory); open one with the path field or drag and drop";
    return;
  }
  load_model(model);
  // A saved model that no longer loads (truncated, corrupt, unreadable): the default instead, saying why.
  if (session->has_model() || model == default_model_path() || default_model_path().empty()) return;
  const std::string why = model_error;
  load_model(default_model_path());
  model_error = "model " + model + " from the settings could not be loaded: " + why +
                (session->has_model() ? "  (showing the default model instead)" : "; the default failed too: " + model_error);
}

void App::load_model(const std::string& name_or_path, bool t_start_follows) {
  const std::string path = resolve_model(name_or_path);  // bundled names ("digits8x8") or paths
  try {
    const bool at_top = session->has_model() && settings.sampling.t_start == t_start_max_usable(session->model().schedule);
    session->load_model(path);
    if (t_start_follows && at_top && t_start_max_usable(session->model().schedule) >= 0)
      settings.sampling.t_start = t_start_max_usable(session->model().schedule);
    exporter->remember_model(session->model().path);
    model_error.clear();
    path_field = short_path(path);
    settings.sampling.model_path = session->model().path;
    if (settings.view.cam_auto) fit_camera(false);
    m_proj_model = nullptr;
    cursor = 0;
    playing = true;
  } catch (const std::exception& e) {
    model_error = e.what();
    if (session->has_model()) model_error += "  (still showing " + session->model().path + ")";
  }
}

void App::load_scheduler_config(const std::string& path) {
  try {
    if (path.empty()) {
      // The spacing the config set goes back to the user's own; one picked while it was applied stays.
      if (const SchedulerConfig* c = session->scheduler_config(); c && m_spacing_before_config &&
                                                                  settings.sampling.spacing == c->spacing)
        settings.sampling.spacing = *m_spacing_before_config;
      m_spacing_before_config.reset();
      session->set_scheduler_config(nullptr);
    } else {
      // absolute, so that the sidecar's command line finds it from anywhere
      auto config = std::make_shared<const SchedulerConfig>(
          diffscope::load_scheduler_config(std::filesystem::absolute(path).lexically_normal().string()));
      const SchedulerConfig* old = session->scheduler_config();
      if (!old || settings.sampling.spacing != old->spacing) m_spacing_before_config = settings.sampling.spacing;
      session->set_scheduler_config(config);
      settings.sampling.spacing = config->spacing;  // ddpm and ddpm-mean keep the default (SEMANTICS §3)
    }
    model_error.clear();
    cursor = 0;
  } catch (const std::exception& e) {
    model_error = std::string("scheduler config: ") + e.what();
  }
}

void App::select_backend(const std::string& backend) {
  backend_choice = backend;
  settings.sampling.backend = backend;
  std::string note;
  auto path = services.make_path(backend, trajectory.get(), &note);
  session->set_compute_path(std::move(path), note);
  cursor = 0;
}

void App::restart_run() {
  session->restart();
  cursor = 0;
}

bool App::at_end() const {
  return session && session->has_model() && session->complete() && shown_frame() >= session->n_steps();
}

void App::toggle_play() {
  // A finished run replays at the chosen speed from the shown frame, or from the start when at the end: one
  // press, also while "playing" has simply reached the last frame.
  if (session->complete() && (!playing || at_end())) {
    if (at_end()) cursor = 0;
    replaying = true;
    playing = true;
    return;
  }
  playing = !playing;
}

void App::step_cursor(int delta) {
  playing = false;
  replaying = false;
  const int stride = std::max(1, session->layout().stride);
  int j = shown_frame();
  if (stride > 1) {  // move between kept frames
    int s = session->layout().slot_at_or_before(j) + (delta > 0 ? 1 : (j % stride == 0 ? -1 : 0));
    s = std::clamp(s, 0, session->newest_slot());
    cursor = session->layout().frame_of_slot(s);
    return;
  }
  cursor = std::clamp(j + delta, 0, session->computed_steps());
}

int App::shown_frame() const {
  if (!session || !session->has_model()) return 0;
  return std::clamp(static_cast<int>(std::floor(cursor + 1e-6)), 0, session->computed_steps());
}

int App::shown_slot() const {
  if (!session || !session->has_model() || session->layout().n_slots == 0) return 0;
  return std::min(session->layout().slot_at_or_before(shown_frame()), session->newest_slot());
}

render::SceneInput App::scene_input(int slot) const {
  if (!session->has_model() || session->layout().n_slots == 0) return {};
  render::SceneInput in = picture_scene(settings.view, content_scale, trajectory.get(), session->layout().B,
                                        session->layout().dim, slot, session->is_image_model() ? session->image_side() : 0);
  in.inset = ui_insets_px();
  return in;
}

ExportView App::export_view() const {
  ExportView v;
  v.session = session.get();
  v.settings = &settings;
  v.renderer = renderer.get();
  v.trajectory = trajectory.get();
  v.window_field = &m_field_lines;
  v.shown_frame = shown_frame();
  v.shown_slot = shown_slot();
  v.ui_scale = content_scale;
  const render::Rect pane = scatter_pane();
  v.camera_aspect = pane.h > 0 ? double(pane.w) / pane.h : 1.0;
  if (m_restored_camera_aspect > 0 && !settings.view.cam_auto) v.camera_aspect = m_restored_camera_aspect;
  v.timings = {{"frame_ms", stats.frame_ms}, {"gl_draw_ms", stats.draw_gpu_ms}, {"interop_map_ms", stats.map_ms},
               {"interop_unmap_ms", stats.unmap_ms}};
  return v;
}

const std::vector<std::string>& named_item_names() {
  static const std::vector<std::string> names{"model_path", "scheduler_config", "export_folder"};
  return names;
}

void App::name_item(const std::string& name) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  named_items[name] = {a.x, a.y, b.x, b.y};
}

ExportResult App::run_export(ExportKind kind, const std::string& path) {
  ++exports_run;
  const render::SavedFramebuffer target;
  const ExportResult r = exporter->run(kind, export_view(), path);
  target.restore();
  if (kind == ExportKind::Snapshot) {
    status_line = r.ok ? "snapshot: " + exporter->last_path : "snapshot: error: " + r.error;
    status_is_error = !r.ok;
  }
  return r;
}

render::Insets App::ui_insets_px() const {
  if (!settings.view.show_ui) return {};
  const ImVec2 k = ImGui::GetIO().DisplayFramebufferScale;
  return {int(ui_inset * k.x), int(ui_inset_bottom * k.y), int(ui_inset_top * k.y)};
}

render::Rect App::scatter_pane() const {
  const bool image = session && session->is_image_model() && session->image_side() > 0;
  return render::Renderer::layout(fb_w, fb_h, image, ui_insets_px()).scatter;
}

void App::fit_camera(bool include_newest) {
  if (!session->has_model()) return;
  count_camera_fit();
  const Projection p = fit_projection(session->model(), session->start_state().empty() ? nullptr : session->start_state().data(),
                     session->layout().B);
  const render::Rect pane = scatter_pane();
  m_fit_w = pane.w, m_fit_h = pane.h;
  std::vector<float> newest;  // the newest frame: its samples can land outside the data's box
  const TrajectoryLayout& l = session->layout();
  if (include_newest && l.n_slots > 0 && session->computed_steps() > 0 && trajectory->size_bytes() > 0) {
    if (session->compute_path()) session->compute_path()->before_draw();
    newest.resize(l.frame_floats());
    trajectory->download(size_t(session->newest_slot()) * l.frame_bytes(), l.frame_bytes(), newest.data());
  }
  const CameraFit c = diffscope::fit_camera(session->model(), p, pane.h > 0 ? double(pane.w) / pane.h : 1.0,
                                                newest.empty() ? nullptr : newest.data(), l.B);
  settings.view.cam_x = c.cx;
  settings.view.cam_y = c.cy;
  settings.view.cam_half_h = c.half_h;
  m_restored_camera_aspect = 0;  // fitted to this window's pane
}

void App::update_projection() {
  if (!session->has_model() || m_proj_model == &session->model()) return;
  m_proj_model = &session->model();
  const DiffusionModel& m = session->model();
  const Projection p = fit_projection(m, session->start_state().empty() ? nullptr : session->start_state().data(),
                                      session->layout().B);
  renderer->set_projection(p.mean, p.axis0, p.axis1);
  if (settings.view.cam_auto) fit_camera(false);
  renderer->set_data(m.data_samples.data(), m.n_data, m.net.dim);
  if (m.n_data > 0) {
    const auto [lo, hi] = std::minmax_element(m.data_samples.begin(), m.data_samples.end());
    renderer->set_image_range(*lo, *hi > *lo ? *hi : *lo + 1);
  } else {
    renderer->set_image_range(-1, 1);
  }
}

void App::apply_settings() {
  const SamplingSession::Applied applied = session->apply(settings.sampling);
  settings.sampling = applied.settings;  // the clamped (or, after a failed run, the kept) settings
  if (applied.restarted) {
    cursor = 0;
    replaying = false;
    if (settings.view.follow_newest) playing = true;  // watch the re-simulation
    m_field_t = -2;
  }
}

void App::advance_simulation() {
  if (!session->has_model()) return;
  int max_steps = settings.view.steps_per_frame;
  double budget_ms = 0;
  if (max_steps <= 0) {
    if (session->compute_path() && session->compute_path()->is_gpu()) {
      max_steps = session->n_steps();
    } else {
      max_steps = session->n_steps();
      budget_ms = 14.0;  // keep the window responsive on the CPU
    }
  }
  if (session->complete() && settings.view.loop_resimulate && shown_frame() >= session->n_steps()) {
    settings.sampling.seed += 1;  // a new run with the next seed, computed in this same frame
    apply_settings();
  }
  session->tick(max_steps, budget_ms);
}

void App::update_cursor(double dt) {
  (void)dt;
  const int computed = session->computed_steps();
  if (playing) {
    if (settings.view.follow_newest && !replaying)
      cursor = computed;
    else
      cursor = std::min<double>(cursor + std::max(0.0f, settings.view.play_speed), computed);
    if (replaying && session->complete() && cursor >= computed) replaying = false;
  }
  cursor = std::clamp<double>(cursor, 0, computed);
  if (m_pending_frame >= 0 && session->has_model() &&
      (computed >= m_pending_frame || (session->complete() && m_pending_frame > computed))) {
    cursor = std::min(m_pending_frame, computed);  // a restored export's shown frame
    playing = false;
    replaying = false;
    m_pending_frame = -1;
  }
}

void App::update_field() {
  if (!settings.view.show_field || !session->has_model() || session->dim() != 2 || !session->compute_path()) return;
  const int t = field_timestep(session->table().t, shown_frame());
  const ViewSettings& v = settings.view;
  const int grid = std::clamp(v.field_grid, 4, 96);
  const render::Rect r = scatter_pane();
  const double aspect = r.h > 0 ? double(r.w) / r.h : 1.0;
  if (t == m_field_t && grid == m_field_grid && v.field_x0 == m_field_x0 && m_field_model == &session->model() &&
      m_field_cam[0] == v.cam_x && m_field_cam[1] == v.cam_y && m_field_cam[2] == v.cam_half_h * aspect)
    return;
  m_field_t = t;
  m_field_grid = grid;
  m_field_x0 = v.field_x0;
  m_field_model = &session->model();
  m_field_cam[0] = v.cam_x, m_field_cam[1] = v.cam_y, m_field_cam[2] = v.cam_half_h * aspect;
  try {
    m_field_lines = field_lines({v.cam_x, v.cam_y, v.cam_half_h}, aspect, grid, v.field_x0, [&](const float* p, int n, float* out) {
      session->compute_path()->field(p, n, t, v.field_x0, out);
    });
  } catch (const std::exception& e) {
    status_line = std::string("field: ") + e.what();
    status_is_error = true;
    return;
  }
  renderer->set_field_lines(m_field_lines);
}

void App::handle_view_input() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantCaptureMouse || !session->has_model()) return;
  const render::Rect r = scatter_pane();
  if (r.h <= 0) return;
  const float sx = io.DisplayFramebufferScale.x, sy = io.DisplayFramebufferScale.y;
  const double mx = io.MousePos.x * sx, my = fb_h - io.MousePos.y * sy;  // GL pixels
  if (mx < r.x || mx > r.x + r.w || my < r.y || my > r.y + r.h) return;
  ViewSettings& v = settings.view;
  const double px_to_data = 2.0 * v.cam_half_h / r.h;
  if (io.MouseWheel != 0) {
    // Zoom about the point under the mouse.
    const double wx = v.cam_x + (mx - (r.x + 0.5 * r.w)) * px_to_data;
    const double wy = v.cam_y + (my - (r.y + 0.5 * r.h)) * px_to_data;
    const double f = std::pow(0.88, io.MouseWheel);
    v.cam_half_h = std::clamp(v.cam_half_h * f, 1e-3, 1e4);
    v.cam_x = wx + (v.cam_x - wx) * f;
    v.cam_y = wy + (v.cam_y - wy) * f;
    v.cam_auto = false;
    m_restored_camera_aspect = 0;
  }
  if (ImGui::IsMouseDragging(ImGuiMouseButton_Left, 0.0f) || ImGui::IsMouseDragging(ImGuiMouseButton_Right, 0.0f)) {
    v.cam_x -= io.MouseDelta.x * sx * px_to_data;
    v.cam_y += io.MouseDelta.y * sy * px_to_data;
    v.cam_auto = false;
    m_restored_camera_aspect = 0;
  }
}

void App::handle_keys() {
  const std::vector<KeyPress> presses = keys.take();
  // The single-key shortcuts act only when no widget has the keyboard: a text field being typed in, a widget
  // held or edited (a slider dragged, a number typed after Ctrl+click), a popup. Those keys are the widget's.
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || io.WantCaptureKeyboard || ImGui::IsAnyItemActive()) return;
  for (const KeyPress& p : presses) on_key(p);
}

void App::on_key(const KeyPress& p) {
  const bool arrow = p.key == kKeyLeft || p.key == kKeyRight;
  if (p.repeat && !arrow) return;
  if (p.key == kKeySpace) toggle_play();
  if (p.key == kKeyLeft) step_cursor(p.shift ? -10 : -1);
  if (p.key == kKeyRight) step_cursor(p.shift ? 10 : 1);
  if (p.key == kKeyHome) playing = false, cursor = 0;
  if (p.key == kKeyEnd) playing = false, cursor = session->computed_steps();
  if (p.key == kKeyS && !p.ctrl) request_snapshot();
  if (p.key == kKeyV && !p.ctrl) m_want_video = true;  // the Export section's video: first frame to the shown one
  if (p.key == kKeyH) {
    settings.view.show_ui = !settings.view.show_ui;
    m_ui_hidden_at = ImGui::GetTime();
  }
}

void App::frame(int w, int h) {
  fb_w = w;
  fb_h = h;
  const double t = now_s();
  const double dt = t - m_last_time;
  m_last_time = t;
  if (backend_changed) {
    backend_changed = false;
    select_backend(backend_choice);
  }

  apply_settings();
  probe.mark(FramePhase::apply);
  advance_simulation();
  probe.mark(FramePhase::enqueue);
  update_cursor(dt);
  update_projection();
  // The automatic camera (docs/PERFORMANCE.md "The live loop"): fitted to the data and the start-noise box on
  // model load and when the pane changes size; never to a run's samples, which would need a read-back.
  if (settings.view.cam_auto && session->has_model()) {
    const render::Rect pane = scatter_pane();
    if (pane.w != m_fit_w || pane.h != m_fit_h) fit_camera(false);
  }
  probe.mark(FramePhase::camera);
  update_field();
  probe.mark(FramePhase::field);
  handle_view_input();
  if (exporter->video_active() || exporter->sequence_active()) exporter->tick(export_view());
  probe.mark(FramePhase::other);

  ComputeTimings ct;
  if (session->compute_path()) {
    session->compute_path()->before_draw();
    ct = session->compute_path()->take_timings();
  }
  probe.mark(FramePhase::enqueue);
  const render::SavedFramebuffer target;
  draw_timer.begin();
  renderer->draw_scene(scene_input(shown_slot()), w, h);
  draw_timer.end();
  probe.mark(FramePhase::scene_draw);
  if (m_want_snapshot) {
    m_want_snapshot = false;
    run_export(ExportKind::Snapshot);
    probe.mark(FramePhase::other);
  }
  if (m_want_video) {  // V: started here, one frame encoded per UI frame (Exporter::tick)
    m_want_video = false;
    const ExportResult r = run_export(ExportKind::Video);
    status_line = r.ok ? "video: writing " + r.path : "video: error: " + r.error;
    status_is_error = !r.ok;
  }
  if (settings.view.show_ui)
    draw_panels(*this);
  else if (ImGui::GetTime() - m_ui_hidden_at < 4.0)  // for a few seconds: how to get the panels back
    draw_hidden_ui_hint(*this);
  probe.mark(FramePhase::imgui_build);
  // After the panels: a click that gave a text field the keyboard in this same frame keeps the keys from the
  // shortcuts too. A snapshot or video asked for here starts in the next frame.
  handle_keys();
  probe.mark(FramePhase::other);

  // Figures for the timing panel (the phase split is the last finished frame's).
  stats.frame_ms = dt * 1e3;
  stats.fps = ImGui::GetIO().Framerate;
  stats.draw_gpu_ms = draw_timer.last_ms();
  stats.steps_ms = ct.steps_ms;  // launches whose timing finished this frame (enqueued a frame or more earlier)
  stats.map_ms = ct.map_ms;
  stats.unmap_ms = ct.unmap_ms;
  stats.upload_ms = ct.upload_ms;
  stats.steps_this_frame = ct.steps;
  stats.frame_ms_history.push_back(float(dt * 1e3));
  while (stats.frame_ms_history.size() > 240) stats.frame_ms_history.pop_front();
  autosave_settings();
  probe.mark(FramePhase::autosave);
}

AppSettings App::settings_to_persist() const {
  AppSettings s = settings;
  // A scheduler config is not saved (the field is empty after a relaunch): neither is the spacing it set.
  if (const SchedulerConfig* c = session ? session->scheduler_config() : nullptr;
      c && m_spacing_before_config && s.sampling.spacing == c->spacing)
    s.sampling.spacing = *m_spacing_before_config;
  return s;
}

void App::autosave_settings() {
  if (!opts.persist) return;
  const std::string now = to_json(settings_to_persist()).dump();
  const double t = ImGui::GetTime();
  if (m_saved_settings.empty()) m_saved_settings = now;  // as loaded
  if (now == m_saved_settings) return;
  if (now != m_pending_settings) {  // still changing (a drag): wait until it has rested for a second
    m_pending_settings = now;
    m_pending_since = t;
  } else if (t - m_pending_since >= 1.0) {
    save_settings();
    m_saved_settings = now;
  }
}

void App::save_settings() {
  if (!opts.persist) return;
  std::error_code ec;
  std::filesystem::create_directories(config_dir, ec);
  std::string err, note;
  // Command-line values the user did not change in the UI are saved as they were before this run.
  const AppSettings to_save = app_settings_from_json(m_run_only.to_persist(to_json(settings_to_persist())), &note);
  if (!save_app_settings(config_dir + "/settings.json", to_save, &err)) {
    status_line = err;
    status_is_error = true;
  }
}

void App::shutdown() {
  save_settings();
  if (opts.persist && ImGui::GetIO().IniFilename) ImGui::SaveIniSettingsToDisk(ImGui::GetIO().IniFilename);
  session.reset();
  renderer.reset();
  trajectory.reset();
  exporter.reset();
}

}  // namespace diffscope::ui
