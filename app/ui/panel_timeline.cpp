// panel_timeline.cpp — play / pause, speed, follow newest, the scrubber over the stored frames.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/ranges.h"
#include "session/field_view.h"
#include "ui/app.h"
#include "ui/layout_audit.h"
#include "ui/panels.h"

namespace diffscope::ui {


namespace {

// Play / Pause / Replay, one frame back and on, follow newest, the replay speed, and where the shown frame is.
void timeline_controls(Panel& p) {
  const App& app = p.app;
  const float s = app.content_scale();
  ViewSettings& v = p.settings.view;
  const char* play_label = app.at_end() ? "Replay###play" : app.playing() ? "Pause###play" : "Play###play";
  if (ImGui::Button(play_label, ImVec2(60 * s, 0))) p.push(Action::simple(ActionKind::TogglePlay));
  p.ui.layout_audit.check_text("play button", "Replay", 60 * s - 2 * ImGui::GetStyle().FramePadding.x);
  tip("Space: play / pause; at the last frame, replay from the start");
  ImGui::SameLine();
  if (ImGui::ArrowButton("##left", ImGuiDir_Left)) p.push(Action::step_frames(-1));
  tip("one frame back (Left; Shift+Left: 10)");
  ImGui::SameLine();
  if (ImGui::ArrowButton("##right", ImGuiDir_Right)) p.push(Action::step_frames(1));
  tip("one frame on (Right; Shift+Right: 10)");
  same_line_if_fits(ImGui::CalcTextSize("follow newest").x + ImGui::GetFrameHeight());
  p.edit(ImGui::Checkbox("follow newest", &v.follow_newest));
  tip("while sampling, show the newest computed frame");
  // A drag box, not a slider: a slider's grab would sit on the value text. Ctrl+click types a value. The speed is
  // run frames per screen refresh: x1.0 is one frame (one step) per refresh, 60 frames/s on a 60 Hz screen.
  const char* kSpeedFormat = "x%.1f frames/refresh";
  char widest[64];
  std::snprintf(widest, sizeof widest, kSpeedFormat, kPlaySpeedRange.hi);
  const float speed_w = ImGui::CalcTextSize(widest).x + 2 * ImGui::GetStyle().FramePadding.x;
  same_line_if_fits(ImGui::CalcTextSize("speed").x + ImGui::GetStyle().ItemInnerSpacing.x + speed_w);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("speed");
  ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
  ImGui::SetNextItemWidth(speed_w);
  p.edit(ImGui::DragFloat("##speed", &v.play_speed, 0.01f, float(kPlaySpeedRange.lo), float(kPlaySpeedRange.hi),
                          kSpeedFormat, ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_Logarithmic));
  if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
    const float hz = ImGui::GetIO().Framerate;
    ImGui::SetTooltip("replay speed in run frames per screen refresh: x1.0 shows one frame (one step) per refresh, so "
                      "%.0f frames/s at this window's %.0f refreshes/s (60 on a 60 Hz screen with vsync); x0.5 half "
                      "that. Drag, or Ctrl+click to type.",
                      v.play_speed * hz, hz);
  }
  const int n = app.session().n_steps();
  const int j = app.shown_frame();
  const int t = app.session().timestep_of_frame(j);
  char where[96];
  const StepTable& tab = app.session().table();
  const int t_last = n > 0 ? tab.t[n - 1] : 0;
  if (on_family_list(tab) && j >= 0 && j <= n)  // a flow or edm list: the family's own level (flow s, EDM sigma)
    std::snprintf(where, sizeof where, j < n ? "frame %d / %d   %s = %.4g" : "frame %d / %d   clean (%s = %.4g)", j, n,
                  tab.family.family == Family::Flow ? "s" : "sigma", tab.levels[j].time);
  else if (t >= 0)
    std::snprintf(where, sizeof where, "frame %d / %d   t = %d", j, n, t);
  else if (ends_clean(tab))
    std::snprintf(where, sizeof where, "frame %d / %d   clean (after t = %d)", j, n, t_last);
  else
    std::snprintf(where, sizeof where, "frame %d / %d   after t = %d (not yet clean)", j, n, t_last);
  // Placed by the width of its longest form for this run, so the row does not rewrap (and the views resize) as
  // the shown frame moves.
  char widest_where[96];
  std::snprintf(widest_where, sizeof widest_where, "frame %d / %d   after t = %d (not yet clean)", n, n,
                std::max(app.session().settings().t_start, 0));
  same_line_if_fits(std::max(ImGui::CalcTextSize(where).x, ImGui::CalcTextSize(widest_where).x));
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(where);
}

// The scrubber over the run's frames, the part not computed yet shaded.
void timeline_slider(Panel& p) {
  const App& app = p.app;
  const int n = app.session().n_steps();
  const int j = app.shown_frame();
  int frame = j;
  ImGui::SetNextItemWidth(-1);
  const int computed = std::max(0, app.session().computed_steps());
  // The value text is drawn after the slider and the shading below, so the shade of the part not computed yet
  // does not darken it.
  if (ImGui::SliderInt("##timeline", &frame, 0, std::max(1, n), "", ImGuiSliderFlags_AlwaysClamp))
    p.push(Action::show_frame(frame));  // paused; only computed frames can be shown
  tip("drag to scrub the stored frames (Home / End: first / last); the dark part is not computed yet");
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  p.ui.timeline_x0 = a.x;
  p.ui.timeline_x1 = b.x;
  p.ui.timeline_y = 0.5f * (a.y + b.y);
  // Shade the part not computed yet.
  if (n > 0 && computed < n) {
    const float x = a.x + (b.x - a.x) * float(computed) / float(n);
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(x, a.y), b, IM_COL32(0, 0, 0, 90), 4.0f);
  }
  char value[64];
  std::snprintf(value, sizeof value, "frame %d (computed %d)", frame, computed);
  const ImVec2 ts = ImGui::CalcTextSize(value);
  ImGui::GetWindowDrawList()->AddText(ImVec2(std::round(0.5f * (a.x + b.x - ts.x)), std::round(0.5f * (a.y + b.y - ts.y))),
                                      ImGui::GetColorU32(ImGuiCol_Text), value);
  p.ui.layout_audit.check_text("timeline slider", value, b.x - a.x);
}

}  // namespace

float panel_timeline(Panel& p) {
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoTitleBar;
  const bool open = ImGui::Begin("Timeline", nullptr, flags);
  const float top = ImGui::GetWindowPos().y;
  if (open) {
    timeline_controls(p);
    timeline_slider(p);
    p.ui.layout_audit.check_window("Timeline");
  }
  ImGui::End();
  return top;
}

}  // namespace diffscope::ui
