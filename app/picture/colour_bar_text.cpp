// colour_bar_text.cpp — the colour bar's labels drawn with cairo into a picture's pixels (colour_bar_text.h).
#include "picture/colour_bar_text.h"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace diffscope {
namespace {

constexpr double kInk[3] = {200 / 255.0, 206 / 255.0, 220 / 255.0};  // the app's legend text

// Right-aligned at x, its middle at y.
void text_right(cairo_t* cr, double x, double y, const std::string& s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  cairo_move_to(cr, x - e.x_advance, y - e.y_bearing - e.height / 2);
  cairo_show_text(cr, s.c_str());
}

}  // namespace

void label_colour_bar(std::vector<uint8_t>& rgba, int w, int h, const render::Rect& pane, uint32_t top, bool log_scale,
                      double px) {
  if (top == 0 || w <= 0 || h <= 0 || rgba.size() < size_t(w) * h * 4) return;
  const render::Rect b = render::Renderer::colour_bar_rect(pane);
  const double y0 = h - (b.y + b.h), y1 = h - b.y;  // the bar's top and bottom rows, top-down
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  unsigned char* d = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  cairo_surface_flush(s);
  for (int y = 0; y < h; ++y)  // RGBA bytes to cairo's native-endian 0xXXRRGGBB words
    for (int x = 0; x < w; ++x) {
      const uint8_t* p = &rgba[4 * (size_t(y) * w + x)];
      reinterpret_cast<uint32_t*>(d + size_t(y) * stride)[x] = uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2];
    }
  cairo_surface_mark_dirty(s);
  cairo_t* cr = cairo_create(s);
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, px);
  cairo_set_source_rgb(cr, kInk[0], kInk[1], kInk[2]);
  cairo_set_line_width(cr, 1.0);
  const std::vector<double> ticks = colour_bar_ticks(top, log_scale);
  double last_bottom = -1e9;
  for (auto it = ticks.rbegin(); it != ticks.rend(); ++it) {  // top first: the largest count always shows
    const double y = y1 - colour_bar_position(*it, top, log_scale) * (y1 - y0);
    if (y - px / 2 < last_bottom + 2) continue;  // too close to the label above
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", *it);
    cairo_move_to(cr, b.x - 4, std::round(y) + 0.5);
    cairo_line_to(cr, b.x, std::round(y) + 0.5);
    cairo_stroke(cr);
    text_right(cr, b.x - 6, y, buf);
    last_bottom = y + px / 2;
  }
  text_right(cr, b.x + b.w, y0 - px / 2 - 4, "samples per bin");
  cairo_destroy(cr);
  cairo_surface_flush(s);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const uint32_t v = reinterpret_cast<const uint32_t*>(d + size_t(y) * stride)[x];
      uint8_t* p = &rgba[4 * (size_t(y) * w + x)];
      p[0] = uint8_t(v >> 16), p[1] = uint8_t(v >> 8), p[2] = uint8_t(v);
    }
  cairo_surface_destroy(s);
}

void label_scene_colour_bar(std::vector<uint8_t>& rgba, int w, int h, const render::SceneInput& in,
                            const render::Renderer& renderer, float ui_scale) {
  if (!in.draw_density || !in.trajectory || in.B <= 0 || in.trajectory->size_bytes() == 0) return;
  const render::Rect pane = render::Renderer::layout(w, h, in.image_model, in.inset).scatter;
  label_colour_bar(rgba, w, h, pane, renderer.density_max_wait(), in.density_log, 13.0 * ui_scale);
}

}  // namespace diffscope
