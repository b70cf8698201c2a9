// renderer.cpp — the scene: axes, data overlay, trails, points, field arrows, image grid.
#include "render/renderer.h"

#include <algorithm>
#include <cmath>

#include "render/axis_grid.h"
#include "render/viridis.h"
#include "render/particle_pick.h"
#include "render/splat.h"

namespace diffscope::render {

Renderer::Renderer()
    : m_points({"common.glsl", "points.vert"}, {"points.frag"}),
      m_trails({"common.glsl", "trails.vert"}, {"color.frag"}),
      m_lines({"lines.vert"}, {"color.frag"}),
      m_grid({"image_grid.vert"}, {"image_grid.frag"}),
      m_bin(std::vector<std::string>{"common.glsl", "density_bin.comp"}),
      m_max(std::vector<std::string>{"density_max.comp"}),
      m_density({"image_grid.vert"}, {"density.frag"}),
      m_contours({"image_grid.vert"}, {"contours.frag"}) {
  glGenVertexArrays(1, &m_vao_empty);
  glGenVertexArrays(1, &m_vao_lines);
  glGenBuffers(1, &m_vbo_lines);
  glBindVertexArray(m_vao_lines);
  glBindBuffer(GL_ARRAY_BUFFER, m_vbo_lines);
  glEnableVertexAttribArray(0);
  glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(LineVertex), nullptr);
  glEnableVertexAttribArray(1);
  glVertexAttribPointer(1, 4, GL_FLOAT, GL_FALSE, sizeof(LineVertex), reinterpret_cast<void*>(2 * sizeof(float)));
  glBindVertexArray(0);
  glGenBuffers(1, &m_proj);
  glGenBuffers(1, &m_data);
  m_pick = std::make_unique<ParticlePick>();
  m_splat = std::make_unique<SplatDraw>();
  set_projection({0, 0}, {1, 0}, {0, 1});
  GLuint b[5];
  glGenBuffers(5, b);
  m_counts = b[0], m_edges = b[1], m_palette = b[2], m_mix = b[3], m_max_copy = b[4];
  std::vector<float> pal(256 * 4, 1.0f);  // the viridis table as vec4s (std430)
  for (int i = 0; i < 256; ++i)
    for (int c = 0; c < 3; ++c) pal[4 * i + c] = kViridis[3 * i + c] / 255.0f;
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_palette);
  glBufferData(GL_SHADER_STORAGE_BUFFER, pal.size() * sizeof(float), pal.data(), GL_STATIC_DRAW);
  glBindBuffer(GL_COPY_WRITE_BUFFER, m_max_copy);
  glBufferData(GL_COPY_WRITE_BUFFER, sizeof(uint32_t), nullptr, GL_STREAM_READ);
  glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
}

Renderer::~Renderer() {
  glDeleteVertexArrays(1, &m_vao_empty);
  glDeleteVertexArrays(1, &m_vao_lines);
  glDeleteBuffers(1, &m_vbo_lines);
  glDeleteBuffers(1, &m_proj);
  glDeleteBuffers(1, &m_data);
  const GLuint b[5] = {m_counts, m_edges, m_palette, m_mix, m_max_copy};
  glDeleteBuffers(5, b);
  if (m_max_fence) glDeleteSync(m_max_fence);
}

void Renderer::set_projection(const std::vector<float>& mean, const std::vector<float>& axis0,
                              const std::vector<float>& axis1) {
  std::vector<float> p;
  p.insert(p.end(), mean.begin(), mean.end());
  p.insert(p.end(), axis0.begin(), axis0.end());
  p.insert(p.end(), axis1.begin(), axis1.end());
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_proj);
  glBufferData(GL_SHADER_STORAGE_BUFFER, p.size() * sizeof(float), p.data(), GL_STATIC_DRAW);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  m_proj_dim = static_cast<int>(mean.size());
}

void Renderer::set_data(const float* data, int n, int dim) {
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_data);
  const size_t bytes = static_cast<size_t>(std::max(n, 1)) * std::max(dim, 1) * sizeof(float);
  glBufferData(GL_SHADER_STORAGE_BUFFER, bytes, n > 0 ? data : nullptr, GL_STATIC_DRAW);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  m_data_n = n;
}

