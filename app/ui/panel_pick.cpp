// panel_pick.cpp — the Picks section: the picked particles (remove one, clear all), their edited starts (reset one
// to the run's own start), and the tooltip of a picked particle (its step and noise level at each kept frame).
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "render/particle_pick.h"
#include "session/field_view.h"
#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

std::string frame_level_text(const StepTable& tab, int j) {
  char b[64];
  const int n = tab.steps();
  if (on_family_list(tab) && j >= 0 && j <= n)  // the family's own level: flow s, EDM sigma
    std::snprintf(b, sizeof b, "%s = %.4g", tab.family.family == Family::Flow ? "s" : "sigma", tab.levels[j].time);
  else if (j >= 0 && j < n)
    std::snprintf(b, sizeof b, "t = %d", tab.t[j]);
  else
    std::snprintf(b, sizeof b, "%s", ends_clean(tab) ? "clean" : "after the last step");
  return b;
}

void pick_tooltip(const App& app, int row) {
  const SamplingSession& s = app.session();
  const std::vector<float>& path = app.pick_path(row);
  const int slots = static_cast<int>(path.size() / 2);
  const int every = std::max(1, (slots + 23) / 24);  // at most 24 lines (and the last kept frame)
  ImGui::BeginTooltip();
  if (every > 1)
    ImGui::Text("sample %d: %d kept frames (every %d shown, and the last)", row, slots, every);
  else
    ImGui::Text("sample %d: %d kept frames", row, slots);
  for (int k = 0; k < slots; k += (k + every < slots || k == slots - 1) ? every : std::max(1, slots - 1 - k)) {
    const int j = s.layout().frame_of_slot(k);
    ImGui::Text("step %4d  %-16s (%.4g, %.4g)", j, frame_level_text(s.table(), j).c_str(), path[2 * k],
                path[2 * k + 1]);
  }
  ImGui::EndTooltip();
}

void panel_pick(Panel& p) {
  ViewSettings& v = p.settings.view;
  const float s = p.app.content_scale();
  ImGui::TextWrapped("Click a sample in the 2D view to pick it (within %.0f px), Shift+click to add; drag a picked "
                     "sample's start (the large dot) to re-run it from there.",
                     render::kPickRadiusPx * s);
  int remove = -1;
  for (size_t k = 0; k < v.picks.size(); ++k) {
    ImGui::PushID(static_cast<int>(k));
    if (ImGui::SmallButton("x")) remove = static_cast<int>(k);
    ImGui::SameLine();
    const auto edit = std::find_if(v.start_edits.begin(), v.start_edits.end(),
                                   [&](const StartEdit& e) { return e.row == v.picks[k]; });
    ImGui::Text("sample %d%s", v.picks[k], edit != v.start_edits.end() ? " (start moved)" : "");
    if (ImGui::IsItemHovered() && p.app.session().has_model()) pick_tooltip(p.app, v.picks[k]);
    if (edit != v.start_edits.end()) {
      ImGui::SameLine();
      if (p.edit(ImGui::SmallButton("reset start"))) v.start_edits.erase(edit);
    }
    ImGui::PopID();
  }
  if (remove >= 0 && p.edit(true)) v.picks.erase(v.picks.begin() + remove);
  if (!v.picks.empty() || !v.start_edits.empty()) {
    if (p.edit(ImGui::Button("Clear picks"))) v.picks.clear();
    ImGui::SameLine();
    if (!v.start_edits.empty() && p.edit(ImGui::Button("Reset starts"))) v.start_edits.clear();
  }
}

}  // namespace diffscope::ui
