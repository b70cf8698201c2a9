// panel_view.cpp — what is drawn and how: trails, data overlay, field, point size, camera, vsync.
#include <imgui.h>

#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

void panel_view(App& app) {
  ViewSettings& v = app.settings.view;
  const ImGuiSliderFlags clamp = ImGuiSliderFlags_AlwaysClamp;
  ImGui::SliderInt("trail frames", &v.trail_frames, 0, 64, "%d", clamp);
  ImGui::SliderFloat("point size", &v.point_size, 1.0f, 12.0f, "%.1f", clamp);
  ImGui::SliderFloat("point alpha", &v.point_alpha, 0.05f, 1.0f, "%.2f", clamp);
  ImGui::Checkbox("data overlay", &v.show_data);
  const bool two_d = app.session->dim() == 2;
  if (!two_d) ImGui::BeginDisabled();
  ImGui::Checkbox("field", &v.show_field);
  ImGui::SameLine();
  ImGui::Checkbox("predicted x0", &v.field_x0);
  if (v.show_field) ImGui::SliderInt("field grid", &v.field_grid, 4, 64, "%d", clamp);
  if (!two_d) ImGui::EndDisabled();
  if (!two_d) ImGui::TextDisabled("field: 2D models only");
  else if (v.show_field)
    ImGui::TextDisabled(v.field_x0 ? "lines to the predicted clean point" : "arrows along -eps (towards the data)");
  if (app.session->is_image_model()) ImGui::SliderInt("grid columns", &v.image_grid_cols, 1, 64, "%d", clamp);
  if (ImGui::Button("Fit view")) {
    v.cam_auto = true;
    app.fit_camera(true);  // the user asked: the newest frame's samples count too (one read-back)
  }
  ImGui::SameLine();
  ImGui::TextDisabled("wheel zoom, drag pan");
  if (ImGui::Checkbox("vsync", &v.vsync)) app.vsync_dirty = true;
  ImGui::SliderInt("steps/frame", &v.steps_per_frame, 0, 1000, v.steps_per_frame == 0 ? "auto" : "%d", clamp);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("steps computed per UI frame; auto: all on the GPU, ~14 ms on the CPU");
  ImGui::Checkbox("loop re-simulation (seed+1)", &v.loop_resimulate);
}

}  // namespace diffscope::ui
