// view_legend.cpp — what the views show, on the views themselves: tick labels on the 2D view's grid lines and
// its axis names (x / y in data units, or PC 1 / PC 2 for the digits' PCA projection), a compact legend (point
// colour, trails, held-out data, field), and a caption over the image grid. Drawn with ImGui's background draw
// list: over the GL scene, under the panels.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "base/words.h"
#include "render/axis_grid.h"
#include "render/renderer.h"
#include "session/field_view.h"
#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

namespace {

// The shaders' particle palette (shaders/common.glsl: palette()), for the legend's colour ring.
ImU32 palette(float h, float alpha) {
  auto c = [&](float phase) { return 0.55f + 0.45f * std::cos(6.28318f * (h + phase)); };
  return ImGui::ColorConvertFloat4ToU32(ImVec4(c(0.0f), c(0.33f), c(0.67f), alpha));
}

// A GL rect (pixels, origin bottom-left) in ImGui coordinates (origin top-left, framebuffer scale undone).
struct UiRect {
  float x0, y0, x1, y1;
};
UiRect to_ui(const render::Rect& r, int fb_h) {
  const ImVec2 k = ImGui::GetIO().DisplayFramebufferScale;
  return {r.x / k.x, (fb_h - r.y - r.h) / k.y, (r.x + r.w) / k.x, (fb_h - r.y) / k.y};
}

void text_with_shadow(ImDrawList* dl, ImVec2 p, ImU32 colour, const char* text) {
  dl->AddText(ImVec2(p.x + 1, p.y + 1), IM_COL32(0, 0, 0, 200), text);
  dl->AddText(p, colour, text);
}

// Tick labels at the renderer's grid lines, along the bottom and left edges, and the axis names.
void axis_labels(const App& app, const UiRect& u, bool pca) {
  const ViewSettings& v = app.settings().view;
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  const ImU32 tick = IM_COL32(170, 178, 196, 210), name = IM_COL32(200, 206, 220, 235);
  const float w = u.x1 - u.x0, h = u.y1 - u.y0;
  if (w < 80 || h < 80) return;
  const double hh = v.cam_half_h, hw = hh * w / h, step = render::grid_step(hh);
  const float fh = ImGui::GetFontSize();
  auto label = [&](double value, char* buf, size_t n) {
    std::snprintf(buf, n, "%g", std::abs(value) < step * 1e-3 ? 0.0 : value);
  };
  char buf[32];
  float last_right = -1e9f;
  for (double x : render::grid_lines(v.cam_x - hw, v.cam_x + hw, step)) {  // the renderer's grid lines
    const float px = u.x0 + float((x - (v.cam_x - hw)) / (2 * hw)) * w;
    label(x, buf, sizeof buf);
    const float tw = ImGui::CalcTextSize(buf).x;
    if (px - tw / 2 < last_right + 6 || px + tw / 2 > u.x1 - 4 || px - tw / 2 < u.x0 + 4) continue;
    text_with_shadow(dl, ImVec2(px - tw / 2, u.y1 - fh - 3), tick, buf);
    last_right = px + tw / 2;
  }
  for (double y : render::grid_lines(v.cam_y - hh, v.cam_y + hh, step)) {
    const float py = u.y1 - float((y - (v.cam_y - hh)) / (2 * hh)) * h;
    if (py < u.y0 + 3 * fh || py > u.y1 - 2 * fh) continue;  // clear of the axis name and the x labels
    label(y, buf, sizeof buf);
    text_with_shadow(dl, ImVec2(u.x0 + 4, py - fh / 2), tick, buf);
  }
  const char* xn = pca ? "PC 1 (data units)" : "x";
  const char* yn = pca ? "PC 2" : "y";
  const float xw = ImGui::CalcTextSize(xn).x;
  text_with_shadow(dl, ImVec2(u.x1 - xw - 6, u.y1 - 2 * fh - 6), name, xn);
  text_with_shadow(dl, ImVec2(u.x0 + 4, u.y0 + fh + 8), name, yn);  // a line down: a status message may sit above
}

// The density view's colour bar (drawn by the renderer at Renderer::colour_bar_rect): counts per bin beside it, at
// 0, the powers of ten below the largest count (log) or its halves (linear), and the largest count.
void colour_bar_labels(const App& app, const render::Rect& pane) {
  const uint32_t top = app.density_max();
  if (top == 0) return;
  const UiRect b = to_ui(render::Renderer::colour_bar_rect(pane), app.fb_h());
  const bool log_scale = app.settings().view.density_scale == DensityScale::Log;
  const std::vector<double> ticks = colour_bar_ticks(top, log_scale);
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  const float fh = ImGui::GetFontSize();
  float last_bottom = -1e9f;
  for (auto it = ticks.rbegin(); it != ticks.rend(); ++it) {  // top first: the largest count always shows
    const double t = colour_bar_position(*it, top, log_scale);
    const float y = b.y1 - float(t) * (b.y1 - b.y0);
    if (y - fh / 2 < last_bottom + 2) continue;  // too close to the label above
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *it);
    const float tw = ImGui::CalcTextSize(buf).x;
    dl->AddLine(ImVec2(b.x0 - 4, y), ImVec2(b.x0, y), IM_COL32(200, 206, 220, 235));
    text_with_shadow(dl, ImVec2(b.x0 - 6 - tw, y - fh / 2), IM_COL32(200, 206, 220, 235), buf);
    last_bottom = y + fh / 2;
  }
  const char* name = "samples per bin";
  text_with_shadow(dl, ImVec2(b.x1 - ImGui::CalcTextSize(name).x, b.y0 - fh - 4), IM_COL32(200, 206, 220, 235), name);
}

