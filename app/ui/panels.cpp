// panels.cpp — the window layout: controls on the left, timeline at the bottom, timings on the right,
// a small status line over the view.
#include <imgui.h>

#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

void draw_panels(App& app) {
  const ImGuiIO& io = ImGui::GetIO();
  const float s = app.content_scale;
  const float left_w = 340 * s;
  ImGui::SetNextWindowPos(ImVec2(8 * s, 8 * s), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(left_w, io.DisplaySize.y - 120 * s), ImGuiCond_FirstUseEver);
  const bool open = ImGui::Begin("diffscope");
  app.ui_inset = ImGui::IsWindowCollapsed() ? 0.0f : ImGui::GetWindowPos().x + ImGui::GetWindowSize().x;
  if (open) {
    if (ImGui::CollapsingHeader("Model", ImGuiTreeNodeFlags_DefaultOpen)) panel_model(app);
    if (ImGui::CollapsingHeader("Sampling", ImGuiTreeNodeFlags_DefaultOpen)) panel_sampling(app);
    if (ImGui::CollapsingHeader("View", ImGuiTreeNodeFlags_DefaultOpen)) panel_view(app);
    if (ImGui::CollapsingHeader("Export")) panel_export(app);
  }
  ImGui::End();
  panel_timeline(app);
  panel_kernels(app);

  // Status overlay, top right: FPS and the active compute path.
  ImGui::SetNextWindowPos(ImVec2(io.DisplaySize.x - 8 * s, 8 * s), ImGuiCond_Always, ImVec2(1, 0));
  ImGui::SetNextWindowBgAlpha(0.55f);
  const ImGuiWindowFlags f = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_AlwaysAutoResize |
                             ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing |
                             ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoMove;
  if (ImGui::Begin("##status", nullptr, f)) {
    ImGui::Text("%.0f fps  %.2f ms", app.stats.fps, app.stats.fps > 0 ? 1000.0 / app.stats.fps : 0.0);
    ImGui::TextDisabled("%s", app.session->path_note().c_str());
    if (!app.status_line.empty()) ImGui::TextColored(ImVec4(1, 0.6f, 0.3f, 1), "%s", app.status_line.c_str());
    ImGui::TextDisabled("Space play  arrows scrub  S snapshot  H hide UI");
  }
  ImGui::End();
}

}  // namespace diffscope::ui
