// panel_view.cpp — what is drawn and how: trails, data overlay, field, point size, camera, vsync.
#include <imgui.h>

#include <string>
#include <vector>

#include "base/ranges.h"
#include "session/field_view.h"
#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

namespace {

// What the field shows (session/field_view.h): eps, x0, the network's raw output, or the score.
void field_quantity_combo(Panel& p, ViewSettings& v) {
  static const std::vector<std::string> kNames = field_quantity_names();
  const Family family = p.app.session().has_model()
                            ? field_level(p.app.session().model(), p.app.session().table(), p.app.shown_frame()).family.family
                            : Family::Epsilon;
  const std::string shown = field_quantity_label(v.field_quantity, family);
  if (ImGui::BeginCombo("field shows", shown.c_str())) {
    for (const std::string& n : kNames) {
      const FieldQuantity q = parse_field_quantity(n);
      if (p.edit(ImGui::Selectable(field_quantity_label(q, family).c_str(), q == v.field_quantity))) v.field_quantity = q;
    }
    ImGui::EndCombo();
  }
  p.ui.name_item("field_quantity");
  tip("eps: arrows along -eps; x0: a line to the data prediction; output: the network's raw output (eps, x0, v or "
      "the flow velocity, by the model's family), arrows along -output; score: grad log p = -eps / sigma at the level");
}

// The density view (SEMANTICS §6 "The density view"): points, the samples' histogram, or both; its tone map, bin
// size and the exact density's contours.
void density_controls(Panel& p, ViewSettings& v) {
  int mode = static_cast<int>(v.view_mode);
  if (p.edit(ImGui::Combo("view", &mode, "points\0density\0both\0"))) v.view_mode = static_cast<ViewMode>(mode);
  p.ui.name_item("view_mode");
  tip("points: the samples and trails; density: their 2D histogram over the view (viridis, with a colour bar); "
      "both: the histogram under the points");
  int draw = static_cast<int>(v.draw_mode);
  if (p.edit(ImGui::Combo("draw", &draw, "primitives\0splat\0"))) v.draw_mode = static_cast<DrawMode>(draw);
  p.ui.name_item("draw_mode");
  tip("primitives: one GL point or line per sample and trail segment, alpha blended in order; splat: a compute "
      "pass adds them into an image and blends it once (the same picture where samples do not overlap, in any order)");
  if (v.view_mode == ViewMode::Points) return;
  int scale = static_cast<int>(v.density_scale);
  if (p.edit(ImGui::Combo("density scale", &scale, "log\0linear\0"))) v.density_scale = static_cast<DensityScale>(scale);
  tip("log: log(1 + count) / log(1 + max count); linear: count / max count");
  p.edit(ImGui::SliderInt("bin pixels", &v.density_bin_px, int(kDensityBinPxRange.lo), int(kDensityBinPxRange.hi), "%d",
                          ImGuiSliderFlags_AlwaysClamp));
  tip("pixels per histogram bin, each way");
  p.edit(ImGui::Checkbox("exact density contours", &v.density_contours));
  tip("analytic mixtures: contours of the exact density of the noised distribution at the shown frame's level, "
      "where log p is an integer");
}

}  // namespace

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
  density_controls(p, v);
  p.edit(ImGui::Checkbox("data overlay", &v.show_data));
  tip("the model's held-out data (data_samples: points of the data set the training never saw) as grey points");
  ImGui::SameLine();
  p.edit(ImGui::Checkbox("axes", &v.show_axes));
  tip("the 2D view's unit grid and axes (off: a clean picture)");
  const bool two_d = app.session().dim() == 2;
  if (!two_d) ImGui::BeginDisabled();
  p.edit(ImGui::Checkbox("field", &v.show_field));
  tip("the network on a grid at the shown frame's noise level (the quantity below)");
  field_quantity_combo(p, v);
  if (v.show_field) p.edit(ImGui::SliderInt("field grid", &v.field_grid, 4, 64, "%d", clamp));
  if (v.show_field) tip("arrows per side of the view");
  if (!two_d) ImGui::EndDisabled();
  if (!two_d) ImGui::TextDisabled("field: 2D models only");
  else if (v.show_field && v.field_quantity == FieldQuantity::X0)
    ImGui::TextDisabled("lines to the predicted clean point");
  else if (v.show_field)
    ImGui::TextDisabled("arrows along %s", v.field_quantity == FieldQuantity::Eps      ? "-eps (towards the data)"
                                           : v.field_quantity == FieldQuantity::Score ? "the score -eps / sigma"
                                                                                      : "-output (the network's raw output)");
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