struct Line {
  int kind;  // 0 colour ring, 1 trail, 2 data dot, 3 arrow, 4 x0 cross, 5 density swatch, 6 contour, 7 a picked
              // sample's path
  std::string text;
};

// The field's line: what the arrows are (session/field_view.h eval_field: arrows along -eps, -output or the
// score) and the largest magnitude on the grid, or the x0 lines.
Line field_legend_line(FieldQuantity q, const App& app) {
  if (q == FieldQuantity::X0) return {4, "predicted clean point x0 of each grid point"};
  const SamplingSession& ss = app.session();
  const Family family = field_level(ss.model(), ss.table(), app.shown_frame()).family.family;
  const std::string what = field_quantity_label(q, family);
  char largest[48];
  std::snprintf(largest, sizeof largest, ", longest %.3g", app.field_largest());
  return {3, (q == FieldQuantity::Score ? what : "-" + what) + " here: blue small .. orange large" +
                 (app.field_largest() > 0 ? largest : "")};
}

// The legend: one short line per thing drawn, with its swatch, in the top-right corner of the 2D view.
void legend(const App& app, const UiRect& u, bool pca) {
  const ViewSettings& v = app.settings().view;
  const DiffusionModel& m = app.session().model();
  std::vector<Line> lines;
  if (v.view_mode != ViewMode::Density)
    lines.push_back({0, pca ? "sample (colour: angle of its start noise in this plane)"
                            : "sample (colour: angle of its start noise)"});
  if (v.view_mode != ViewMode::Points)
    lines.push_back({5, std::string("samples per bin (") + (v.density_scale == DensityScale::Log ? "log" : "linear") +
                            " scale, " + std::to_string(v.density_bin_px) + " px bins)"});
  if (v.view_mode != ViewMode::Points && v.density_contours && m.mixture && m.net.dim == 2)
    lines.push_back({6, "exact density at this level: log p = ..., -2, -1, 0, ..."});
  if (v.view_mode != ViewMode::Density && v.trail_frames > 0 && app.shown_frame() > 0)
    lines.push_back({1, "trail: its last " + count_noun(v.trail_frames, "stored frame")});
  if (v.show_data && m.n_data > 0) lines.push_back({2, "held-out data (" + count_noun(m.n_data, "point") + ")"});
  if (v.show_field && m.net.dim == 2)
    lines.push_back(field_legend_line(v.field_quantity, app));
  if (!v.picks.empty()) lines.push_back({7, "picked: its path over the kept frames (big dot: its start)"});
  const float fh = ImGui::GetFontSize(), sw = fh * 1.4f, pad = 6;
  float tw = 0;
  for (const Line& l : lines) tw = std::max(tw, ImGui::CalcTextSize(l.text.c_str()).x);
  const float bw = pad * 2 + sw + 4 + tw, bh = pad * 2 + lines.size() * (fh + 3);
  if (bw > (u.x1 - u.x0) * 0.7f || bh > (u.y1 - u.y0) * 0.5f) return;  // a small view: the tooltips explain
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  const ImVec2 o(u.x1 - bw - 8, u.y0 + 8);
  dl->AddRectFilled(o, ImVec2(o.x + bw, o.y + bh), IM_COL32(14, 16, 22, 225), 4.0f);  // opaque enough to read over the field
  float y = o.y + pad;
  for (const Line& l : lines) {
    const ImVec2 c(o.x + pad + sw / 2, y + fh / 2);
    switch (l.kind) {
      case 0:
        for (int k = 0; k < 8; ++k) {
          const float a = 6.28318f * k / 8;
          dl->AddCircleFilled(ImVec2(c.x + 0.38f * sw * std::cos(a), c.y - 0.38f * fh * std::sin(a)), 2.2f,
                              palette(a / 6.28318f + 0.5f, 1.0f));
        }
        break;
      case 1:
        dl->AddLine(ImVec2(c.x - sw / 2, c.y + 3), ImVec2(c.x + sw / 2, c.y - 3), palette(0.1f, 0.9f), 2.0f);
        break;
      case 2:
        dl->AddCircleFilled(c, 2.5f, IM_COL32(217, 222, 235, 150));
        dl->AddCircleFilled(ImVec2(c.x - 5, c.y + 3), 2.0f, IM_COL32(217, 222, 235, 110));
        break;
      case 3:
        dl->AddLine(ImVec2(c.x - sw / 2, c.y), ImVec2(c.x - 2, c.y), IM_COL32(100, 160, 230, 230), 1.5f);
        dl->AddLine(ImVec2(c.x, c.y), ImVec2(c.x + sw / 2, c.y), IM_COL32(245, 160, 80, 230), 1.5f);
        dl->AddTriangleFilled(ImVec2(c.x + sw / 2 + 1, c.y), ImVec2(c.x + sw / 2 - 4, c.y - 3),
                              ImVec2(c.x + sw / 2 - 4, c.y + 3), IM_COL32(245, 160, 80, 230));
        break;
      case 5:
        dl->AddRectFilledMultiColor(ImVec2(c.x - sw / 2, c.y - 4), ImVec2(c.x + sw / 2, c.y + 4), IM_COL32(68, 1, 84, 255),
                                    IM_COL32(253, 231, 37, 255), IM_COL32(253, 231, 37, 255), IM_COL32(68, 1, 84, 255));
        break;
      case 6:
        dl->AddCircle(c, 5.0f, IM_COL32(255, 255, 255, 220), 16, 1.5f);
      case 7:  // the first pick's colour (render/particle_pick.cpp)
        dl->AddLine(ImVec2(c.x - sw / 2 + 3, c.y), ImVec2(c.x + sw / 2, c.y - 3), IM_COL32(230, 159, 0, 240), 2.0f);
        dl->AddCircleFilled(ImVec2(c.x - sw / 2 + 3, c.y), 4.0f, IM_COL32(230, 159, 0, 255));
        break;
      default:
        dl->AddLine(ImVec2(c.x - 4, c.y), ImVec2(c.x + 4, c.y), IM_COL32(255, 217, 102, 230), 1.5f);
        dl->AddLine(ImVec2(c.x, c.y - 4), ImVec2(c.x, c.y + 4), IM_COL32(255, 217, 102, 230), 1.5f);
    }
    dl->AddText(ImVec2(o.x + pad + sw + 4, y), IM_COL32(215, 220, 232, 240), l.text.c_str());
    y += fh + 3;
  }
}

}  // namespace

