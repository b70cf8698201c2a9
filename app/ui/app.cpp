// app.cpp — the frame: settings -> steps -> scene -> panels (the loop around it: shell/frame_loop.h; the
// panels: panel_*.cpp).
#include "ui/app.h"

#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
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
#include "session/field_view.h"
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

App::App(AppOptions o, ComputeServices s) : m_opts(std::move(o)), m_services(std::move(s)) {
  m_bench.set_gpu(m_services.cuda_available, m_services.gpu_bench, m_services.gpu_missing);
  m_training = std::make_unique<TrainingSession>(m_services.make_trainer);
}
App::~App() = default;

void App::init(float scale) {
  m_content_scale = scale > 0 ? scale : 1.0f;
  m_ui.layout_audit.enabled = m_opts.headless;  // scripts and tests read it (`expect clipped`); the window needs none
  m_config_dir = m_opts.config_dir.empty() ? default_config_dir() : m_opts.config_dir;
  if (m_opts.persist) m_settings = load_app_settings(m_config_dir + "/settings.json", &m_settings_note);

  init_style();

  if (const size_t max_ssbo = render::max_storage_block_bytes(); max_ssbo > 0)
    m_max_budget_mb = static_cast<int>(std::min<size_t>(max_ssbo >> 20, 65536));
  m_trajectory = std::make_unique<render::GlTrajectoryBuffer>();
  m_renderer = std::make_unique<render::Renderer>();
  m_session = std::make_unique<SamplingSession>(m_trajectory.get());
  m_session->set_max_budget_mb(m_max_budget_mb);
  m_exporter = std::make_unique<Exporter>();

  m_settings.export_dir = resolve_export_dir(m_settings.export_dir);  // shown and saved as the full folder
  // Command-line values (SEMANTICS §3): refused when out of range (exit 2), and for this run only (not saved).
  const nlohmann::json saved = to_json(m_settings);
  std::vector<std::pair<std::string, std::string>> given;  // (key, argument) of each command-line value
  if (!m_opts.backend.empty()) m_settings.sampling.backend = m_opts.backend;
  for (const SettingOverride& o : m_opts.sets) {
    apply_setting(m_settings, o.key, o.value, o.arg, &m_settings_note);  // an old name: a note
    given.emplace_back(canonical_setting_key(o.key), o.arg);
  }
  auto is_given = [&](const char* key) {
    return std::any_of(given.begin(), given.end(), [&](const auto& g) { return g.first == key; });
  };
  m_backend_choice = m_settings.sampling.backend;
  std::string note;
  auto path = m_services.make_path(m_backend_choice, m_trajectory.get(), &note);
  m_session->set_compute_path(std::move(path), note);
  if (!m_session->compute_path()->is_gpu()) apply_cpu_defaults(m_settings, is_given("n"), is_given("trail_frames"));

  load_initial_model();
  // The default t_start is the model's top (SEMANTICS §3): T - 1, or below the first unusable t.
  // On a flow or edm list t_start is an index, 0 by default (session/field_view.h).
  if (m_session->has_model() && !is_given("t_start") && m_settings.sampling.t_start == SamplingSettings{}.t_start &&
      t_start_max_usable(m_session->model().schedule) >= 0)
    m_settings.sampling.t_start =
        family_default_t_start(m_session->model(), m_settings.sampling.prediction_type);
  if (m_session->has_model()) {
    check_model_ranges(m_settings.sampling, m_session->model(), m_session->compute_path()->is_gpu(), given);
    if (m_opts.persist)
      m_settings_note +=
          model_clamp_note(m_settings.sampling, m_session->model().schedule, is_given("t_start"), is_given("steps"));
  }
  m_run_only = RunOnlyValues(saved, to_json(m_settings), !m_opts.model.empty());
  m_pending_frame = m_opts.frame;
  m_restored_camera_aspect = m_opts.camera_aspect;
  m_last_time = now_s();
}

