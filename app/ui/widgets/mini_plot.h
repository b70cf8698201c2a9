// mini_plot.h — a small line plot drawn with ImDrawList (ImGui 1.86's PlotLines has no log axes, no x values
// and no marker): title, y range labels, x range labels, an optional log scale on either axis, a vertical
// marker (the shown frame), a legend when there are several lines, and the values under the mouse as a tooltip.
#pragma once
#include <imgui.h>

#include <string>
#include <vector>

namespace diffscope::ui {

struct PlotLine {
  std::vector<double> x, y;  // same length; non-finite (or, on a log axis, non-positive) points are skipped
  ImU32 color = IM_COL32(120, 180, 255, 255);
  std::string name;          // legend entry ("" = none)
  bool points = false;       // also draw a dot at every point
  bool dashed = false;       // reference lines (e.g. a slope guide)
  bool in_range = true;      // false: drawn but not counted when the axes' ranges are chosen
};

struct PlotSpec {
  const char* title = "";
  const char* help = "";     // the title's tooltip (what the plot shows, its formula)
  const char* x_label = "";
  bool log_x = false, log_y = false;
  double marker_x = 0;       // where the vertical marker goes (when has_marker)
  bool has_marker = false;
  const char* marker_label = "";
  float height = 60;         // ImGui units (the width is the available width)
};

void draw_plot(const PlotSpec& spec, const std::vector<PlotLine>& lines);

// The range a plot's axis shows for data from lo to hi (log10 units on a log axis): as given, [0, 1] when there
// is no data (lo > hi), and around a single value ±0.5 (log: half a decade; the value 0) or ±10% of it.
void pad_axis_range(double* lo, double* hi, bool log);

}  // namespace diffscope::ui