void draw_view_legend(const App& app) {
  if (!app.session().has_model() || app.session().layout().n_slots == 0) return;
  const bool image = app.session().is_image_model() && app.session().image_side() > 0;
  const render::SceneLayout l = render::Renderer::layout(app.fb_w(), app.fb_h(), image, app.ui_insets_px());
  const UiRect s = to_ui(l.scatter, app.fb_h());
  const bool pca = app.session().dim() != 2;
  axis_labels(app, s, pca);
  legend(app, s, pca);
  if (app.settings().view.view_mode != ViewMode::Points) colour_bar_labels(app, l.scatter);
  if (image && l.grid.w > 0) {  // what the grid shows, above it
    const UiRect g = to_ui(l.grid, app.fb_h());
    const int cols = std::max(1, app.settings().view.image_grid_cols);
    const int rows = render::Renderer::grid_rows(app.session().layout().B, cols, cols);
    const float gh = (g.y1 - g.y0) * rows / cols, top = g.y0 + ((g.y1 - g.y0) - gh) / 2;
    char cap[128];
    std::snprintf(cap, sizeof cap, "samples 0-%d of %d at frame %d",
                  std::min(rows * cols, app.session().layout().B) - 1, app.session().layout().B, app.shown_frame());
    const float fh = ImGui::GetFontSize();
    const float y = top - fh - 4 >= app.ui().inset_top ? top - fh - 4 : top + 2;  // above the grid when it fits
    text_with_shadow(ImGui::GetBackgroundDrawList(), ImVec2(g.x0 + 4, y), IM_COL32(200, 206, 220, 235), cap);
  }
}

}  // namespace diffscope::ui
