// hidden_ui_hint.cpp — see hidden_ui_hint.h.
#include "ui/hidden_ui_hint.h"

#include <imgui.h>

namespace diffscope::ui {

void draw_hidden_ui_hint() {
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const float pad = ImGui::GetStyle().WindowPadding.x;
  ImGui::SetNextWindowPos(ImVec2(display.x - pad, display.y - pad), ImGuiCond_Always, ImVec2(1, 1));
  ImGui::SetNextWindowBgAlpha(0.5f);
  const ImGuiWindowFlags f = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                             ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                             ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoInputs;
  if (ImGui::Begin("##hidden_ui_hint", nullptr, f)) ImGui::TextUnformatted("UI hidden: press H to show it");
  ImGui::End();
}

}  // namespace diffscope::ui