// The ini file (when persisting), the dark style and the font, scaled by the UI scale.
void App::init_style() {
  ImGuiIO& io = ImGui::GetIO();
  static std::string ini_path;
  if (m_opts.persist) {
    std::error_code ec;
    std::filesystem::create_directories(m_config_dir, ec);
    ini_path = m_config_dir + "/imgui.ini";
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
  style.ScaleAllSizes(m_content_scale);
  ImFontConfig font;
  font.SizePixels = std::round(13.0f * m_content_scale);
  io.Fonts->Clear();
  io.Fonts->AddFontDefault(&font);
}

void App::load_initial_model() {
  if (!m_opts.model.empty()) {  // a command-line model: refused in headless runs, the default shown in the window
    std::string path;
    try {
      path = resolve_model_arg("--model", m_opts.model);  // a mistyped bundled name lists the bundled ones
      load_model(path);
      if (!m_model_error.empty()) m_input_error = "--model = " + m_opts.model + ": " + after_label(m_model_error, path);
    } catch (const InvalidInput& e) {
      m_input_error = e.what();
    }
    if (m_input_error.empty()) return;
    if (!default_model_path().empty()) load_model(default_model_path());
    m_model_error = m_input_error + (m_session->has_model() ? "  (showing the default model instead)" : "");
    return;
  }
  std::string model = m_settings.sampling.model_path;
  std::error_code ec;
  if (!model.empty() && !std::filesystem::exists(model, ec)) {
    m_settings_note += "model " + model + " from the settings is gone; opening the default\n";
    model.clear();
  }
  if (model.empty()) model = default_model_path();
  if (model.empty()) {
    m_model_error = "no bundled model found (assets/models/*.safetensors under $DIFFSCOPE_ROOT, the executable's "
                  "../.., or the working directory); open one with the path field or drag and drop";
    return;
  }
  load_model(model);
  // A saved model that no longer loads (truncated, corrupt, unreadable): the default instead, saying why.
  if (m_session->has_model() || model == default_model_path() || default_model_path().empty()) return;
  const std::string why = m_model_error;
  load_model(default_model_path());
  m_model_error =
      "model " + model + " from the settings could not be loaded: " + why +
      (m_session->has_model() ? "  (showing the default model instead)" : "; the default failed too: " + m_model_error);
}

void App::load_model(const std::string& name_or_path, bool t_start_follows) {
  const std::string path = resolve_model(name_or_path);  // bundled names ("digits8x8") or paths
  try {
    const SamplingSettings& s = m_settings.sampling;
    const auto index = [&] { return t_start_is_index(gui_family(m_session->model(), s.prediction_type)); };
    const bool had = m_session->has_model(), index_before = had && index();
    const bool at_top = had && !index_before && s.t_start == t_start_max_usable(m_session->model().schedule);
    m_session->load_model(path);
    // t_start follows the model: at the top of the old range to the new top; a timestep <-> a list index (flow,
    // edm) to the new family's default.
    if (t_start_follows && had && index() != index_before)
      m_settings.sampling.t_start =
          family_default_t_start(m_session->model(), s.prediction_type);
    else if (t_start_follows && at_top && t_start_max_usable(m_session->model().schedule) >= 0)
      m_settings.sampling.t_start = t_start_max_usable(m_session->model().schedule);
    m_exporter->remember_model(m_session->model().path);
    m_model_error.clear();
    m_ui.path_field = short_path(path);
    m_settings.sampling.model_path = m_session->model().path;
    if (m_settings.view.cam_auto) fit_camera(false);
    m_proj_model = nullptr;
    m_cursor = 0;
    m_playing = true;
  } catch (const std::exception& e) {
    m_model_error = e.what();
    if (m_session->has_model()) m_model_error += "  (still showing " + m_session->model().path + ")";
  }
}

void App::load_scheduler_config(const std::string& path) {
  try {
    if (path.empty()) {
      // The spacing the config set goes back to the user's own; one picked while it was applied stays.
      if (const SchedulerConfig* c = m_session->scheduler_config(); c && m_spacing_before_config &&
                                                                  m_settings.sampling.spacing == c->spacing)
        m_settings.sampling.spacing = *m_spacing_before_config;
      m_spacing_before_config.reset();
      m_session->set_scheduler_config(nullptr);
    } else {
      // absolute, so that the sidecar's command line finds it from anywhere
      auto config = std::make_shared<const SchedulerConfig>(
          diffscope::load_scheduler_config(std::filesystem::absolute(path).lexically_normal().string()));
      const SchedulerConfig* old = m_session->scheduler_config();
      if (!old || m_settings.sampling.spacing != old->spacing) m_spacing_before_config = m_settings.sampling.spacing;
      m_session->set_scheduler_config(config);
      m_settings.sampling.spacing = config->spacing;  // ddpm and ddpm-mean keep the default (SEMANTICS §3)
    }
    m_model_error.clear();
    m_cursor = 0;
  } catch (const std::exception& e) {
    m_model_error = std::string("scheduler config: ") + e.what();
  }
}

void App::select_backend(const std::string& backend) {
  m_backend_choice = backend;
  m_settings.sampling.backend = backend;
  std::string note;
  auto path = m_services.make_path(backend, m_trajectory.get(), &note);
  m_session->set_compute_path(std::move(path), note);
  m_cursor = 0;
}

bool App::at_end() const {
  return m_session && m_session->has_model() && m_session->complete() && shown_frame() >= m_session->n_steps();
}

void App::toggle_play() {
  // A finished run replays at the chosen speed from the shown frame, or from the start when at the end: one
  // press, also while "playing" has simply reached the last frame.
  if (m_session->complete() && (!m_playing || at_end())) {
    if (at_end()) m_cursor = 0;
    m_replaying = true;
    m_playing = true;
    return;
  }
  m_playing = !m_playing;
}

void App::step_cursor(int delta) {
  m_playing = false;
  m_replaying = false;
  const int stride = std::max(1, m_session->layout().stride);
  int j = shown_frame();
  if (stride > 1) {  // move between kept frames
    int s = m_session->layout().slot_at_or_before(j) + (delta > 0 ? 1 : (j % stride == 0 ? -1 : 0));
    s = std::clamp(s, 0, m_session->newest_slot());
    m_cursor = m_session->layout().frame_of_slot(s);
    return;
  }
  m_cursor = std::clamp(j + delta, 0, m_session->computed_steps());
}

int App::shown_frame() const {
  if (!m_session || !m_session->has_model()) return 0;
  return std::clamp(static_cast<int>(std::floor(m_cursor + 1e-6)), 0, m_session->computed_steps());
}

int App::shown_slot() const {
  if (!m_session || !m_session->has_model() || m_session->layout().n_slots == 0) return 0;
  return std::min(m_session->layout().slot_at_or_before(shown_frame()), m_session->newest_slot());
}

render::SceneInput App::scene_input(int slot) const {
  if (!m_session->has_model() || m_session->layout().n_slots == 0) return {};
  render::SceneInput in =
      picture_scene(m_settings.view, m_content_scale, m_trajectory.get(), m_session->layout().B,
                    m_session->layout().dim, slot, m_session->is_image_model() ? m_session->image_side() : 0);
  in.inset = ui_insets_px();
  in.contours = density_contours(m_settings.view, m_session->model(), &m_session->table(),
                                 m_session->layout().frame_of_slot(slot));
  in.pick_slots = m_session->newest_slot() + 1;
  return in;
}

ExportView App::export_view() const {
  ExportView v;
  v.session = m_session.get();
  v.settings = &m_settings;
  v.renderer = m_renderer.get();
  v.trajectory = m_trajectory.get();
  v.window_field = &m_field_lines;
  v.shown_frame = shown_frame();
  v.shown_slot = shown_slot();
  v.ui_scale = m_content_scale;
  const render::Rect pane = scatter_pane();
  v.camera_aspect = pane.h > 0 ? double(pane.w) / pane.h : 1.0;
  if (m_restored_camera_aspect > 0 && !m_settings.view.cam_auto) v.camera_aspect = m_restored_camera_aspect;
  v.timings = {{"frame_ms", m_stats.frame_ms}, {"gl_draw_ms", m_stats.draw_gpu_ms}, {"interop_map_ms", m_stats.map_ms},
               {"interop_unmap_ms", m_stats.unmap_ms}};
  return v;
}

const std::vector<std::string>& named_item_names() {
  static const std::vector<std::string> names{"model_path", "scheduler_config", "export_folder", "train_npy",
                                              "train_save_path"};
  return names;
}

void UiState::name_item(const std::string& name) {
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  named_items[name] = {a.x, a.y, b.x, b.y};
}

ExportResult App::run_export(ExportKind kind, const std::string& path) {
  ++m_exports_run;
  const render::SavedFramebuffer target;
  const ExportResult r = m_exporter->run(kind, export_view(), path);
  target.restore();
  m_last_export = r;
  if (kind == ExportKind::Snapshot) {
    m_status_line = r.ok ? "snapshot: " + m_exporter->last_path : "snapshot: error: " + r.error;
    m_status_is_error = !r.ok;
  }
  return r;
}

render::Insets App::ui_insets_px() const {
  if (!m_settings.view.show_ui) return {};
  const ImVec2 k = ImGui::GetIO().DisplayFramebufferScale;
  return {int(m_ui.inset_left * k.x), int(m_ui.inset_bottom * k.y), int(m_ui.inset_top * k.y)};
}

render::Rect App::scatter_pane() const {
  const bool image = m_session && m_session->is_image_model() && m_session->image_side() > 0;
  return render::Renderer::layout(m_fb_w, m_fb_h, image, ui_insets_px()).scatter;
}

void App::fit_camera(bool include_newest) {
  if (!m_session->has_model()) return;
  count_camera_fit();
  const Projection p =
      fit_projection(m_session->model(), m_session->start_state().empty() ? nullptr : m_session->start_state().data(),
                     m_session->layout().B);
  const render::Rect pane = scatter_pane();
  m_fit_w = pane.w, m_fit_h = pane.h;
  std::vector<float> newest;  // the newest frame: its samples can land outside the data's box
  const TrajectoryLayout& l = m_session->layout();
  if (include_newest && l.n_slots > 0 && m_session->computed_steps() > 0 && m_trajectory->size_bytes() > 0) {
    if (m_session->compute_path()) m_session->compute_path()->before_draw();
    newest.resize(l.frame_floats());
    m_trajectory->download(size_t(m_session->newest_slot()) * l.frame_bytes(), l.frame_bytes(), newest.data());
  }
  const CameraFit c = diffscope::fit_camera(m_session->model(), p, pane.h > 0 ? double(pane.w) / pane.h : 1.0,
                                                newest.empty() ? nullptr : newest.data(), l.B);
  m_settings.view.cam_x = c.cx;
  m_settings.view.cam_y = c.cy;
  m_settings.view.cam_half_h = c.half_h;
  m_restored_camera_aspect = 0;  // fitted to this window's pane
  mark_settings_dirty();
}

void App::update_projection() {
  if (!m_session->has_model() || m_proj_model == &m_session->model()) return;
  m_proj_model = &m_session->model();
  const DiffusionModel& m = m_session->model();
  const Projection p = fit_projection(m, m_session->start_state().empty() ? nullptr : m_session->start_state().data(),
                                      m_session->layout().B);
  m_renderer->set_projection(p.mean, p.axis0, p.axis1);
  if (m_settings.view.cam_auto) fit_camera(false);
  m_renderer->set_data(m.data_samples.data(), m.n_data, m.net.dim);
  if (m.n_data > 0) {
    const auto [lo, hi] = std::minmax_element(m.data_samples.begin(), m.data_samples.end());
    m_renderer->set_image_range(*lo, *hi > *lo ? *hi : *lo + 1);
  } else {
    m_renderer->set_image_range(-1, 1);
  }
}

void App::apply_settings() {
  const SamplingSession::Applied applied = m_session->apply(m_settings.sampling);
  m_settings.sampling = applied.settings;  // the clamped (or, after a failed run, the kept) settings
  m_session->set_start_edits(m_settings.view.start_edits);
  if (applied.restarted || !applied.note.empty()) mark_settings_dirty();  // a new run's settings: a new seed, kept ones
  if (applied.restarted) {
    m_cursor = 0;
    m_replaying = false;
    if (m_settings.view.follow_newest) m_playing = true;  // watch the re-simulation
    m_field_frame = -2;
  }
}

void App::advance_simulation() {
  if (!m_session->has_model()) return;
  int max_steps = m_settings.view.steps_per_frame;
  double budget_ms = 0;
  if (max_steps <= 0) {
    if (m_session->compute_path() && m_session->compute_path()->is_gpu()) {
      max_steps = m_session->n_steps();
    } else {
      max_steps = m_session->n_steps();
      budget_ms = 14.0;  // keep the window responsive on the CPU
    }
  }
  if (m_session->complete() && m_settings.view.loop_resimulate && shown_frame() >= m_session->n_steps()) {
    m_settings.sampling.seed += 1;  // a new run with the next seed, computed in this same frame
    apply_settings();
  }
  m_session->tick(max_steps, budget_ms);
}

void App::update_cursor(double dt) {
  (void)dt;
  const int computed = m_session->computed_steps();
  if (m_playing) {
    if (m_settings.view.follow_newest && !m_replaying)
      m_cursor = computed;
    else
      m_cursor = std::min<double>(m_cursor + std::max(0.0f, m_settings.view.play_speed), computed);
    if (m_replaying && m_session->complete() && m_cursor >= computed) m_replaying = false;
  }
  m_cursor = std::clamp<double>(m_cursor, 0, computed);
  if (m_pending_frame >= 0 && m_session->has_model() &&
      (computed >= m_pending_frame || (m_session->complete() && m_pending_frame > computed))) {
    m_cursor = std::min(m_pending_frame, computed);  // a restored export's shown frame
    m_playing = false;
    m_replaying = false;
    m_pending_frame = -1;
  }
}

void App::update_field() {
  if (!m_settings.view.show_field || !m_session->has_model() || m_session->dim() != 2 || !m_session->compute_path())
    return;
  const int frame = std::clamp(shown_frame(), 0, std::max(0, m_session->n_steps() - 1));
  const ViewSettings& v = m_settings.view;
  const int grid = std::clamp(v.field_grid, 4, 96);
  const render::Rect r = scatter_pane();
  const double aspect = r.h > 0 ? double(r.w) / r.h : 1.0;
  if (frame == m_field_frame && grid == m_field_grid && v.field_quantity == m_field_quantity &&
      m_field_model == &m_session->model() && m_field_table == m_session->table().levels.data() &&
      m_field_cam[0] == v.cam_x && m_field_cam[1] == v.cam_y && m_field_cam[2] == v.cam_half_h * aspect)
    return;
  m_field_frame = frame;
  m_field_grid = grid;
  m_field_quantity = v.field_quantity;
  m_field_model = &m_session->model();
  m_field_table = m_session->table().levels.data();
  m_field_cam[0] = v.cam_x, m_field_cam[1] = v.cam_y, m_field_cam[2] = v.cam_half_h * aspect;
  try {
    // The family's quantity at the shown frame's level (session/field_view.h); the path's eps field where it applies.
    const FieldLevel lv = field_level(m_session->model(), m_session->table(), frame);
    ComputePath* path = m_session->compute_path();
    const bool x0 = v.field_quantity == FieldQuantity::X0;
    m_field_lines = field_lines({v.cam_x, v.cam_y, v.cam_half_h}, aspect, grid, x0, [&](const float* p, int n, float* out) {
      m_field_largest = eval_field(m_session->model(), lv, v.field_quantity, p, n, out,
                                   [&](const float* q, int k, int t, bool want_x0, float* o) { path->field(q, k, t, want_x0, o); });
    });
  } catch (const std::exception& e) {
    m_status_line = std::string("field: ") + e.what();
    m_status_is_error = true;
    return;
  }
  m_renderer->set_field_lines(m_field_lines);
}

void App::handle_view_input() {
  ImGuiIO& io = ImGui::GetIO();
  if (io.WantCaptureMouse || !m_session->has_model()) return;
  const render::Rect r = scatter_pane();
  if (r.h <= 0) return;
  const float sx = io.DisplayFramebufferScale.x, sy = io.DisplayFramebufferScale.y;
  const double mx = io.MousePos.x * sx, my = m_fb_h - io.MousePos.y * sy;  // GL pixels
  if (mx < r.x || mx > r.x + r.w || my < r.y || my > r.y + r.h) return;
  ViewSettings& v = m_settings.view;
  if (grid_shown()) return handle_grid_input(mx, my);  // a click makes a cell the single view
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
    mark_settings_dirty();
  }
  const double wx = v.cam_x + (mx - (r.x + 0.5 * r.w)) * px_to_data;
  const double wy = v.cam_y + (my - (r.y + 0.5 * r.h)) * px_to_data;
  // The brush (training panel, 2D) takes the left button from picking.
  const bool holds_start = m_ui.brush_mode != 0 && m_session->dim() == 2 ? handle_brush_input(wx, wy)
                                                                          : handle_pick_input(wx, wy);
  if (!holds_start &&
      (ImGui::IsMouseDragging(ImGuiMouseButton_Left, 0.0f) || ImGui::IsMouseDragging(ImGuiMouseButton_Right, 0.0f))) {
    v.cam_x -= io.MouseDelta.x * sx * px_to_data;
    v.cam_y += io.MouseDelta.y * sy * px_to_data;
    v.cam_auto = false;
    m_restored_camera_aspect = 0;
    mark_settings_dirty();
  }
}

