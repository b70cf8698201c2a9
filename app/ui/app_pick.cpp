// app_pick.cpp — picking particles in the 2D view (SEMANTICS §6 "Picked particles and edited starts"): a click
// picks the nearest sample of the shown frame (a compute pass over the trajectory buffer, render/particle_pick.h),
// Shift+click adds it to the picks, and a drag from a picked particle's start moves that start (the session
// re-runs that one row).
#include <imgui.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "render/particle_pick.h"
#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

Action Action::pick(double x, double y, bool add) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g,%.17g", x, y);
  return {ActionKind::Pick, text, "", add ? 1 : 0};
}

double App::pick_radius() const {
  const render::Rect r = scatter_pane();
  return render::kPickRadiusPx * m_content_scale * 2.0 * m_settings.view.cam_half_h / std::max(r.h, 1);
}

void App::pick_at(double x, double y, bool add) {
  if (!m_session->has_model() || m_session->layout().n_slots == 0) {
    m_outcome = {false, "pick: no run to pick from"};
    return;
  }
  if (m_session->compute_path()) m_session->compute_path()->before_draw();  // nothing mapped while GL reads
  const auto t0 = std::chrono::steady_clock::now();
  m_last_pick = m_renderer->pick_nearest(scene_input(shown_slot()), x, y, pick_radius());
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  char note[160];
  if (m_last_pick < 0) {
    std::snprintf(note, sizeof note, "pick: no sample within %.0f px of (%.4g, %.4g)",
                  render::kPickRadiusPx * m_content_scale, x, y);
    m_outcome = {false, note};
    return;
  }
  std::vector<int>& picks = m_settings.view.picks;
  if (!add) picks.clear();
  if (std::find(picks.begin(), picks.end(), m_last_pick) == picks.end()) {
    if (static_cast<int>(picks.size()) >= kMaxPicks) picks.erase(picks.begin());  // the oldest pin makes room
    picks.push_back(m_last_pick);
  }
  std::snprintf(note, sizeof note, "picked sample %d (the search over %d samples took %.2f ms)", m_last_pick,
                m_session->layout().B, ms);
  m_outcome = {true, note};
}

const std::vector<float>& App::pick_path(int row) const {
  const SamplingSession& s = *m_session;
  const int slots = s.has_model() ? s.newest_slot() + 1 : 0;
  char key[160];
  std::snprintf(key, sizeof key, "%d %d %d %d %llu %d ", s.runs_completed(), s.computed_steps(), slots,
                s.layout().B, static_cast<unsigned long long>(s.settings().seed), s.n_steps());
  const std::string k = key + start_edits_text(s.start_edits());
  if (k != m_pick_paths_key) {
    m_pick_paths.clear();
    m_pick_paths_key = k;
  }
  auto it = m_pick_paths.find(row);
  if (it == m_pick_paths.end()) {
    if (s.compute_path()) s.compute_path()->before_draw();
    it = m_pick_paths.emplace(row, m_renderer->pick_row_path(scene_input(shown_slot()), row, slots)).first;
  }
  return it->second;
}

int App::start_handle_at(double x, double y) const {
  if (m_session->dim() != 2) return -1;  // a start is moved in the model's own 2D space only
  const double r = pick_radius();
  int best = -1;
  double best_d2 = r * r;
  for (int row : m_settings.view.picks) {
    const std::vector<float>& p = pick_path(row);
    if (p.size() < 2) continue;
    const double d2 = (p[0] - x) * (p[0] - x) + (p[1] - y) * (p[1] - y);
    if (d2 <= best_d2) best = row, best_d2 = d2;
  }
  return best;
}

bool App::handle_pick_input(double wx, double wy) {
  const ImGuiIO& io = ImGui::GetIO();
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
    m_press_x = io.MousePos.x, m_press_y = io.MousePos.y;
    m_drag_row = m_settings.view.picks.empty() ? -1 : start_handle_at(wx, wy);
  }
  if (m_drag_row >= 0 && ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    if (ImGui::IsMouseDragging(ImGuiMouseButton_Left, 0.0f)) {
      m_settings.view.start_edits =
          with_start_edit(m_settings.view.start_edits, m_drag_row, {float(wx), float(wy)});
      if (static_cast<int>(m_settings.view.start_edits.size()) > kMaxPicks)
        m_settings.view.start_edits.erase(m_settings.view.start_edits.begin());
      m_session->set_start_edits(m_settings.view.start_edits);  // this frame draws the re-run row
      mark_settings_dirty();
    }
    return true;
  }
  if (ImGui::IsMouseReleased(ImGuiMouseButton_Left)) {
    const double moved = std::hypot(io.MousePos.x - m_press_x, io.MousePos.y - m_press_y);
    if (m_drag_row < 0 && moved < 3.0) {
      pick_at(wx, wy, io.KeyShift);
      mark_settings_dirty();
    }
    m_drag_row = -1;
  }
  if (!ImGui::IsMouseDown(ImGuiMouseButton_Left) && !m_settings.view.picks.empty()) {  // hovering a picked sample
    const int slot = shown_slot();
    const double r = pick_radius();
    for (int row : m_settings.view.picks) {
      const std::vector<float>& p = pick_path(row);
      if (static_cast<int>(p.size()) / 2 <= slot) continue;
      if (std::hypot(p[2 * slot] - wx, p[2 * slot + 1] - wy) <= r) {
        pick_tooltip(*this, row);
        break;
      }
    }
  }
  return false;
}

}  // namespace diffscope::ui
