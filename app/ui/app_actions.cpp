// app_actions.cpp — the one place the App applies what the user asks (Actions from the widgets, the shortcut
// keys, a dropped file, a headless script line), and the settings' persistence: marked dirty by the widgets'
// edits and the applied actions, written a second after the last change (no serialisation in a quiet frame).
#include <imgui.h>

#include <filesystem>

#include "picture/restore.h"
#include "session/settings_io.h"
#include "session/settings_keys.h"
#include "session/field_view.h"
#include "ui/app.h"
#include "ui/keys.h"

namespace diffscope::ui {

std::optional<Action> key_action(const KeyPress& p) {
  const bool arrow = p.key == kKeyLeft || p.key == kKeyRight;
  if (p.repeat && !arrow) return std::nullopt;
  switch (p.key) {
    case kKeySpace: return Action::simple(ActionKind::TogglePlay);
    case kKeyLeft: return Action::step_frames(p.shift ? -10 : -1);
    case kKeyRight: return Action::step_frames(p.shift ? 10 : 1);
    case kKeyHome: return Action::show_frame(0);
    case kKeyEnd: return Action::show_frame(-1);
    case kKeyS: return p.ctrl ? std::nullopt : std::optional<Action>(Action::simple(ActionKind::Snapshot));
    case kKeyV: return p.ctrl ? std::nullopt : std::optional<Action>(Action::simple(ActionKind::Video));
    case kKeyH: return Action::simple(ActionKind::ToggleUi);
    case kKeyD: return p.ctrl ? std::nullopt : std::optional<Action>(Action::simple(ActionKind::CycleViewMode));
    case kKeyZ: return p.ctrl ? std::optional<Action>(Action::train("brush_undo")) : std::nullopt;
    default: return std::nullopt;
  }
}

namespace {
// The actions that change the settings (the others move the view of the run, export, or open a section).
bool changes_settings(ActionKind k) {
  switch (k) {
    case ActionKind::LoadModel:
    case ActionKind::LoadSchedulerConfig:
    case ActionKind::SelectBackend:
    case ActionKind::Restore:
    case ActionKind::SetSetting:
    case ActionKind::Pick:
    case ActionKind::GridClick:
    case ActionKind::ToggleUi:
    case ActionKind::CycleViewMode:
    case ActionKind::FitView: return true;
    default: return false;
  }
}
}  // namespace

void App::apply_actions() {
  while (!m_actions.empty()) {
    const Action a = std::move(m_actions.front());
    m_actions.erase(m_actions.begin());
    apply(a);
  }
}

void App::apply(const Action& a) {
  m_outcome = {};
  switch (a.kind) {
    case ActionKind::LoadModel: load_model(a.text); break;
    case ActionKind::LoadSchedulerConfig: load_scheduler_config(a.text); break;
    case ActionKind::SelectBackend: select_backend(a.text); break;
    case ActionKind::Restore: m_outcome.ok = restore(a.text); break;
    case ActionKind::SetSetting: set_setting(a.text, a.value); break;
    case ActionKind::RestartRun: m_session->restart(), m_cursor = 0; break;
    case ActionKind::TogglePlay: toggle_play(); break;
    case ActionKind::StepFrames: step_cursor(a.number); break;
    case ActionKind::ShowFrame: show_frame(a.number); break;
    case ActionKind::ToggleUi:
      m_settings.view.show_ui = !m_settings.view.show_ui;
      m_ui_hidden_at = ImGui::GetTime();
      break;
    case ActionKind::CycleViewMode:  // points -> density -> both -> points
      m_settings.view.view_mode = static_cast<ViewMode>((static_cast<int>(m_settings.view.view_mode) + 1) % 3);
      break;
    case ActionKind::FitView:
      m_settings.view.cam_auto = true;
      fit_camera(true);  // the user asked: the newest frame's samples count too (one read-back)
      break;
    case ActionKind::Snapshot: m_want_snapshot = true; break;
    case ActionKind::Video: m_want_video = true; break;
    case ActionKind::Export:
      if (!a.value.empty()) m_exporter->video.fps = std::stoi(a.value);
      run_export(static_cast<ExportKind>(a.number), a.text);
      break;
    case ActionKind::OpenSection:
      if (a.text == "Kernels") m_ui.open_kernels = true;
      else m_ui.open_sections.insert(a.text);
      break;
    case ActionKind::OpenSchedule: m_ui.open_schedule = true; break;
    case ActionKind::RunBench: run_bench(a.text, a.value); break;
    case ActionKind::Pick: {
      const size_t comma = a.text.find(',');
      pick_at(std::stod(a.text.substr(0, comma)), std::stod(a.text.substr(comma + 1)), a.number != 0);
      break;
    }
    case ActionKind::Train: train_action(a); break;
    case ActionKind::GridClick: click_grid(a.number); break;
  }
  if (changes_settings(a.kind)) mark_settings_dirty();
}

void App::set_setting(const std::string& key, const std::string& value) {
  const SchedulerConfig* config = m_session->scheduler_config();
  const std::optional<Family> before = m_settings.sampling.prediction_type;
  apply_setting(m_settings, key, value, "set " + key, &m_outcome.note);  // out of range: refused (SEMANTICS §3)
  if (!m_session->has_model()) return;
  const DiffusionModel& m = m_session->model();
  // A new family whose t_start means another thing (a timestep, or an index into a list): its default there.
  if (t_start_is_index(gui_family(m, before)) != t_start_is_index(gui_family(m, m_settings.sampling.prediction_type)))
    m_settings.sampling.t_start = family_default_t_start(m, m_settings.sampling.prediction_type);
  check_model_ranges(m_settings.sampling, m, m_session->compute_path() && m_session->compute_path()->is_gpu(),
                     {{key, "set " + key}});
}

void App::show_frame(int j) {
  m_playing = false;
  m_cursor = j < 0 ? m_session->computed_steps() : std::min(j, m_session->computed_steps());
}

void App::run_bench(const std::string& backend, const std::string& filter) {
  m_ui.open_kernels = true;
  if (backend == "gpu") {
    m_outcome.ok = m_bench.run_gpu(filter);
    if (!m_outcome.ok) m_outcome.note = m_bench.gpu_note();
  } else if (m_session->has_model()) {
    m_bench.run(m_session->model(), m_bench.config);
  }
}

bool App::restore(const std::string& file) {
  try {
    std::string note;
    const RestorePlan plan = plan_restore(read_sidecar(file, &note, "restore"));
    AppSettings next = m_settings;
    for (const auto& [k, v] : plan.sets) apply_setting(next, k, v);  // all or nothing
    m_settings = next;
    load_model(plan.model.empty() ? m_session->model().path : plan.model, false);  // the sidecar's t_start
    m_pending_frame = plan.frame;
    m_restored_camera_aspect = plan.camera_aspect;
    note += plan.note;
    m_exporter->messages.push_back("restored " + file + (note.empty() ? "" : ": " + note));
    return true;
  } catch (const std::exception& e) {
    m_exporter->messages.push_back(std::string("error: ") + e.what());
    return false;
  }
}

void App::mark_settings_dirty() {
  if (!m_settings_dirty) ++m_dirty_marks;
  m_settings_dirty = true;
  m_dirty_since = ImGui::GetTime();
}

AppSettings App::settings_to_persist() const {
  AppSettings s = m_settings;
  // A scheduler config is not saved (the field is empty after a relaunch): neither is the spacing it set.
  if (const SchedulerConfig* c = m_session ? m_session->scheduler_config() : nullptr;
      c && m_spacing_before_config && s.sampling.spacing == c->spacing)
    s.sampling.spacing = *m_spacing_before_config;
  // A family override is for the session, as a scheduler config is: a relaunch reads every file's own family (an
  // override saved would make the next session's default model, which names no family, run as another).
  s.sampling.prediction_type.reset();
  // A training preview is a temporary file: the model shown before the first one is kept instead.
  if (!m_train_dir.empty() && s.sampling.model_path.rfind(m_train_dir, 0) == 0)
    s.sampling.model_path = m_model_before_training;
  return s;
}

void App::autosave_settings() {
  if (!m_opts.persist) return;
  if (m_saved_settings.empty()) {  // the first frame: the settings as loaded
    m_saved_settings = to_json(settings_to_persist()).dump();
    ++m_serialisations;
  }
  // Still changing (a drag): wait until the settings have rested for a second.
  if (!m_settings_dirty || ImGui::GetTime() - m_dirty_since < 1.0) return;
  m_settings_dirty = false;
  const std::string now = to_json(settings_to_persist()).dump();
  ++m_serialisations;
  if (now == m_saved_settings) return;  // changed and changed back
  save_settings();
  m_saved_settings = now;
}

void App::save_settings() {
  if (!m_opts.persist) return;
  std::error_code ec;
  std::filesystem::create_directories(m_config_dir, ec);
  std::string err, note;
  // Command-line values the user did not change in the UI are saved as they were before this run.
  const AppSettings to_save = app_settings_from_json(m_run_only.to_persist(to_json(settings_to_persist())), &note);
  if (!save_app_settings(m_config_dir + "/settings.json", to_save, &err)) {
    m_status_line = err;
    m_status_is_error = true;
  }
}

}  // namespace diffscope::ui
