// layout_audit.cpp — see layout_audit.h. The window check reads ImGui's own record of how far the window's
// items reached (ImGuiWindow::DC.CursorMaxPos, what ImGui sizes its scrolling range by) against the content
// region ImGui lays items out in (ImGuiWindow::WorkRect): a wider record means something was cut at the edge.
#include "ui/layout_audit.h"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cstdio>

namespace diffscope::ui {

namespace {
constexpr float kSlack = 1.0f;  // ImGui units: rounding of item positions
}

void LayoutAudit::check_window(const char* window_name, const char* where) {
  if (!enabled) return;
  const ImGuiWindow* w = ImGui::GetCurrentWindow();
  if (!w || w->Collapsed || w->SkipItems) return;
  const float reach = w->DC.CursorMaxPos.x, edge = w->WorkRect.Max.x;
  if (reach > edge + kSlack && std::find(m_reported.begin(), m_reported.end(), window_name) == m_reported.end()) {
    m_reported.push_back(window_name);
    char line[256];
    std::snprintf(line, sizeof line, "window '%s'%s%s: items reach x = %.0f, its content region ends at x = %.0f",
                  window_name, where ? ", section " : "", where ? where : "", reach, edge);
    m_building.push_back(line);
  }
}

void LayoutAudit::check_text(const char* item, const std::string& text, float box_width) {
  if (!enabled) return;
  const float need = ImGui::CalcTextSize(text.c_str()).x;
  if (need > box_width + kSlack) {
    char line[512];
    std::snprintf(line, sizeof line, "%s: '%s' needs %.0f, its box holds %.0f", item, text.c_str(), need, box_width);
    m_building.push_back(line);
  }
}

std::string LayoutAudit::report() const {
  std::string s;
  for (const std::string& c : m_clipped) s += "  clipped: " + c + "\n";
  return s;
}

float last_frame_inner_width(bool has_arrow, const char* label) {
  const ImGuiStyle& st = ImGui::GetStyle();
  float w = ImGui::GetItemRectSize().x;
  const float label_w = ImGui::CalcTextSize(label, nullptr, true).x;
  if (label_w > 0) w -= label_w + st.ItemInnerSpacing.x;
  if (has_arrow) w -= ImGui::GetFrameHeight();
  return w - 2 * st.FramePadding.x;
}

}  // namespace diffscope::ui
