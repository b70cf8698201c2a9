// mini_plot.cpp — the small ImDrawList line plot of mini_plot.h.
#include "ui/mini_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace diffscope::ui {
namespace {

std::string fmt(double v) {
  char b[32];
  if (v != 0 && (std::abs(v) < 1e-2 || std::abs(v) >= 1e4))
    std::snprintf(b, sizeof b, "%.2e", v);
  else
    std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

struct Axis {
  bool log = false;
  double lo = INFINITY, hi = -INFINITY;
  bool valid(double v) const { return std::isfinite(v) && (!log || v > 0); }
  double t(double v) const { return log ? std::log10(v) : v; }
  double inv(double u) const { return log ? std::pow(10.0, u) : u; }
  void take(double v) {
    if (!valid(v)) return;
    lo = std::min(lo, t(v));
    hi = std::max(hi, t(v));
  }
  void finish() { pad_axis_range(&lo, &hi, log); }
  float map(double v, float a, float b) const { return a + float((t(v) - lo) / (hi - lo)) * (b - a); }
};

void dashed_segment(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 c) {
  const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
  for (float s = 0; s < len; s += 9) {
    const float e = std::min(len, s + 5);
    dl->AddLine(ImVec2(a.x + dx * s / len, a.y + dy * s / len), ImVec2(a.x + dx * e / len, a.y + dy * e / len), c);
  }
}

}  // namespace

void pad_axis_range(double* lo, double* hi, bool log) {
  if (!(*lo <= *hi)) *lo = 0, *hi = 1;
  if (*hi - *lo < 1e-12) {  // one value (a one-step run): a range around it that reads as numbers
    const double pad = log || *lo == 0 ? 0.5 : 0.1 * std::abs(*lo);
    *lo -= pad, *hi += pad;
  }
}

void draw_plot(const PlotSpec& spec, const std::vector<PlotLine>& lines) {
  Axis ax{spec.log_x}, ay{spec.log_y};
  for (const PlotLine& l : lines) {
    if (!l.in_range) continue;
    for (size_t i = 0; i < l.x.size() && i < l.y.size(); ++i)
      if (ax.valid(l.x[i]) && ay.valid(l.y[i])) ax.take(l.x[i]), ay.take(l.y[i]);
  }
  ax.finish();
  ay.finish();

  if (spec.title[0]) {
    ImGui::TextUnformatted(spec.title);
    if (spec.help[0] && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", spec.help);
  }
  const ImGuiStyle& st = ImGui::GetStyle();
  const float margin = ImGui::CalcTextSize("-8.88e-88").x + st.ItemInnerSpacing.x;
  const float text_h = ImGui::GetTextLineHeight();
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float w = std::max(40.0f, ImGui::GetContentRegionAvail().x), h = spec.height;
  const float x0 = p0.x + margin, x1 = p0.x + w - 4, y0 = p0.y, y1 = p0.y + h;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(20, 22, 28, 255));
  dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(90, 90, 100, 255));
  const ImU32 label_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  auto right_aligned = [&](float y, const std::string& s) {
    dl->AddText(ImVec2(x0 - st.ItemInnerSpacing.x - ImGui::CalcTextSize(s.c_str()).x, y), label_col, s.c_str());
  };
  right_aligned(y0, fmt(ay.inv(ay.hi)));
  right_aligned(y1 - text_h, fmt(ay.inv(ay.lo)));

  dl->PushClipRect(ImVec2(x0, y0), ImVec2(x1, y1), true);
  auto X = [&](double v) { return ax.map(v, x0 + 2, x1 - 2); };
  auto Y = [&](double v) { return ay.map(v, y1 - 2, y0 + 2); };
  for (const PlotLine& l : lines) {
    bool have_prev = false;
    ImVec2 prev;
    for (size_t i = 0; i < l.x.size() && i < l.y.size(); ++i) {
      if (!ax.valid(l.x[i]) || !ay.valid(l.y[i])) {
        have_prev = false;
        continue;
      }
      const ImVec2 p(X(l.x[i]), Y(l.y[i]));
      if (have_prev) l.dashed ? dashed_segment(dl, prev, p, l.color) : dl->AddLine(prev, p, l.color, 1.5f);
      if (l.points) dl->AddCircleFilled(p, 3.0f, l.color);
      prev = p, have_prev = true;
    }
  }
  if (spec.has_marker && ax.valid(spec.marker_x)) {
    const float mx = X(spec.marker_x);
    dl->AddLine(ImVec2(mx, y0), ImVec2(mx, y1), IM_COL32(255, 210, 80, 220), 1.5f);
    if (spec.marker_label[0]) {
      const float tw = ImGui::CalcTextSize(spec.marker_label).x;
      // Right of the marker when it fits, else left of it, and always inside the plot (a marker past the x range,
      // such as the last frame on the step-size plot, whose range ends a step earlier, kept its label clipped).
      const float tx = std::clamp(mx + 3 + tw < x1 ? mx + 3 : mx - 3 - tw, x0 + 2, std::max(x0 + 2, x1 - 2 - tw));
      dl->AddText(ImVec2(tx, y0 + 1), IM_COL32(255, 210, 80, 255), spec.marker_label);
    }
  }
  dl->PopClipRect();

  // x range and label under the plot
  const float ly = y1 + 1;
  const std::string xlo = fmt(ax.inv(ax.lo)), xhi = fmt(ax.inv(ax.hi));
  dl->AddText(ImVec2(x0, ly), label_col, xlo.c_str());
  dl->AddText(ImVec2(x1 - ImGui::CalcTextSize(xhi.c_str()).x, ly), label_col, xhi.c_str());
  if (spec.x_label[0]) {
    const float tw = ImGui::CalcTextSize(spec.x_label).x;
    dl->AddText(ImVec2(0.5f * (x0 + x1 - tw), ly), label_col, spec.x_label);
  }
  ImGui::Dummy(ImVec2(w, h + text_h + 2));

  // the values under the mouse
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered() && m.x >= x0 && m.x <= x1 && m.y >= y0 && m.y <= y1 && !lines.empty()) {
    const double xv = ax.inv(ax.lo + (m.x - x0) / (x1 - x0) * (ax.hi - ax.lo));
    ImGui::BeginTooltip();
    for (const PlotLine& l : lines) {
      if (l.dashed || l.x.empty()) continue;
      size_t best = 0;
      for (size_t i = 1; i < l.x.size(); ++i)
        if (std::abs(ax.t(l.x[i]) - ax.t(xv)) < std::abs(ax.t(l.x[best]) - ax.t(xv))) best = i;
      ImGui::Text("%s%s%s = %s: %s", l.name.c_str(), l.name.empty() ? "" : " at ", spec.x_label, fmt(l.x[best]).c_str(),
                  fmt(l.y[best]).c_str());
    }
    ImGui::EndTooltip();
  }

  int named = 0;
  for (const PlotLine& l : lines) named += !l.name.empty();
  if (named < 2) return;
  bool first = true;
  for (const PlotLine& l : lines) {
    if (l.name.empty()) continue;
    if (!first) ImGui::SameLine();
    first = false;
    ImGui::ColorButton(l.name.c_str(), ImGui::ColorConvertU32ToFloat4(l.color), ImGuiColorEditFlags_NoTooltip,
                       ImVec2(text_h * 0.6f, text_h * 0.6f));
    ImGui::SameLine(0, 3);
    ImGui::TextDisabled("%s", l.name.c_str());
  }
}

}  // namespace diffscope::ui