void App::handle_keys() {
  const std::vector<KeyPress> presses = m_keys.take();
  // The single-key shortcuts act only when no widget has the keyboard: a text field being typed in, a widget
  // held or edited (a slider dragged, a number typed after Ctrl+click), a popup. Those keys are the widget's.
  const ImGuiIO& io = ImGui::GetIO();
  if (io.WantTextInput || io.WantCaptureKeyboard || ImGui::IsAnyItemActive()) return;
  for (const KeyPress& p : presses) on_key(p);
}

void App::on_key(const KeyPress& p) {
  if (std::optional<Action> a = key_action(p)) push(std::move(*a));
}

std::optional<bool> App::take_vsync_change() {
  if (m_vsync_applied && *m_vsync_applied == m_settings.view.vsync) return std::nullopt;
  m_vsync_applied = m_settings.view.vsync;
  return m_vsync_applied;
}

void App::frame(int w, int h) {
  m_fb_w = w;
  m_fb_h = h;
  const double t = now_s();
  const double dt = t - m_last_time;
  m_last_time = t;
  apply_actions();  // pushed since the last frame: a dropped file, a script line
  poll_training();

  apply_settings();
  m_probe.mark(FramePhase::apply);
  advance_simulation();
  m_probe.mark(FramePhase::enqueue);
  update_cursor(dt);
  update_projection();
  // The automatic camera (docs/PERFORMANCE.md "The live loop"): fitted to the data and the start-noise box on
  // model load and when the pane changes size; never to a run's samples, which would need a read-back.
  if (m_settings.view.cam_auto && m_session->has_model()) {
    const render::Rect pane = scatter_pane();
    if (pane.w != m_fit_w || pane.h != m_fit_h) fit_camera(false);
  }
  m_probe.mark(FramePhase::camera);
  update_grid();
  update_field();
  m_probe.mark(FramePhase::field);
  handle_view_input();
  if (m_exporter->video_active() || m_exporter->sequence_active()) m_exporter->tick(export_view());
  m_probe.mark(FramePhase::other);

  ComputeTimings ct;
  if (m_session->compute_path()) {
    m_session->compute_path()->before_draw();
    ct = m_session->compute_path()->take_timings();
  }
  m_probe.mark(FramePhase::enqueue);
  const render::SavedFramebuffer target;
  m_draw_timer.begin();
  if (grid_shown())
    draw_grid(w, h);
  else
    m_renderer->draw_scene(scene_input(shown_slot()), w, h);
  m_draw_timer.end();
  m_probe.mark(FramePhase::scene_draw);
  draw_ui();
  record_stats(dt, ct);
  autosave_settings();
  m_probe.mark(FramePhase::autosave);
}