SceneLayout Renderer::layout(int w, int h, bool image_model, const Insets& inset) {
  const int left = std::clamp(inset.left, 0, w / 2);
  const int bottom = std::clamp(inset.bottom, 0, h / 2);
  const int top = std::clamp(inset.top, 0, std::max(0, 3 * h / 4 - bottom));
  const Rect free{left, bottom, w - left, h - bottom - top};
  SceneLayout l;
  if (!image_model) {
    l.scatter = free;
    return l;
  }
  const int gw = std::min(free.w / 2, free.h);
  l.grid = {free.x, free.y + (free.h - gw) / 2, gw, gw};
  l.scatter = {free.x + gw, free.y, free.w - gw, free.h};
  return l;
}

int Renderer::grid_rows(int B, int cols, int max_rows) {
  cols = std::max(cols, 1);
  return std::clamp((B + cols - 1) / cols, 1, std::max(max_rows, 1));
}

void Renderer::draw_scene(const SceneInput& in, int w, int h) {
  glViewport(0, 0, w, h);
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_SCISSOR_TEST);
  glClearColor(0.055f, 0.06f, 0.075f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (!in.trajectory || in.B <= 0 || in.dim <= 0 || in.trajectory->size_bytes() == 0) return;
  const SceneLayout l = layout(w, h, in.image_model, in.inset);
  if (in.image_model) {
    const int cols = std::max(1, in.grid_cols), rows = grid_rows(in.B, cols, cols);
    Rect g = l.grid;  // square cells: rows/cols of the square rect's height, centered
    const int gh = g.h * rows / cols;
    g.y += (g.h - gh) / 2;
    g.h = gh;
    draw_image_grid(in, g, rows);
  }
  draw_scatter(in, l.scatter);
  glViewport(0, 0, w, h);
}

void Renderer::draw_pane(const SceneInput& in, const Rect& r) {
  if (r.w <= 0 || r.h <= 0) return;
  glEnable(GL_SCISSOR_TEST);
  glScissor(r.x, r.y, r.w, r.h);
  glClearColor(0.085f, 0.09f, 0.11f, 1.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  if (in.trajectory && in.B > 0 && in.dim > 0 && in.trajectory->size_bytes() > 0) draw_scatter(in, r);
  glDisable(GL_SCISSOR_TEST);
}

void Renderer::draw_image_grid(const SceneInput& in, const Rect& r, int rows) {
  glViewport(r.x, r.y, r.w, r.h);
  glDisable(GL_BLEND);
  m_grid.use();
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in.trajectory->gl_buffer());
  glUniform1i(m_grid.loc("u_dim"), in.dim);
  glUniform1i(m_grid.loc("u_B"), in.B);
  glUniform1i(m_grid.loc("u_slot"), in.slot);
  glUniform1i(m_grid.loc("u_cols"), std::max(1, in.grid_cols));
  glUniform1i(m_grid.loc("u_rows"), rows);
  glUniform1i(m_grid.loc("u_side"), in.image_side);
  glUniform2f(m_grid.loc("u_range"), m_img_lo, m_img_hi);
  glBindVertexArray(m_vao_empty);
  glDrawArrays(GL_TRIANGLES, 0, 6);
  glBindVertexArray(0);
}

void Renderer::draw_lines(const std::vector<LineVertex>& v, const float view[4], float width) {
  if (v.empty()) return;
  glBindVertexArray(m_vao_lines);
  glBindBuffer(GL_ARRAY_BUFFER, m_vbo_lines);
  glBufferData(GL_ARRAY_BUFFER, v.size() * sizeof(LineVertex), v.data(), GL_STREAM_DRAW);
  m_lines.use();
  glUniform4fv(m_lines.loc("u_view"), 1, view);
  glLineWidth(width);
  glDrawArrays(GL_LINES, 0, static_cast<GLsizei>(v.size()));
  glLineWidth(1.0f);
  glBindVertexArray(0);
}

