// figure.cpp — the figure's page drawn with cairo (figure.h): one drawing for the PNG's pixels, SVG and PDF.
#include "picture/figure.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "base/errors.h"
#include "render/axis_grid.h"
#include "render/viridis.h"

#ifdef DIFFSCOPE_HAVE_CAIRO
#include <cairo-pdf.h>
#include <cairo-svg.h>
#include <cairo.h>
#endif

namespace diffscope {

void particle_colour(float x0, float y0, float rgb[3]) {
  const float two_pi = 6.28318f;
  const float h = std::atan2(y0, x0) / two_pi + 0.5f;
  const float offset[3] = {0.0f, 0.33f, 0.67f};
  for (int c = 0; c < 3; ++c) rgb[c] = 0.55f + 0.45f * std::cos(two_pi * (h + offset[c]));
}

bool figure_uses_vector_marks(int n, int trail_frames, bool image_model, bool density_view) {
  return !image_model && !density_view && n <= kFigureVectorMaxPoints &&
         int64_t(n) * (std::max(trail_frames, 0) + 1) <= kFigureVectorMaxMarks;
}

FigureFormat figure_format_of(const std::string& arg, const std::string& path) {
  std::string ext = path.size() >= 4 ? path.substr(path.size() - 4) : "";
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == ".svg") return FigureFormat::Svg;
  if (ext == ".pdf") return FigureFormat::Pdf;
  throw InvalidInput(arg + " = " + path + ": a figure is written as SVG or PDF; valid: a name ending in .svg or .pdf");
}

void require_figures(const std::string& what) {
  if (!figures_available())
    throw ResourceUnavailable(what + ": this build has no cairo (libcairo2-dev), which draws figures; nothing was "
                              "written");
}

#ifndef DIFFSCOPE_HAVE_CAIRO

namespace {
[[noreturn]] void no_cairo() {
  throw ResourceUnavailable("figures need cairo, which this build lacks (install libcairo2-dev and rebuild)");
}
}  // namespace
bool figures_available() { return false; }
FigureRect figure_plot_rect(const Figure&) { no_cairo(); }
std::vector<uint8_t> render_figure_rgba(const Figure&) { no_cairo(); }
std::string render_figure_vector(const Figure&, FigureFormat, const std::string&, const std::string&) { no_cairo(); }

#else

bool figures_available() { return true; }

namespace {

const double kBackground[3] = {0.055, 0.06, 0.075};  // the renderer's clear colour
const double kInk[3] = {0.1, 0.1, 0.12};

// The font size of a page in pixels: 1/60 of its shorter side, in [8, 40].
double font_px(const Figure& f) { return std::clamp(std::min(f.width, f.height) / 60.0, 8.0, 40.0); }

void set_font(cairo_t* cr, double px) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, px);
}

double text_width(cairo_t* cr, const std::string& s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  return e.x_advance;
}

void text_at(cairo_t* cr, double x, double y, const std::string& s, double align = 0) {
  cairo_move_to(cr, x - align * text_width(cr, s), y);
  cairo_show_text(cr, s.c_str());
}

const char* const kSeparator = " \xc2\xb7 ";  // " · " between the caption's parts