// After the scene: the S / V keys' exports, the panels, then the keys and every action pushed in this frame.
void App::draw_ui() {
  if (m_want_snapshot) {
    m_want_snapshot = false;
    run_export(ExportKind::Snapshot);
    m_probe.mark(FramePhase::other);
  }
  if (m_want_video) {  // V: started here, one frame encoded per UI frame (Exporter::tick)
    m_want_video = false;
    const ExportResult r = run_export(ExportKind::Video);
    m_status_line = r.ok ? "video: writing " + r.path : "video: error: " + r.error;
    m_status_is_error = !r.ok;
  }
  if (m_settings.view.show_ui) {
    Panel panel{*this, m_settings, m_ui, *m_exporter, m_bench, m_actions};
    draw_panels(panel);
    if (panel.edited) mark_settings_dirty();
  } else if (ImGui::GetTime() - m_ui_hidden_at < 4.0) {  // for a few seconds: how to get the panels back
    draw_hidden_ui_hint();
  }
  m_probe.mark(FramePhase::imgui_build);
  // After the panels: a click that gave a text field the keyboard in this same frame keeps the keys from the
  // shortcuts too. A snapshot or video asked for here starts in the next frame.
  handle_keys();
  apply_actions();
  m_probe.mark(FramePhase::other);
}

