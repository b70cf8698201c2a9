// mini_plot.cpp — the small ImDrawList line plot of mini_plot.h.
#include "ui/widgets/mini_plot.h"

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

namespace {

// The plot's box on screen (pixels) and its axes' ranges; X and Y map data values into the box.
struct PlotFrame {
  Axis ax, ay;
  float x0, x1, y0, y1;
  ImDrawList* dl;
  float X(double v) const { return ax.map(v, x0 + 2, x1 - 2); }
  float Y(double v) const { return ay.map(v, y1 - 2, y0 + 2); }
};

// The lines, broken where a value is not finite (or not positive on a log axis), dashed or solid, with their points.
void draw_lines(const PlotFrame& f, const std::vector<PlotLine>& lines) {
  for (const PlotLine& l : lines) {
    bool have_prev = false;
    ImVec2 prev;
    for (size_t i = 0; i < l.x.size() && i < l.y.size(); ++i) {
      if (!f.ax.valid(l.x[i]) || !f.ay.valid(l.y[i])) {
        have_prev = false;
        continue;
      }
      const ImVec2 p(f.X(l.x[i]), f.Y(l.y[i]));
      if (have_prev) l.dashed ? dashed_segment(f.dl, prev, p, l.color) : f.dl->AddLine(prev, p, l.color, 1.5f);
      if (l.points) f.dl->AddCircleFilled(p, 3.0f, l.color);
      prev = p, have_prev = true;
    }
  }
}

// The vertical marker at spec.marker_x with its label.
void draw_marker(const PlotFrame& f, const PlotSpec& spec) {
  if (!spec.has_marker || !f.ax.valid(spec.marker_x)) return;
  const float mx = f.X(spec.marker_x);
  f.dl->AddLine(ImVec2(mx, f.y0), ImVec2(mx, f.y1), IM_COL32(255, 210, 80, 220), 1.5f);
  if (spec.marker_label[0]) {
    const float tw = ImGui::CalcTextSize(spec.marker_label).x;
    // Right of the marker when it fits, else left of it, and always inside the plot (a marker past the x range,
    // such as the last frame on the step-size plot, whose range ends a step earlier, kept its label clipped).
    const float tx = std::clamp(mx + 3 + tw < f.x1 ? mx + 3 : mx - 3 - tw, f.x0 + 2, std::max(f.x0 + 2, f.x1 - 2 - tw));
    f.dl->AddText(ImVec2(tx, f.y0 + 1), IM_COL32(255, 210, 80, 255), spec.marker_label);
  }
}

// The values of every solid line nearest the mouse's x, in a tooltip, while the mouse is over the plot.
void value_tooltip(const PlotFrame& f, const PlotSpec& spec, const std::vector<PlotLine>& lines) {
  const Axis& ax = f.ax;
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (!ImGui::IsWindowHovered() || m.x < f.x0 || m.x > f.x1 || m.y < f.y0 || m.y > f.y1 || lines.empty()) return;
  const double xv = ax.inv(ax.lo + (m.x - f.x0) / (f.x1 - f.x0) * (ax.hi - ax.lo));
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

// A colour swatch and the name of each named line, on one row; nothing when fewer than two lines have names.
void legend(const std::vector<PlotLine>& lines, float text_h) {
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

}  // namespace

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
  const PlotFrame f{ax, ay, p0.x + margin, p0.x + w - 4, p0.y, p0.y + h, ImGui::GetWindowDrawList()};
  const float x0 = f.x0, x1 = f.x1, y0 = f.y0, y1 = f.y1;
  ImDrawList* dl = f.dl;
  dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(20, 22, 28, 255));
  dl->AddRect(ImVec2(x0, y0), ImVec2(x1, y1), IM_COL32(90, 90, 100, 255));
  const ImU32 label_col = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  auto right_aligned = [&](float y, const std::string& s) {
    dl->AddText(ImVec2(x0 - st.ItemInnerSpacing.x - ImGui::CalcTextSize(s.c_str()).x, y), label_col, s.c_str());
  };
  right_aligned(y0, fmt(ay.inv(ay.hi)));
  right_aligned(y1 - text_h, fmt(ay.inv(ay.lo)));

  dl->PushClipRect(ImVec2(x0, y0), ImVec2(x1, y1), true);
  draw_lines(f, lines);
  draw_marker(f, spec);
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

  value_tooltip(f, spec, lines);
  legend(lines, text_h);
}

}  // namespace diffscope::ui