void Renderer::draw_axes(const SceneInput& in, const float view[4], double aspect) {
  m_scratch.clear();  // a faint unit grid and the two axes
  const double hw = in.cam.half_h * aspect, hh = in.cam.half_h;
  const double step = grid_step(hh);
  const double x0 = in.cam.cx - hw, x1 = in.cam.cx + hw, y0 = in.cam.cy - hh, y1 = in.cam.cy + hh;
  for (double x : grid_lines(x0, x1, step)) {  // bounded whatever the camera holds
    const float a = std::abs(x) < step * 1e-3 ? 0.28f : 0.08f;
    m_scratch.push_back({float(x), float(y0), 0.6f, 0.65f, 0.75f, a});
    m_scratch.push_back({float(x), float(y1), 0.6f, 0.65f, 0.75f, a});
  }
  for (double y : grid_lines(y0, y1, step)) {
    const float a = std::abs(y) < step * 1e-3 ? 0.28f : 0.08f;
    m_scratch.push_back({float(x0), float(y), 0.6f, 0.65f, 0.75f, a});
    m_scratch.push_back({float(x1), float(y), 0.6f, 0.65f, 0.75f, a});
  }
  draw_lines(m_scratch, view, 1.0f);
}

void Renderer::draw_scatter(const SceneInput& in, const Rect& r) {
  glViewport(r.x, r.y, r.w, r.h);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
  glEnable(GL_PROGRAM_POINT_SIZE);
  const double aspect = r.h > 0 ? double(r.w) / r.h : 1.0;
  const float view[4] = {float(in.cam.cx), float(in.cam.cy), float(1.0 / (in.cam.half_h * aspect)),
                         float(1.0 / in.cam.half_h)};
  if (in.show_axes) draw_axes(in, view, aspect);

  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, m_proj);
  glBindVertexArray(m_vao_empty);
  const bool proj_ok = in.dim == 2 || m_proj_dim == in.dim;
  if (in.show_data && m_data_n > 0 && proj_ok) {
    m_points.use();
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, m_data);
    glUniform1i(m_points.loc("u_dim"), in.dim);
    glUniform1i(m_points.loc("u_B"), m_data_n);
    glUniform4fv(m_points.loc("u_view"), 1, view);
    glUniform1i(m_points.loc("u_slot"), 0);
    glUniform1f(m_points.loc("u_point_size"), std::max(1.5f, in.point_size * 0.9f));
    glUniform4f(m_points.loc("u_color"), 0.85f, 0.87f, 0.92f, 0.22f);
    glUniform1i(m_points.loc("u_color_mode"), 0);
    glDrawArrays(GL_POINTS, 0, m_data_n);
  }
  if (!proj_ok) return;
  if (in.draw_density) draw_density(in, r, aspect);
  if (in.draw_points) draw_samples(in, r, view);
  glBindVertexArray(0);
  if (!in.contours.empty()) draw_contours(in, r, view);
  if (in.show_field) draw_lines(m_field, view, 1.5f);
  if (!in.picks.empty()) {
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in.trajectory->gl_buffer());
    glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, m_proj);
    glBindVertexArray(m_vao_empty);
    m_pick->draw(in, view);
    glBindVertexArray(0);
  }
  if (in.draw_density) draw_colour_bar(r);
}

void Renderer::draw_samples(const SceneInput& in, const Rect& r, const float view[4]) {
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in.trajectory->gl_buffer());
  const int trail = std::min(in.trail_slots, in.slot);
  if (in.splat && SplatDraw::fits(r.w, r.h)) {
    m_splat->accumulate(in, r, view, trail);
    m_splat->resolve(r);
    glBindVertexArray(m_vao_empty);
    return;
  }
  if (trail > 0) {
    m_trails.use();
    glUniform1i(m_trails.loc("u_dim"), in.dim);
    glUniform1i(m_trails.loc("u_B"), in.B);
    glUniform4fv(m_trails.loc("u_view"), 1, view);
    glUniform1i(m_trails.loc("u_slot"), in.slot);
    glUniform1i(m_trails.loc("u_len"), trail);
    glUniform1f(m_trails.loc("u_alpha"), std::min(1.0f, in.point_alpha * 0.8f));
    glDrawArrays(GL_LINES, 0, 2 * trail * in.B);
  }
  m_points.use();
  glUniform1i(m_points.loc("u_dim"), in.dim);
  glUniform1i(m_points.loc("u_B"), in.B);
  glUniform4fv(m_points.loc("u_view"), 1, view);
  glUniform1i(m_points.loc("u_slot"), in.slot);
  glUniform1f(m_points.loc("u_point_size"), in.point_size);
  glUniform4f(m_points.loc("u_color"), 1, 1, 1, in.point_alpha);
  glUniform1i(m_points.loc("u_color_mode"), 1);
  glDrawArrays(GL_POINTS, 0, in.B);
}