// Figures for the timing panel (the phase split is the last finished frame's).
void App::record_stats(double dt, const ComputeTimings& ct) {
  m_stats.frame_ms = dt * 1e3;
  m_stats.fps = ImGui::GetIO().Framerate;
  m_stats.draw_gpu_ms = m_draw_timer.last_ms();
  m_stats.steps_ms = ct.steps_ms;  // launches whose timing finished this frame (enqueued a frame or more earlier)
  m_stats.map_ms = ct.map_ms;
  m_stats.unmap_ms = ct.unmap_ms;
  m_stats.upload_ms = ct.upload_ms;
  m_stats.steps_this_frame = ct.steps;
  m_stats.frame_ms_history.push_back(float(dt * 1e3));
  while (m_stats.frame_ms_history.size() > 240) m_stats.frame_ms_history.pop_front();
}

void App::shutdown() {
  m_training->stop_and_join();
  for (const std::string& f : m_train_files) std::remove(f.c_str());
  save_settings();
  if (m_opts.persist && ImGui::GetIO().IniFilename) ImGui::SaveIniSettingsToDisk(ImGui::GetIO().IniFilename);
  m_session.reset();
  m_renderer.reset();
  m_trajectory.reset();
  m_exporter.reset();
}

}  // namespace diffscope::ui