// The caption in lines no wider than `width`, broken only between its parts.
std::vector<std::string> wrap_caption(cairo_t* cr, const std::string& caption, double width) {
  std::vector<std::string> lines;
  std::string line;
  size_t at = 0;
  while (at <= caption.size()) {
    size_t next = caption.find(kSeparator, at);
    if (next == std::string::npos) next = caption.size();
    const std::string part = caption.substr(at, next - at);
    const std::string joined = line.empty() ? part : line + kSeparator + part;
    if (!line.empty() && text_width(cr, joined) > width) lines.push_back(line), line = part;
    else line = joined;
    at = next + std::strlen(kSeparator);
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

// Where everything goes on the page (pixels, origin top-left).
struct Geometry {
  double font = 16;
  FigureRect plot, scatter, strip;  // strip.w == 0: none
  double legend_y = 0, x_label_y = 0, caption_y = 0;
  std::vector<std::string> caption;
};

Geometry geometry(const Figure& f) {
  cairo_surface_t* scratch = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
  cairo_t* cr = cairo_create(scratch);
  cairo_font_options_t* fo = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);  // the same widths on every surface
  cairo_set_font_options(cr, fo);
  Geometry g;
  const double F = g.font = font_px(f);
  set_font(cr, F);
  g.caption = wrap_caption(cr, f.caption, f.width - 1.6 * F);
  cairo_font_options_destroy(fo);
  cairo_destroy(cr);
  cairo_surface_destroy(scratch);
  // An image model's grid fills the plot's left part: its 2D view's y axis goes on the right.
  const double left = (f.image_model ? 1.2 : 5.4) * F, right = (f.image_model ? 5.4 : 1.2) * F, top = 2.4 * F;
  const double strip_h = f.sigma.size() > 1 ? 3.2 * F : 0, strip_block = strip_h > 0 ? strip_h + 3.4 * F : 0;
  const double bottom = 3.4 * F + strip_block + 1.4 * F * double(g.caption.size()) + 0.8 * F;
  g.plot = {int(left), int(top), int(f.width - left - right), int(f.height - top - bottom)};
  if (g.plot.w < 32 || g.plot.h < 32)
    throw InvalidInput("figure: the picture " + std::to_string(f.width) + "x" + std::to_string(f.height) +
                       " leaves no room for the plot beside its axes, legend and caption; valid: a larger export_size "
                       "(e.g. 1024x1024)");
  const render::SceneLayout l = render::Renderer::layout(g.plot.w, g.plot.h, f.image_model, {});
  g.scatter = {g.plot.x + l.scatter.x, g.plot.y + g.plot.h - (l.scatter.y + l.scatter.h), l.scatter.w, l.scatter.h};
  g.legend_y = 1.5 * F;
  g.x_label_y = g.plot.y + g.plot.h + 3.0 * F;
  const int strip_x = std::max(g.plot.x, int(5.4 * F));  // room on its left for the row titles (step, sigma)
  if (strip_h > 0) g.strip = {strip_x, int(g.x_label_y + 1.2 * F), g.plot.x + g.plot.w - strip_x, int(strip_h)};
  g.caption_y = f.height - 0.8 * F - 1.4 * F * double(g.caption.size() - (g.caption.empty() ? 0 : 1));
  return g;
}

// Data units to page pixels in the scatter pane (the renderer's camera: one scale on both axes).
struct ViewMap {
  double ox, oy, k, cx, cy;
  double x(double v) const { return ox + (v - cx) * k; }
  double y(double v) const { return oy - (v - cy) * k; }
};
ViewMap view_map(const Figure& f, const FigureRect& s) {
  return {s.x + s.w / 2.0, s.y + s.h / 2.0, s.h / (2 * f.cam.half_h), f.cam.cx, f.cam.cy};
}

// "0.5", "-2", "10": as many decimals as the tick step needs.
std::string tick_text(double v, double step) {
  const int decimals = std::max(0, int(-std::floor(std::log10(step) + 1e-9)));
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", decimals, std::abs(v) < step * 1e-6 ? 0.0 : v);
  return b;
}

// The tick step: the renderer's grid step times 1, 2, 5 or 10, so that at most 8 ticks cross the wider side.
double tick_step(double half_w, double half_h) {
  const double base = render::grid_step(half_h);
  for (double m : {1.0, 2.0, 5.0, 10.0, 20.0, 50.0})
    if (2 * std::max(half_w, half_h) / (base * m) <= 8) return base * m;
  return base * 100;
}

void draw_axes(cairo_t* cr, const Figure& f, const Geometry& g) {
  const FigureRect& s = g.scatter;
  const ViewMap m = view_map(f, s);
  const double F = g.font, half_w = s.w / (2 * m.k), half_h = f.cam.half_h;
  cairo_set_source_rgb(cr, kInk[0], kInk[1], kInk[2]);
  cairo_set_line_width(cr, std::max(1.0, F / 16));
  cairo_rectangle(cr, s.x, s.y, s.w, s.h);
  cairo_stroke(cr);
  set_font(cr, 0.85 * F);
  const double step = tick_step(half_w, half_h), tick = 0.4 * F;
  for (double x : render::grid_lines(f.cam.cx - half_w, f.cam.cx + half_w, step)) {
    cairo_move_to(cr, m.x(x), s.y + s.h);
    cairo_line_to(cr, m.x(x), s.y + s.h + tick);
    cairo_stroke(cr);
    text_at(cr, m.x(x), s.y + s.h + tick + 1.0 * F, tick_text(x, step), 0.5);
  }
  const double side = f.image_model ? 1 : -1, edge = f.image_model ? s.x + s.w : s.x;  // the y axis's side
  for (double y : render::grid_lines(f.cam.cy - half_h, f.cam.cy + half_h, step)) {
    cairo_move_to(cr, edge, m.y(y));
    cairo_line_to(cr, edge + side * tick, m.y(y));
    cairo_stroke(cr);
    text_at(cr, edge + side * (tick + 0.3 * F), m.y(y) + 0.3 * F, tick_text(y, step), f.image_model ? 0.0 : 1.0);
  }
  set_font(cr, F);
  text_at(cr, s.x + s.w / 2.0, g.x_label_y, f.x_label, 0.5);
  cairo_save(cr);
  cairo_translate(cr, edge + side * 4.4 * F, s.y + s.h / 2.0);
  cairo_rotate(cr, side * M_PI / 2);
  text_at(cr, 0, 0, f.y_label, 0.5);
  cairo_restore(cr);
}

std::string legend_samples(const Figure& f) {
  return f.samples_label + " (colour: angle of the start noise, -180\xc2\xb0 to 180\xc2\xb0)";
}
// The density view's entry; without the points it also says which samples were binned.
std::string legend_density(const Figure& f) {
  return f.points_drawn ? f.density_label : f.density_label + " of " + f.samples_label;
}
// The legend's entries after the samples, in order: trails, data, field (those drawn).
std::vector<std::string> legend_entries(const Figure& f) {
  std::vector<std::string> e;
  if (f.trail_frames > 0) e.push_back("trails (" + std::to_string(f.trail_frames) + " kept frames)");
  if (f.show_data) e.push_back("data");
  if (!f.field_label.empty()) e.push_back("field: " + f.field_label);
  return e;
}

// A legend swatch: a small square of the plot's background at (x, y - F) that `mark` draws into.
template <class Mark>
double swatch(cairo_t* cr, double x, double y, double F, const Mark& mark) {
  cairo_set_source_rgb(cr, kBackground[0], kBackground[1], kBackground[2]);
  cairo_rectangle(cr, x, y - 0.95 * F, 1.2 * F, 1.2 * F);
  cairo_fill(cr);
  mark(x + 0.6 * F, y - 0.35 * F);
  return x + 1.5 * F;
}

// The legend row above the plot: samples (their hue is the angle of the start noise: a colour bar from -180 to
// 180 degrees), trails, data, field.
void draw_legend_row(cairo_t* cr, const Figure& f, const Geometry& g, double F);

// The legend row, its font shrunk (to half the page's at most) until it fits between the plot's left edge and the
// page's right edge.
void draw_legend(cairo_t* cr, const Figure& f, const Geometry& g) {
  double F = g.font;
  set_font(cr, 0.85 * F);
  const double room = f.width - g.plot.x - 0.5 * g.font;
  double need = 0;
  if (f.points_drawn) need += 4 * F + 0.4 * F + text_width(cr, legend_samples(f)) + 1.2 * F;
  if (!f.density_label.empty()) need += 4 * F + 0.4 * F + text_width(cr, legend_density(f)) + 1.2 * F;
  for (const std::string& e : legend_entries(f)) need += 1.5 * F + text_width(cr, e) + 1.2 * F;
  if (need > room) F = std::max(0.5 * g.font, F * room / need);
  draw_legend_row(cr, f, g, F);
}

// A colour bar 4F wide of `colour(t)`, t in [0, 1], then its label; returns the x after it.
double bar_entry(cairo_t* cr, double x, double y, double F, const std::string& label,
                 const std::function<void(double, float[3])>& colour) {
  const double bar = 4 * F;
  for (int i = 0; i < 48; ++i) {
    float rgb[3];
    colour((i + 0.5) / 48, rgb);
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_rectangle(cr, x + bar * i / 48, y - 0.8 * F, bar / 48 + 0.5, 0.8 * F);
    cairo_fill(cr);
  }
  cairo_set_source_rgb(cr, kInk[0], kInk[1], kInk[2]);
  text_at(cr, x + bar + 0.4 * F, y, label);
  return x + bar + 0.4 * F + text_width(cr, label) + 1.2 * F;
}

void draw_legend_row(cairo_t* cr, const Figure& f, const Geometry& g, double F) {
  const double y = g.legend_y;
  double x = g.plot.x;
  set_font(cr, 0.85 * F);
  if (f.points_drawn)  // the hue bar: start-noise angle -180 .. 180 degrees
    x = bar_entry(cr, x, y, F, legend_samples(f), [](double t, float rgb[3]) {
      const double a = -M_PI + 2 * M_PI * t;
      particle_colour(float(std::cos(a)), float(std::sin(a)), rgb);
    });
  if (!f.density_label.empty())  // the density view's palette, empty bin to the largest count
    x = bar_entry(cr, x, y, F, legend_density(f), [](double t, float rgb[3]) {
      const int k = std::clamp(int(t * 255 + 0.5), 0, 255);
      for (int c = 0; c < 3; ++c) rgb[c] = render::kViridis[3 * k + c] / 255.0f;
    });
  auto entry = [&](const std::string& label, const std::function<void(double, double)>& mark) {
    x = swatch(cr, x, y, F, mark);
    cairo_set_source_rgb(cr, kInk[0], kInk[1], kInk[2]);
    text_at(cr, x, y, label);
    x += text_width(cr, label) + 1.2 * F;
  };
  if (f.trail_frames > 0)
    entry("trails (" + std::to_string(f.trail_frames) + " kept frames)", [&](double cx, double cy) {
      cairo_set_source_rgba(cr, 0.55, 0.8, 1.0, 0.9);
      cairo_set_line_width(cr, std::max(1.0, F / 12));
      cairo_move_to(cr, cx - 0.5 * F, cy + 0.3 * F);
      cairo_line_to(cr, cx + 0.5 * F, cy - 0.3 * F);
      cairo_stroke(cr);
    });
  if (f.show_data)
    entry("data", [&](double cx, double cy) {
      cairo_set_source_rgb(cr, 0.85, 0.87, 0.92);
      cairo_arc(cr, cx, cy, 0.25 * F, 0, 2 * M_PI);
      cairo_fill(cr);
    });
  if (!f.field_label.empty())
    entry("field: " + f.field_label, [&](double cx, double cy) {
      cairo_set_source_rgba(cr, 0.4, 0.75, 1.0, 1.0);
      cairo_set_line_width(cr, std::max(1.0, F / 12));
      cairo_move_to(cr, cx - 0.45 * F, cy);
      cairo_line_to(cr, cx + 0.45 * F, cy);
      cairo_stroke(cr);
    });
}

// The noise level over the run's steps: log sigma against the step, the shown frame marked; the axis labelled
// with the step and, below it, sigma at each tick.
void draw_strip(cairo_t* cr, const Figure& f, const Geometry& g) {
  const FigureRect& r = g.strip;
  const double F = g.font;
  const int N = int(f.sigma.size()) - 1;
  double lo = 1e300, hi = 0;
  for (double s : f.sigma)
    if (s > 0 && std::isfinite(s)) lo = std::min(lo, s), hi = std::max(hi, s);
  if (!(hi > 0)) return;
  const double l0 = std::log10(lo), l1 = std::max(std::log10(hi), l0 + 1e-6);
  auto px = [&](int k) { return r.x + r.w * double(k) / std::max(N, 1); };
  // log sigma on the strip's height; sigma 0 (a clean frame) on the bottom edge, an infinite sigma (a flow's pure
  // noise, s = 1) on the top edge.
  auto py = [&](double s) { return r.y + r.h - r.h * (std::log10(std::clamp(s, lo, hi)) - l0) / (l1 - l0); };
  cairo_set_source_rgb(cr, kInk[0], kInk[1], kInk[2]);
  cairo_set_line_width(cr, std::max(1.0, F / 16));
  cairo_rectangle(cr, r.x, r.y, r.w, r.h);
  cairo_stroke(cr);
  cairo_set_source_rgb(cr, 0.15, 0.4, 0.8);
  bool drawing = false;  // the positive levels (log scale): a clean frame (sigma 0) sits on the bottom edge
  for (int k = 0; k <= N; ++k) {
    const double s = f.sigma[size_t(k)];
    if (!(s > 0) || !std::isfinite(s)) continue;
    (drawing ? cairo_line_to : cairo_move_to)(cr, px(k), py(s));
    drawing = true;
  }
  cairo_stroke(cr);
  const int shown = std::clamp(f.shown_frame, 0, N);
  cairo_set_source_rgb(cr, 0.85, 0.2, 0.15);
  cairo_arc(cr, px(shown), py(f.sigma[size_t(shown)]), 0.3 * F, 0, 2 * M_PI);
  cairo_fill(cr);
  set_font(cr, 0.8 * F);
  cairo_set_source_rgb(cr, kInk[0], kInk[1], kInk[2]);
  const int every = std::max(1, int(std::ceil(N / 6.0)));
  std::vector<int> ticks;
  for (int k = 0; k <= N; k += every) ticks.push_back(k);
  if (ticks.back() != N) {  // the last frame always, in place of a tick too close to it
    if (N - ticks.back() < every / 2 && ticks.size() > 1) ticks.pop_back();
    ticks.push_back(N);
  }
  for (int k : ticks) {
    char sigma[32];
    if (std::isfinite(f.sigma[size_t(k)])) std::snprintf(sigma, sizeof sigma, "%.3g", f.sigma[size_t(k)]);
    else std::snprintf(sigma, sizeof sigma, "\xe2\x88\x9e");  // infinity
    const double align = k == 0 ? 0.0 : k == N ? 1.0 : 0.5;  // the end labels inside the strip's width
    text_at(cr, px(k), r.y + r.h + 1.0 * F, std::to_string(k), align);
    text_at(cr, px(k), r.y + r.h + 2.0 * F, sigma, align);
  }
  text_at(cr, r.x - 0.5 * F, r.y + r.h + 1.0 * F, "step", 1.0);
  text_at(cr, r.x - 0.5 * F, r.y + r.h + 2.0 * F, "\xcf\x83", 1.0);
  text_at(cr, r.x - 0.5 * F, r.y + 0.5 * r.h + 0.3 * F, "log \xcf\x83", 1.0);
}

void draw_raster(cairo_t* cr, const Figure& f, const FigureRect& plot) {
  if (f.raster.size() != size_t(plot.w) * plot.h * 4)
    throw InvalidInput("figure: the plot's raster is not " + std::to_string(plot.w) + "x" + std::to_string(plot.h));
  cairo_surface_t* img = cairo_image_surface_create(CAIRO_FORMAT_RGB24, plot.w, plot.h);
  cairo_surface_flush(img);
  unsigned char* dst = cairo_image_surface_get_data(img);
  const int stride = cairo_image_surface_get_stride(img);
  for (int y = 0; y < plot.h; ++y) {
    const uint8_t* src = f.raster.data() + size_t(y) * plot.w * 4;
    uint32_t* row = reinterpret_cast<uint32_t*>(dst + size_t(y) * stride);
    for (int x = 0; x < plot.w; ++x)
      row[x] = 0xff000000u | uint32_t(src[4 * x]) << 16 | uint32_t(src[4 * x + 1]) << 8 | src[4 * x + 2];
  }
  cairo_surface_mark_dirty(img);
  cairo_set_source_surface(cr, img, plot.x, plot.y);
  cairo_paint(cr);
  cairo_surface_destroy(img);
}

void draw_grid_lines(cairo_t* cr, const Figure& f, const FigureRect& s, const ViewMap& m) {
  const double half_w = s.w / (2 * m.k), half_h = f.cam.half_h, step = render::grid_step(half_h);
  const double x0 = f.cam.cx - half_w, x1 = f.cam.cx + half_w, y0 = f.cam.cy - half_h, y1 = f.cam.cy + half_h;
  cairo_set_line_width(cr, 1.0);
  for (int axis = 0; axis < 2; ++axis)
    for (double v : render::grid_lines(axis ? y0 : x0, axis ? y1 : x1, step)) {
      cairo_set_source_rgba(cr, 0.6, 0.65, 0.75, std::abs(v) < step * 1e-3 ? 0.28 : 0.08);
      if (axis) cairo_move_to(cr, s.x, m.y(v)), cairo_line_to(cr, s.x + s.w, m.y(v));
      else cairo_move_to(cr, m.x(v), s.y), cairo_line_to(cr, m.x(v), s.y + s.h);
      cairo_stroke(cr);
    }
}

// The marks as vectors, in the renderer's order: grid, data, trails, points, field.
void draw_marks(cairo_t* cr, const Figure& f, const Geometry& g) {
  const FigureRect& s = g.scatter;
  const FigureMarks& mk = f.marks;
  const ViewMap m = view_map(f, s);
  cairo_set_source_rgb(cr, kBackground[0], kBackground[1], kBackground[2]);
  cairo_rectangle(cr, g.plot.x, g.plot.y, g.plot.w, g.plot.h);
  cairo_fill(cr);
  cairo_save(cr);
  cairo_rectangle(cr, s.x, s.y, s.w, s.h);
  cairo_clip(cr);
  if (f.show_axes) draw_grid_lines(cr, f, s, m);
  const double data_r = std::max(1.5f, f.point_px * 0.9f) / 2;
  for (size_t i = 0; i + 1 < mk.data.size(); i += 2) {
    cairo_set_source_rgba(cr, 0.85, 0.87, 0.92, 0.22);
    cairo_arc(cr, m.x(mk.data[i]), m.y(mk.data[i + 1]), data_r, 0, 2 * M_PI);
    cairo_fill(cr);
  }
  const int L = mk.trail_slots, n = mk.n;
  const double trail_alpha = std::min(1.0f, f.point_alpha * 0.8f);
  cairo_set_line_width(cr, 1.0);
  for (int i = 0; i < n && L > 0; ++i) {
    float rgb[3];
    particle_colour(mk.start[2 * i], mk.start[2 * i + 1], rgb);
    for (int seg = 0; seg < L; ++seg) {  // slot - seg back to slot - seg - 1; alpha at the segment's middle age
      const float* a = &mk.trails[(size_t(L - seg) * n + i) * 2];
      const float* b = &mk.trails[(size_t(L - seg - 1) * n + i) * 2];
      const double age = (seg + 0.5) / L;
      cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], trail_alpha * (1 - age) * (1 - age));
      cairo_move_to(cr, m.x(a[0]), m.y(a[1]));
      cairo_line_to(cr, m.x(b[0]), m.y(b[1]));
      cairo_stroke(cr);
    }
  }
  for (int i = 0; i < n; ++i) {
    float rgb[3];
    particle_colour(mk.start[2 * i], mk.start[2 * i + 1], rgb);
    cairo_set_source_rgba(cr, rgb[0], rgb[1], rgb[2], f.point_alpha);
    cairo_arc(cr, m.x(mk.points[2 * i]), m.y(mk.points[2 * i + 1]), f.point_px / 2, 0, 2 * M_PI);
    cairo_fill(cr);
  }
  cairo_set_line_width(cr, 1.5);
  for (size_t i = 0; i + 1 < mk.field.size(); i += 2) {
    const render::LineVertex &a = mk.field[i], &b = mk.field[i + 1];
    cairo_set_source_rgba(cr, a.r, a.g, a.b, a.a);
    cairo_move_to(cr, m.x(a.x), m.y(a.y));
    cairo_line_to(cr, m.x(b.x), m.y(b.y));
    cairo_stroke(cr);
  }
  cairo_restore(cr);
}

