// grid_png.cpp — the comparison grid's PNG (grid_png.h).
#include "picture/grid_png.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <stb_easy_font.h>  // libstb (Debian's libstb-dev): header-only, static functions

#include "base/errors.h"
#include "formats/png_write.h"
#include "formats/video_writer.h"
#include "picture/sample_png.h"

namespace diffscope {
namespace {

constexpr int kTextScale = 2;           // stb_easy_font's 7-pixel glyphs, doubled
constexpr int kLineHeight = 12 * kTextScale;

struct Canvas {
  int w = 0, h = 0;
  std::vector<uint8_t> rgb;
  void fill(int x0, int y0, int x1, int y1, const uint8_t c[3]) {
    for (int y = std::max(0, y0); y < std::min(h, y1); ++y)
      for (int x = std::max(0, x0); x < std::min(w, x1); ++x) std::memcpy(&rgb[(static_cast<size_t>(y) * w + x) * 3], c, 3);
  }
  // Text with stb_easy_font's quads (axis-aligned rectangles) times `scale`, top-left at (x, y), clipped to [x, x_max).
  void text(int x, int y, const std::string& s, const uint8_t c[3], int x_max, int scale = kTextScale) {
    std::vector<char> buf(s.begin(), s.end());
    buf.push_back(0);
    std::vector<float> quads(buf.size() * 270);  // 16 bytes per vertex, at most ~60 quads per glyph
    unsigned char col[4] = {c[0], c[1], c[2], 255};
    const int nq = stb_easy_font_print(0, 0, buf.data(), col, quads.data(), static_cast<int>(quads.size() * sizeof(float)));
    for (int q = 0; q < nq; ++q) {
      const float* v = &quads[static_cast<size_t>(q) * 16];  // 4 vertices of x, y, z, colour
      const int qx0 = x + static_cast<int>(v[0] * scale), qy0 = y + static_cast<int>(v[1] * scale);
      const int qx1 = x + static_cast<int>(v[8] * scale), qy1 = y + static_cast<int>(v[9] * scale);
      fill(qx0, qy0, std::min(qx1, x_max), qy1, c);
    }
  }
};

constexpr uint8_t kInk[3] = {230, 230, 230}, kDim[3] = {150, 150, 150}, kPaper[3] = {24, 24, 28}, kStrip[3] = {0, 0, 0};

// The grid's cells as the kept frames of one picture request: slot i is cell i's final samples.
SamplePng cells_as_frames(const GridPng& r) {
  const GridPlan& p = *r.plan;
  SamplePng s;
  s.model = &p.model_of(p.cells[0]);
  s.B = p.n;
  s.frames = r.result->x.data();
  s.n_frames = static_cast<int>(p.cells.size());
  for (int i = 0; i < s.n_frames; ++i) s.frame_numbers.push_back(i);
  s.settings.view.trail_frames = 0;  // slots are cells, not frames of one run
  s.settings.view.show_field = false;
  return s;
}

int text_width(const std::string& s, int scale) {
  std::vector<char> buf(s.begin(), s.end());
  buf.push_back(0);
  return stb_easy_font_width(buf.data()) * scale;
}

// A cell's caption at the bottom of its w x h rectangle at (x0, y0): its pieces ("2 NFE", "E 0.29", "floor 0.005")
// packed into as few lines as fit the width, the glyphs halved when a piece alone does not fit (crowded grids).
void draw_caption(Canvas& cv, const GridCellMetrics& m, int x0, int y0, int w, int h) {
  std::vector<std::string> pieces;
  for (const std::string& line : grid_cell_caption(m))
    for (size_t a = 0, b;; a = b + 2) {
      b = line.find("  ", a);
      pieces.push_back(line.substr(a, b - a));
      if (b == std::string::npos) break;
    }
  int scale = kTextScale;
  for (const std::string& piece : pieces)
    if (text_width(piece, scale) > w - 8) scale = 1;
  std::vector<std::string> lines;
  for (const std::string& piece : pieces) {
    if (!lines.empty() && text_width(lines.back() + "  " + piece, scale) <= w - 8) lines.back() += "  " + piece;
    else lines.push_back(piece);
  }
  const int line_h = 12 * scale, strip = static_cast<int>(lines.size()) * line_h + 4;
  cv.fill(x0, y0 + h - strip, x0 + w, y0 + h, kStrip);
  for (size_t k = 0; k < lines.size(); ++k)
    cv.text(x0 + 4, y0 + h - strip + 4 + static_cast<int>(k) * line_h, lines[k], k ? kDim : kInk, x0 + w, scale);
}

// The column labels: "steps=5" over each column, or, when one of them does not fit its column, the values alone
// with the axis's name in the top-left corner.
void draw_column_labels(Canvas& cv, const GridPlan& p, int left, int cw) {
  bool fits = true;
  for (int c = 0; c < p.spec.n_cols(); ++c) fits = fits && text_width(p.col_label(c), kTextScale) <= cw - 8;
  if (!fits) cv.text(4, 4, std::string(grid_axis_name(p.spec.cols.axis)) + ":", kDim, left);
  for (int c = 0; c < p.spec.n_cols(); ++c)
    cv.text(left + c * cw + 4, 4, fits ? p.col_label(c) : p.spec.cols.values[static_cast<size_t>(c)], kInk,
            left + (c + 1) * cw);
}

}  // namespace

std::vector<std::string> grid_cell_caption(const GridCellMetrics& m) {
  char a[64], b[64] = "";
  const long long evals = static_cast<long long>(m.evaluations);
  if (std::isnan(m.energy.energy)) std::snprintf(a, sizeof a, "%lld NFE", evals);
  else std::snprintf(a, sizeof a, "%lld NFE  E %.2g", evals, m.energy.energy);
  if (!std::isnan(m.exact_rms)) std::snprintf(b, sizeof b, "ODE err %.2g", m.exact_rms);
  else if (!std::isnan(m.energy.floor)) std::snprintf(b, sizeof b, "floor %.2g", m.energy.floor);
  return b[0] ? std::vector<std::string>{a, b} : std::vector<std::string>{a};
}

GridLayout grid_png_layout(const GridSpec& spec, int w, int h) {
  GridLayout g;
  for (int r = 0; r < spec.n_rows() && spec.rows.axis != GridAxis::None; ++r) {  // at most a third of the width
    std::string label = grid_label(spec.rows, r);
    g.left = std::min(std::max(g.left, stb_easy_font_width(label.data()) * kTextScale + 12), w / 3);
  }
  g.top = spec.cols.axis != GridAxis::None ? kLineHeight + 8 : 0;
  g.cw = (w - g.left) / spec.n_cols(), g.ch = (h - g.top) / spec.n_rows();
  if (g.cw < 32 || g.ch < 32)
    throw InvalidInput("--size " + std::to_string(w) + "x" + std::to_string(h) + " leaves cells of " +
                       std::to_string(g.cw) + "x" + std::to_string(g.ch) + " pixels; valid: at least 32x32 per cell");
  return g;
}

namespace {

// The whole picture: the cells' states of slots slot0 .. slot0 + cells - 1 of `renderer`, captions and labels.
Canvas draw_grid(const GridPng& r, RunRenderer& renderer, int slot0) {
  const GridPlan& p = *r.plan;
  const int rows = p.spec.n_rows();
  const bool row_axis = p.spec.rows.axis != GridAxis::None, col_axis = p.spec.cols.axis != GridAxis::None;
  const GridLayout lay = grid_png_layout(p.spec, r.width, r.height);
  const int left = lay.left, top = lay.top, cw = lay.cw, ch = lay.ch;
  Canvas cv{r.width, r.height, std::vector<uint8_t>(static_cast<size_t>(r.width) * r.height * 3)};
  cv.fill(0, 0, r.width, r.height, kPaper);
  for (int i = 0; i < static_cast<int>(p.cells.size()); ++i) {
    const GridCell& c = p.cells[static_cast<size_t>(i)];
    const std::vector<uint8_t> px = renderer.render(slot0 + i, cw - 2, ch - 2);
    const int x0 = left + c.col * cw + 1, y0 = top + c.row * ch + 1;
    for (int y = 0; y < ch - 2; ++y)
      for (int x = 0; x < cw - 2; ++x)
        std::memcpy(&cv.rgb[(static_cast<size_t>(y0 + y) * r.width + x0 + x) * 3],
                    &px[(static_cast<size_t>(y) * (cw - 2) + x) * 4], 3);
    draw_caption(cv, r.result->metrics[static_cast<size_t>(i)], x0, y0, cw - 2, ch - 2);
  }
  if (col_axis) draw_column_labels(cv, p, left, cw);
  for (int rr = 0; rr < rows && row_axis; ++rr)
    cv.text(4, top + rr * ch + ch / 2 - kLineHeight / 2, p.row_label(rr), kInk, left);
  return cv;
}

nlohmann::json grid_sidecar(const GridPng& r, const std::string& render_device) {
  nlohmann::json grid = grid_metrics_json(*r.plan, *r.result);
  grid["models"] = r.plan->model_names;
  return {{"kind", "grid"}, {"generator", "diffscope sample --grid"}, {"png", r.png}, {"backend", r.backend},
          {"render_device", render_device}, {"command_line", r.command_line}, {"grid", grid}};
}

}  // namespace

GridPngFiles render_grid_png(const GridPng& r) {
  const SamplePng req = cells_as_frames(r);
  RunRenderer renderer(req);
  const Canvas cv = draw_grid(r, renderer, 0);
  const nlohmann::json side = grid_sidecar(r, renderer.device());
  GridPngFiles out;
  out.sidecar = side.dump(2) + "\n";
  std::vector<std::pair<std::string, std::string>> text;
  if (r.png_text) text.emplace_back("diffscope", out.sidecar);
  out.png = encode_png(cv.rgb.data(), r.width, r.height, 3, text, "--png");
  return out;
}

std::string write_grid_video(const GridLive& live, const GridPng& picture, const GridVideo& video) {
  const GridPlan& p = live.plan();
  const int cells = live.cells();
  const size_t cell = static_cast<size_t>(p.n) * p.dim;
  const int steps = p.cells[static_cast<size_t>(timeline_cell(p))].plan.steps;
  const int budget = static_cast<int>(std::max<size_t>(2, (size_t(64) << 20) / (cell * cells)));
  const int frames = std::max(2, std::min(steps + 1, budget));
  std::vector<float> states(cell * cells * frames);
  std::vector<double> positions;
  for (int k = 0; k < frames; ++k) {
    positions.push_back(static_cast<double>(k) / (frames - 1));
    for (int i = 0; i < cells; ++i) {
      const float* s = live.state_at(i, positions.back(), video.align);
      std::copy(s, s + cell, states.begin() + static_cast<std::ptrdiff_t>(cell * (static_cast<size_t>(k) * cells + i)));
    }
  }
  SamplePng req = cells_as_frames(picture);
  req.frames = states.data();
  req.n_frames = frames * cells;
  req.frame_numbers.clear();
  for (int i = 0; i < req.n_frames; ++i) req.frame_numbers.push_back(i);
  RunRenderer renderer(req);
  int w = picture.width, h = picture.height;
  const VideoFormat f = video_format_of("--video", video.path);
  video_frame_size(f, &w, &h);
  GridPng sized = picture;
  sized.width = w, sized.height = h;
  VideoWriter writer(VideoOptions{video.path, w, h, video.fps, video.lossless, "--video", video.yuv420});
  std::vector<uint8_t> rgba(static_cast<size_t>(w) * h * 4, 255);
  for (int k = 0; k < frames; ++k) {
    const Canvas cv = draw_grid(sized, renderer, k * cells);
    for (size_t q = 0; q < static_cast<size_t>(w) * h; ++q) std::memcpy(&rgba[q * 4], &cv.rgb[q * 3], 3);
    writer.add_frame(rgba.data());
  }
  writer.finish();
  nlohmann::json side = grid_sidecar(picture, renderer.device());
  side.erase("png");
  side["video"] = video.path;
  side["fps"] = video.fps;
  side["positions"] = positions;
  side["align"] = video.align == GridAlign::Step ? "step" : "noise";
  return side.dump(2) + "\n";
}

}  // namespace diffscope
