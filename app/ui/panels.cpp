// panels.cpp — the window layout, recomputed every frame from the display size: controls on the left at
// full height; right of them a status strip at the top, the timeline at the bottom and the kernel panel
// above it. The scene's views go in the rest (App::ui_inset*), so no panel covers them.
#include <imgui.h>

#include <algorithm>
#include <cstdio>

#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

namespace {

void draw_windows(Panel& p);

// The narrowest left panel that shows its content uncut (ImGui units: the style and font are already scaled by
// the UI scale): the export buttons' row, and the precision combo's "fp32  (GPU only)" beside the label column.
float left_panel_content_width() {
  const ImGuiStyle& st = ImGui::GetStyle();
  auto button = [&](const char* t) { return ImGui::CalcTextSize(t).x + 2 * st.FramePadding.x; };
  const float buttons = button("Snapshot (S)") + button("State .npy") + button("Trajectory .npy") + 2 * st.ItemSpacing.x;
  const float combo = ImGui::CalcTextSize("fp32  (GPU only)").x + 2 * st.FramePadding.x + ImGui::GetFrameHeight() +
                      label_column_width();
  return std::max(buttons, combo) + 2 * st.WindowPadding.x + st.ScrollbarSize;
}

// The left panel: full height, fixed place, the width the user drags: at least what its content needs (at most
// 45% of the display, so a small window keeps room for the views), at most half the display. The minimum holds
// every frame, so a width saved while the window was small (imgui.ini) recovers when the window grows.
// Returns its right edge, or 0 when collapsed.
float left_panel(Panel& p, float pad) {
  const App& app = p.app;
  const ImGuiIO& io = ImGui::GetIO();
  const float s = app.content_scale(), h = std::max(1.0f, io.DisplaySize.y - 2 * pad);
  const float min_w = std::min(std::max(260 * s, left_panel_content_width()), 0.45f * io.DisplaySize.x);
  const float max_w = std::max({200 * s, 0.5f * io.DisplaySize.x, min_w});
  ImGui::SetNextWindowPos(ImVec2(pad, pad), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(std::clamp(340 * s, min_w, 0.45f * io.DisplaySize.x), h), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSizeConstraints(ImVec2(min_w, h), ImVec2(max_w, h));
  const bool open = ImGui::Begin("diffscope", nullptr, ImGuiWindowFlags_NoMove);
  const float right = ImGui::IsWindowCollapsed() ? 0.0f : ImGui::GetWindowPos().x + ImGui::GetWindowSize().x;
  if (open) {
    ImGui::PushItemWidth(-label_column_width());
    // A section a script opens (`open NAME`) is expanded once; the user's clicks decide after that.
    auto header = [&](const char* name, ImGuiTreeNodeFlags flags = 0) {
      if (p.ui.open_sections.erase(name)) ImGui::SetNextItemOpen(true);
      return ImGui::CollapsingHeader(name, flags);
    };
    if (header("Model", ImGuiTreeNodeFlags_DefaultOpen)) panel_model(p);
    p.ui.layout_audit.check_window("diffscope", "Model");
    if (header("Train")) panel_train(p);
    p.ui.layout_audit.check_window("diffscope", "Train");
    if (header("Sampling", ImGuiTreeNodeFlags_DefaultOpen)) panel_sampling(p);
    p.ui.layout_audit.check_window("diffscope", "Sampling");
    if (p.ui.open_schedule) ImGui::SetNextItemOpen(true);
    if (header("Schedule")) {
      if (p.ui.open_schedule) ImGui::SetScrollHereY(0.0f);
      panel_schedule(p);
    }
    p.ui.open_schedule = false;
    p.ui.layout_audit.check_window("diffscope", "Schedule");
    if (header("View", ImGuiTreeNodeFlags_DefaultOpen)) panel_view(p);
    p.ui.layout_audit.check_window("diffscope", "View");
    if (header("Picks")) panel_pick(p);
    p.ui.layout_audit.check_window("diffscope", "Picks");
    if (header("Grid")) panel_grid(p);
    p.ui.layout_audit.check_window("diffscope", "Grid");
    if (header("Export")) panel_export(p);
    p.ui.layout_audit.check_window("diffscope", "Export");
    ImGui::PopItemWidth();
    p.ui.layout_audit.check_window("diffscope");
  }
  ImGui::End();
  return right;
}

// The status strip, docked at the top right of the controls: FPS, the active compute path, the shortcuts,
// and the last message (snapshot path, errors) on its own line. Returns its bottom edge.
float status_strip(Panel& p, float x0, float w, float pad) {
  const App& app = p.app;
  ImGui::SetNextWindowPos(ImVec2(x0, pad), ImGuiCond_Always);
  ImGui::SetNextWindowSize(ImVec2(w, 0), ImGuiCond_Always);  // height 0: fit the content
  ImGui::SetNextWindowBgAlpha(0.55f);
  const ImGuiWindowFlags f = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoSavedSettings |
                             ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav | ImGuiWindowFlags_NoMove;
  float fixed_bottom = 0;
  if (ImGui::Begin("##status", nullptr, f)) {
    char fps[64];
    std::snprintf(fps, sizeof fps, "%.0f fps  %.2f ms", app.stats().fps,
                  app.stats().fps > 0 ? 1000.0 / app.stats().fps : 0.0);
    const char* keys = "Space play  arrows scrub  S snapshot  V video  H hide UI";
    ImGui::TextUnformatted(fps);
    same_line_if_fits(ImGui::CalcTextSize(app.session().path_note().c_str()).x);
    ImGui::TextDisabled("%s", app.session().path_note().c_str());
    same_line_if_fits(ImGui::CalcTextSize(keys).x);
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", keys);
    ImGui::PopStyleColor();
    // The views start below this line, whatever follows: a message (snapshot path, error) overlaps the top of the
    // view for a while instead of shifting the plot down by a line.
    fixed_bottom = ImGui::GetCursorScreenPos().y;
    const ImVec4 error_colour(1, 0.45f, 0.4f, 1), ok_colour(0.6f, 0.9f, 0.6f, 1);
    if (!app.status_line().empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, app.status_is_error() ? error_colour : ok_colour);
      ImGui::TextWrapped("%s", app.status_line().c_str());
      ImGui::PopStyleColor();
    }
    if (!app.session().error().empty()) {  // a failed run (e.g. out of GPU memory): visible with the panels hidden too
      ImGui::PushStyleColor(ImGuiCol_Text, error_colour);
      ImGui::TextWrapped("run: %s", app.session().error().c_str());
      ImGui::PopStyleColor();
    }
    p.ui.layout_audit.check_window("status");
  }
  const float bottom = fixed_bottom > 0 ? fixed_bottom : ImGui::GetWindowPos().y + ImGui::GetWindowSize().y;
  ImGui::End();
  return bottom;
}

}  // namespace