void draw_page(cairo_t* cr, const Figure& f, const Geometry& g, bool vector) {
  cairo_font_options_t* fo = cairo_font_options_create();
  cairo_font_options_set_hint_metrics(fo, CAIRO_HINT_METRICS_OFF);
  cairo_set_font_options(cr, fo);
  cairo_font_options_destroy(fo);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  if (vector && f.vector_marks) draw_marks(cr, f, g);
  else draw_raster(cr, f, g.plot);
  draw_axes(cr, f, g);
  draw_legend(cr, f, g);
  if (g.strip.w > 0) draw_strip(cr, f, g);
  set_font(cr, g.font);
  cairo_set_source_rgb(cr, kInk[0], kInk[1], kInk[2]);
  for (size_t i = 0; i < g.caption.size(); ++i) text_at(cr, 0.8 * g.font, g.caption_y + 1.4 * g.font * double(i), g.caption[i]);
}

cairo_status_t append_bytes(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

std::string xml_escaped(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else o += c;
  }
  return o;
}

}  // namespace

FigureRect figure_plot_rect(const Figure& f) { return geometry(f).plot; }

std::vector<uint8_t> render_figure_rgba(const Figure& f) {
  const Geometry g = geometry(f);
  cairo_surface_t* surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, f.width, f.height);
  cairo_t* cr = cairo_create(surface);
  draw_page(cr, f, g, false);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  const unsigned char* data = cairo_image_surface_get_data(surface);
  const int stride = cairo_image_surface_get_stride(surface);
  std::vector<uint8_t> rgba(size_t(f.width) * f.height * 4);
  for (int y = 0; y < f.height; ++y)
    for (int x = 0; x < f.width; ++x) {
      const uint32_t p = reinterpret_cast<const uint32_t*>(data + size_t(y) * stride)[x];
      uint8_t* o = &rgba[(size_t(y) * f.width + x) * 4];
      o[0] = uint8_t(p >> 16), o[1] = uint8_t(p >> 8), o[2] = uint8_t(p), o[3] = 255;
    }
  cairo_surface_destroy(surface);
  return rgba;
}