void Renderer::bin_density(const SceneInput& in, const HistogramGrid& g) {
  m_density_grid = g;
  std::vector<float> edges = histogram_edges(g.x0, g.x1, g.nx);
  const std::vector<float> ey = histogram_edges(g.y0, g.y1, g.ny);
  edges.insert(edges.end(), ey.begin(), ey.end());
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_edges);
  glBufferData(GL_SHADER_STORAGE_BUFFER, edges.size() * sizeof(float), edges.data(), GL_STREAM_DRAW);
  const size_t bins = size_t(g.nx) * g.ny, bytes = (bins + 1) * sizeof(uint32_t);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_counts);
  if (bytes != m_counts_bytes) glBufferData(GL_SHADER_STORAGE_BUFFER, bytes, nullptr, GL_DYNAMIC_COPY);
  m_counts_bytes = bytes;
  const uint32_t zero = 0;
  glClearBufferData(GL_SHADER_STORAGE_BUFFER, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, &zero);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, in.trajectory->gl_buffer());
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 2, m_proj);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, m_counts);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 4, m_edges);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  m_bin.use();
  glUniform1i(m_bin.loc("u_dim"), in.dim);
  glUniform1i(m_bin.loc("u_B"), in.B);
  glUniform1i(m_bin.loc("u_slot"), in.slot);
  glUniform1i(m_bin.loc("u_nx"), g.nx);
  glUniform1i(m_bin.loc("u_ny"), g.ny);
  glDispatchCompute(GLuint((in.B + 255) / 256), 1, 1);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  m_max.use();
  glUniform1i(m_max.loc("u_bins"), int(bins));
  glDispatchCompute(GLuint((bins + 255) / 256), 1, 1);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
  // The largest count for the colour bar's labels: copied on the GPU and read by density_max() once the GPU is
  // past the fence; while a copy waits to be read, later frames make none (the labels lag, nothing waits).
  if (m_max_fence) return;
  glBindBuffer(GL_COPY_READ_BUFFER, m_counts);
  glBindBuffer(GL_COPY_WRITE_BUFFER, m_max_copy);
  glCopyBufferSubData(GL_COPY_READ_BUFFER, GL_COPY_WRITE_BUFFER, 0, 0, sizeof(uint32_t));
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  glBindBuffer(GL_COPY_WRITE_BUFFER, 0);
  m_max_fence = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
}

std::vector<uint32_t> Renderer::density_counts() const {
  std::vector<uint32_t> all(m_counts_bytes / sizeof(uint32_t));
  if (all.empty()) return all;
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_counts);
  glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, GLsizeiptr(m_counts_bytes), all.data());
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  return std::vector<uint32_t>(all.begin() + 1, all.end());
}

uint32_t Renderer::density_max() {
  if (!m_max_fence) return m_max_seen;
  const GLenum st = glClientWaitSync(m_max_fence, 0, 0);
  if (st != GL_ALREADY_SIGNALED && st != GL_CONDITION_SATISFIED) return m_max_seen;
  glBindBuffer(GL_COPY_READ_BUFFER, m_max_copy);
  glGetBufferSubData(GL_COPY_READ_BUFFER, 0, sizeof(uint32_t), &m_max_seen);
  glBindBuffer(GL_COPY_READ_BUFFER, 0);
  glDeleteSync(m_max_fence);
  m_max_fence = nullptr;
  return m_max_seen;
}

