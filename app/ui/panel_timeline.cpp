// panel_timeline.cpp — play / pause, speed, follow newest, the scrubber over the stored frames.
#include <imgui.h>

#include <algorithm>

#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

void panel_timeline(App& app) {
  const ImGuiIO& io = ImGui::GetIO();
  const float s = app.content_scale;
  const float h = 86 * s;
  ImGui::SetNextWindowPos(ImVec2(356 * s, io.DisplaySize.y - h - 8 * s), ImGuiCond_FirstUseEver);
  ImGui::SetNextWindowSize(ImVec2(std::max(300.0f, io.DisplaySize.x - 364 * s), h), ImGuiCond_FirstUseEver);
  if (!ImGui::Begin("Timeline")) {
    ImGui::End();
    return;
  }
  ViewSettings& v = app.settings.view;
  if (ImGui::Button(app.playing ? "Pause" : "Play ", ImVec2(60 * s, 0))) app.toggle_play();
  ImGui::SameLine();
  if (ImGui::ArrowButton("##left", ImGuiDir_Left)) app.step_cursor(-1);
  ImGui::SameLine();
  if (ImGui::ArrowButton("##right", ImGuiDir_Right)) app.step_cursor(1);
  ImGui::SameLine();
  ImGui::Checkbox("follow newest", &v.follow_newest);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(130 * s);
  ImGui::SliderFloat("##speed", &v.play_speed, 0.1f, 20.0f, "speed x%.1f",
                     ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_Logarithmic);
  const int n = app.session->n_steps();
  const int j = app.shown_frame();
  const int t = app.session->timestep_of_frame(j);
  ImGui::SameLine();
  if (t >= 0)
    ImGui::Text("frame %d / %d   t = %d", j, n, t);
  else
    ImGui::Text("frame %d / %d   clean (after t = 0)", j, n);

  int frame = j;
  ImGui::SetNextItemWidth(-1);
  const int computed = std::max(0, app.session->computed_steps());
  char fmt[64];
  std::snprintf(fmt, sizeof fmt, "frame %%d (computed %d)", computed);
  if (ImGui::SliderInt("##timeline", &frame, 0, std::max(1, n), fmt, ImGuiSliderFlags_AlwaysClamp)) {
    app.playing = false;
    app.cursor = std::min(frame, computed);  // only computed frames can be shown
  }
  const ImVec2 a = ImGui::GetItemRectMin(), b = ImGui::GetItemRectMax();
  app.timeline_x0 = a.x;
  app.timeline_x1 = b.x;
  app.timeline_y = 0.5f * (a.y + b.y);
  // Shade the part not computed yet.
  if (n > 0 && computed < n) {
    const float x = a.x + (b.x - a.x) * float(computed) / float(n);
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(x, a.y), b, IM_COL32(0, 0, 0, 90), 4.0f);
  }
  ImGui::End();
}

}  // namespace diffscope::ui