std::string render_figure_vector(const Figure& f, FigureFormat format, const std::string& arg,
                                 const std::string& embedded) {
  const Geometry g = geometry(f);
  std::string out;
  const double w_pt = f.width * 0.75, h_pt = f.height * 0.75;  // a CSS pixel is 0.75 pt
  cairo_surface_t* surface = format == FigureFormat::Svg
                                 ? cairo_svg_surface_create_for_stream(append_bytes, &out, w_pt, h_pt)
                                 : cairo_pdf_surface_create_for_stream(append_bytes, &out, w_pt, h_pt);
  if (format == FigureFormat::Pdf) {
    cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_TITLE, f.caption.c_str());
    cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_CREATOR, "diffscope");
    if (!embedded.empty()) cairo_pdf_surface_set_metadata(surface, CAIRO_PDF_METADATA_SUBJECT, embedded.c_str());
  }
  cairo_t* cr = cairo_create(surface);
  cairo_scale(cr, 0.75, 0.75);
  draw_page(cr, f, g, true);
  const cairo_status_t drawn = cairo_status(cr);
  cairo_destroy(cr);
  cairo_surface_finish(surface);
  const cairo_status_t finished = cairo_surface_status(surface);
  cairo_surface_destroy(surface);
  if (drawn != CAIRO_STATUS_SUCCESS || finished != CAIRO_STATUS_SUCCESS)
    throw InvalidInput(arg + ": cairo could not draw the figure: " +
                       cairo_status_to_string(drawn != CAIRO_STATUS_SUCCESS ? drawn : finished));
  if (format == FigureFormat::Svg) {  // cairo writes text as glyph outlines: the words also as the SVG's title/desc
    const size_t open = out.find("<svg");
    const size_t end = open == std::string::npos ? open : out.find('>', open);
    if (end != std::string::npos)
      out.insert(end + 1, "\n<title>" + xml_escaped(f.caption) + "</title>\n<desc>" +
                              xml_escaped(f.x_label + "; " + f.y_label + "; " + f.samples_label) + "</desc>" +
                              (embedded.empty() ? "" : "\n<metadata>" + xml_escaped(embedded) + "</metadata>"));
  }
  return out;
}

#endif

}  // namespace diffscope