uint32_t Renderer::density_max_wait() const {
  uint32_t top = 0;
  if (m_counts_bytes == 0) return top;
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_counts);
  glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, sizeof top, &top);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  return top;
}

Rect Renderer::colour_bar_rect(const Rect& pane) {
  const int w = std::clamp(pane.w / 60, 8, 16), h = std::max(8, int(pane.h * 0.45));
  return {pane.x + pane.w - w - 12, pane.y + int(pane.h * 0.08), w, h};
}

void Renderer::draw_density(const SceneInput& in, const Rect& r, double aspect) {
  const int bin_px = histogram_bin_px(r.w, r.h, in.density_bin_px);
  const double hw = in.cam.half_h * aspect, hh = in.cam.half_h;
  bin_density(in, pane_histogram_grid(in.cam.cx - hw, in.cam.cx + hw, in.cam.cy - hh, in.cam.cy + hh, r.w, r.h, bin_px));
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 3, m_counts);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 5, m_palette);
  m_density.use();
  glUniform2i(m_density.loc("u_origin"), r.x, r.y);
  glUniform1i(m_density.loc("u_bin_px"), bin_px);
  glUniform1i(m_density.loc("u_nx"), m_density_grid.nx);
  glUniform1i(m_density.loc("u_ny"), m_density_grid.ny);
  glUniform1i(m_density.loc("u_log"), in.density_log ? 1 : 0);
  glUniform1i(m_density.loc("u_bar"), 0);
  glBindVertexArray(m_vao_empty);
  glDrawArrays(GL_TRIANGLES, 0, 6);
}

void Renderer::draw_colour_bar(const Rect& r) {
  const Rect bar = colour_bar_rect(r);  // labelled by the UI (ui/view_legend.cpp)
  glViewport(bar.x, bar.y, bar.w, bar.h);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 5, m_palette);
  m_density.use();
  glUniform1i(m_density.loc("u_bar"), 1);
  glBindVertexArray(m_vao_empty);
  glDrawArrays(GL_TRIANGLES, 0, 6);
  glBindVertexArray(0);
  glViewport(r.x, r.y, r.w, r.h);
}

void Renderer::draw_contours(const SceneInput& in, const Rect& r, const float view[4]) {
  std::vector<float> comps;
  double top = -1e300;  // the largest log density (at most): log sum_k w_k / (2 pi var_k), rounded down
  double peak = 0;
  for (const IsoGaussian2& c : in.contours) {
    comps.insert(comps.end(), {float(c.w), float(c.mx), float(c.my), float(c.var)});
    peak += c.w / (6.283185307179586 * c.var);
  }
  top = std::floor(std::log(peak));
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_mix);
  glBufferData(GL_SHADER_STORAGE_BUFFER, comps.size() * sizeof(float), comps.data(), GL_STREAM_DRAW);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 6, m_mix);
  m_contours.use();
  glUniform1i(m_contours.loc("u_K"), int(in.contours.size()));
  glUniform4fv(m_contours.loc("u_view"), 1, view);
  glUniform4i(m_contours.loc("u_pane"), r.x, r.y, r.w, r.h);
  glUniform1f(m_contours.loc("u_top"), float(top));
  glUniform1f(m_contours.loc("u_levels"), 6.0f);
  glBindVertexArray(m_vao_empty);
  glDrawArrays(GL_TRIANGLES, 0, 6);
  glBindVertexArray(0);
}

int Renderer::pick_nearest(const SceneInput& in, double x, double y, double radius) {
  if (in.dim != 2 && m_proj_dim != in.dim) return -1;
  return m_pick->nearest(in, m_proj, x, y, radius);
}

std::vector<float> Renderer::pick_row_path(const SceneInput& in, int row, int n_slots) {
  if (in.dim != 2 && m_proj_dim != in.dim) return std::vector<float>(size_t(std::max(n_slots, 0)) * 2, 0.f);
  return m_pick->row_path(in, m_proj, row, n_slots);
}

}  // namespace diffscope::render