void tip(const char* text) {
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("%s", text);
}

std::string elide_middle(const std::string& text, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  size_t keep = text.size();
  std::string out;
  do {
    --keep;
    const size_t head = keep / 3, tail = keep - head;  // the end of a folder or file name says more than its start
    out = text.substr(0, head) + "..." + text.substr(text.size() - tail);
  } while (keep > 0 && ImGui::CalcTextSize(out.c_str()).x > width);
  return out;
}

void same_line_if_fits(float w) {
  // Decided before SameLine: a SameLine undone by NewLine would leave an empty item at the far right, which
  // widens the window's content (its horizontal extent) past what is drawn.
  const float spacing = 2 * ImGui::GetStyle().ItemSpacing.x;
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  if (ImGui::GetItemRectMax().x + spacing + w <= right) ImGui::SameLine(0, spacing);
}

float label_column_width() {
  // The longest label of the left panel's widgets, plus the gap ImGui leaves before a label.
  return ImGui::CalcTextSize("steps/launch  ").x + ImGui::GetStyle().ItemInnerSpacing.x;
}

void draw_panels(Panel& p) {
  p.ui.named_items.clear();
  p.ui.layout_audit.begin_frame();
  draw_windows(p);
  p.ui.layout_audit.end_frame();
}

const std::vector<std::string>& section_names() {
  static const std::vector<std::string> names{"Model", "Train", "Sampling", "Schedule", "View", "Picks", "Grid",
                                                "Export", "Kernels"};
  return names;
}

namespace {
void draw_windows(Panel& p) {
  const App& app = p.app;
  const ImGuiIO& io = ImGui::GetIO();
  const float s = app.content_scale(), pad = 8 * s;
  const float left = left_panel(p, pad);
  p.ui.inset_left = left > 0 ? left + pad : 0.0f;

  // The bottom dock, right of the left panel: the timeline at the bottom, the kernel panel on top of it.
  const float x0 = left > 0 ? left + pad : pad, w = std::max(100 * s, io.DisplaySize.x - pad - x0);
  ImGui::SetNextWindowPos(ImVec2(x0, io.DisplaySize.y - pad), ImGuiCond_Always, ImVec2(0, 1));
  ImGui::SetNextWindowSize(ImVec2(w, 0), ImGuiCond_Always);  // height 0: fit the content
  const float timeline_top = panel_timeline(p);
  const float kernels_h = std::clamp(0.42f * io.DisplaySize.y, std::min(200 * s, 0.5f * io.DisplaySize.y), 420 * s);
  ImGui::SetNextWindowPos(ImVec2(x0, timeline_top - pad), ImGuiCond_Always, ImVec2(0, 1));
  ImGui::SetNextWindowSize(ImVec2(w, kernels_h), ImGuiCond_Always);
  const float kernels_top = panel_kernels(p);
  p.ui.inset_bottom = std::max(0.0f, io.DisplaySize.y - kernels_top + pad);

  p.ui.inset_top = status_strip(p, x0, w, pad) + pad;
  if (p.app.grid_shown())
    draw_grid_labels(p.app);
  else
    draw_view_legend(p.app);  // after the insets: it labels the views where they are drawn
  draw_train_overlay(p.app);
}

}  // namespace

}  // namespace diffscope::ui
