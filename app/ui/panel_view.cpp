// panel_view.cpp — what is drawn and how: trails, data overlay, field, point size, camera, vsync.
#include <imgui.h>

#include "base/ranges.h"
#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

void panel_view(Panel& p) {
  const App& app = p.app;
  ViewSettings& v = p.settings.view;
  const ImGuiSliderFlags clamp = ImGuiSliderFlags_AlwaysClamp;
  p.edit(ImGui::SliderInt("trail frames", &v.trail_frames, int(kTrailFramesRange.lo), int(kTrailFramesRange.hi), "%d",
                          clamp));
  tip("a fading line behind each point over its last stored frames; 0 = none (trails cost the most on the CPU)");
  p.edit(ImGui::SliderFloat("point size", &v.point_size, float(kPointSizeRange.lo), float(kPointSizeRange.hi), "%.1f",
                            clamp));
  tip("point diameter in pixels");
  p.edit(ImGui::SliderFloat("point alpha", &v.point_alpha, float(kPointAlphaRange.lo), float(kPointAlphaRange.hi),
                            "%.2f", clamp));
  tip("point opacity: lower shows density where points overlap");
  p.edit(ImGui::Checkbox("data overlay", &v.show_data));
  tip("the model's held-out data (data_samples: points of the data set the training never saw) as grey points");
  ImGui::SameLine();
  p.edit(ImGui::Checkbox("axes", &v.show_axes));
  tip("the 2D view's unit grid and axes (off: a clean picture)");
  const bool two_d = app.session().dim() == 2;
  if (!two_d) ImGui::BeginDisabled();
  p.edit(ImGui::Checkbox("field", &v.show_field));
  tip("the network on a grid at the shown timestep: arrows along -eps (towards the data)");
  ImGui::SameLine();
  p.edit(ImGui::Checkbox("predicted x0", &v.field_x0));
  tip("instead of arrows: a line from each grid point to the clean point x0 the network predicts");
  if (v.show_field) p.edit(ImGui::SliderInt("field grid", &v.field_grid, 4, 64, "%d", clamp));
  if (v.show_field) tip("arrows per side of the view");
  if (!two_d) ImGui::EndDisabled();
  if (!two_d) ImGui::TextDisabled("field: 2D models only");
  else if (v.show_field)
    ImGui::TextDisabled(v.field_x0 ? "lines to the predicted clean point" : "arrows along -eps (towards the data)");
  if (app.session().is_image_model()) {
    p.edit(ImGui::SliderInt("grid columns", &v.image_grid_cols, int(kGridColsRange.lo), int(kGridColsRange.hi), "%d",
                            clamp));
    tip("samples per row of the image grid (it shows the first columns x columns samples)");
  }
  if (ImGui::Button("Fit view")) p.push(Action::simple(ActionKind::FitView));  // with the newest samples (a read-back)
  tip("fit the 2D view to the data and the samples again (and keep it fitted)");
  ImGui::SameLine();
  ImGui::TextDisabled("wheel zoom, drag pan");
  p.edit(ImGui::Checkbox("vsync", &v.vsync));  // the display follows (App::take_vsync_change)
  tip("wait for the display's refresh (off: as many frames as the machine draws)");
  p.edit(ImGui::SliderInt("steps/frame", &v.steps_per_frame, int(kStepsPerFrameRange.lo), int(kStepsPerFrameRange.hi),
                          v.steps_per_frame == 0 ? "auto" : "%d", clamp));
  tip("steps computed per UI frame; auto: all on the GPU, ~14 ms on the CPU");
  p.edit(ImGui::Checkbox("loop re-simulation (seed+1)", &v.loop_resimulate));
  tip("whenever a run completes, start the next with seed + 1 (a live benchmark)");
}

}  // namespace diffscope::ui
