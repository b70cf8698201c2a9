// panel_export.cpp — export buttons, size, folder, and the result messages.
#include <imgui.h>
#include <imgui_stdlib.h>

#include "ui/app.h"
#include "ui/export_dir.h"
#include "ui/panels.h"

namespace diffscope::ui {

void panel_export(App& app) {
  AppSettings& s = app.settings;
  ImGui::InputTextWithHint("folder", resolve_export_dir("").c_str(), &s.export_dir);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", resolve_export_dir(s.export_dir).c_str());
  int wh[2] = {s.export_width, s.export_height};
  if (ImGui::DragInt2("size", wh, 8.0f, 16, 8192, "%d", ImGuiSliderFlags_AlwaysClamp))
    s.export_width = wh[0], s.export_height = wh[1];
  if (ImGui::Button("Snapshot (S)")) app.exporter->snapshot(app);
  ImGui::SameLine();
  if (ImGui::Button("State .npy")) app.exporter->state_npy(app);
  ImGui::SameLine();
  if (ImGui::Button("Trajectory .npy")) app.exporter->trajectory_npy(app);
  if (app.session->is_image_model()) {
    ImGui::SetNextItemWidth(100 * app.content_scale);
    ImGui::SliderInt("scale", &s.image_grid_scale, 1, 32, "%d", ImGuiSliderFlags_AlwaysClamp);
    ImGui::SameLine();
    if (ImGui::Button("Image grid PNG")) app.exporter->image_grid(app);
  }
  if (app.exporter->sequence_active()) {
    ImGui::ProgressBar(app.exporter->sequence_progress(), ImVec2(-1, 0), "frame sequence");
  } else if (ImGui::Button("Frame sequence (PNG per frame)")) {
    app.exporter->start_frame_sequence(app);
  }
  if (!app.exporter->last_path.empty()) {
    ImGui::TextDisabled("last export:");
    ImGui::SameLine();
    if (ImGui::SmallButton("copy path")) ImGui::SetClipboardText(app.exporter->last_path.c_str());
    ImGui::TextWrapped("%s", app.exporter->last_path.c_str());
  }
  const auto& msgs = app.exporter->messages;
  for (size_t i = msgs.size() > 4 ? msgs.size() - 4 : 0; i < msgs.size(); ++i) {
    if (msgs[i] == "wrote " + app.exporter->last_path) continue;  // shown above
    const bool err = msgs[i].rfind("error", 0) == 0;
    ImGui::PushStyleColor(ImGuiCol_Text, err ? ImVec4(1, 0.45f, 0.4f, 1) : ImVec4(0.6f, 0.9f, 0.6f, 1));
    ImGui::TextWrapped("%s", msgs[i].c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace diffscope::ui
