// splat.cpp — the compute splat's passes (splat.h).
#include "render/splat.h"

#include <algorithm>

#include "render/gl_buffers.h"
#include "render/renderer.h"

namespace diffscope::render {
namespace {

// A 2D grid of 256-wide groups covering n invocations (splat.glsl splat_index), within GL's 65,535 per dimension.
void dispatch_rows(size_t n) {
  const size_t groups = std::max<size_t>((n + 255) / 256, 1);
  const size_t gx = std::min<size_t>(groups, 65535), gy = (groups + gx - 1) / gx;
  glDispatchCompute(GLuint(gx), GLuint(gy), 1);
}

void set_rows(const GlProgram& p, const SceneInput& in, const Rect& r, const float view[4]) {
  p.use();
  glUniform1i(p.loc("u_dim"), in.dim);
  glUniform1i(p.loc("u_B"), in.B);
  glUniform4fv(p.loc("u_view"), 1, view);
  glUniform2i(p.loc("u_size"), r.w, r.h);
  glUniform1i(p.loc("u_slot"), in.slot);
}

}  // namespace

SplatDraw::SplatDraw()
    : m_points(std::vector<std::string>{"common.glsl", "splat.glsl", "splat_points.comp"}),
      m_trails(std::vector<std::string>{"common.glsl", "splat.glsl", "splat_trails.comp"}),
      m_exposure(std::vector<std::string>{"splat_exposure.comp"}),
      m_resolve({"image_grid.vert"}, {"splat_resolve.frag"}) {
  glGenBuffers(1, &m_accum);
  glGenBuffers(1, &m_hist);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_hist);
  glBufferData(GL_SHADER_STORAGE_BUFFER, 64 * sizeof(uint32_t), nullptr, GL_DYNAMIC_COPY);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  glGenVertexArrays(1, &m_vao);
}

SplatDraw::~SplatDraw() {
  glDeleteBuffers(1, &m_accum);
  glDeleteBuffers(1, &m_hist);
  glDeleteVertexArrays(1, &m_vao);
}

size_t SplatDraw::image_bytes(int w, int h) { return size_t(std::max(w, 1)) * size_t(std::max(h, 1)) * 8 * sizeof(uint32_t); }

bool SplatDraw::fits(int w, int h) { return image_bytes(w, h) <= max_storage_block_bytes(); }

void SplatDraw::accumulate(const SceneInput& in, const Rect& r, const float view[4], int trail) {
  const size_t bytes = image_bytes(r.w, r.h);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_accum);
  if (bytes != m_bytes) glBufferData(GL_SHADER_STORAGE_BUFFER, GLsizeiptr(bytes), nullptr, GL_DYNAMIC_COPY);
  m_bytes = bytes;
  const uint32_t zero = 0;
  glClearBufferData(GL_SHADER_STORAGE_BUFFER, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, &zero);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 7, m_accum);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  if (trail > 0) {
    set_rows(m_trails, in, r, view);
    glUniform1i(m_trails.loc("u_len"), trail);
    glUniform1f(m_trails.loc("u_alpha"), std::min(1.0f, in.point_alpha * 0.8f));  // trails.vert's
    dispatch_rows(size_t(in.B) * size_t(trail));
  }
  set_rows(m_points, in, r, view);
  glUniform1f(m_points.loc("u_point_size"), in.point_size);
  glUniform1f(m_points.loc("u_alpha"), in.point_alpha);
  dispatch_rows(size_t(in.B));
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_hist);  // the exposure's depth histogram
  glClearBufferData(GL_SHADER_STORAGE_BUFFER, GL_R32UI, GL_RED_INTEGER, GL_UNSIGNED_INT, &zero);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 8, m_hist);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
  m_exposure.use();
  glUniform1i(m_exposure.loc("u_pixels"), r.w * r.h);
  dispatch_rows(size_t(std::max(r.w, 0)) * std::max(r.h, 0));
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT);
}

void SplatDraw::resolve(const Rect& r) {
  glEnable(GL_BLEND);
  glBlendFunc(GL_ONE, GL_ONE_MINUS_SRC_ALPHA);  // the shader writes premultiplied colour
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 7, m_accum);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 8, m_hist);
  m_resolve.use();
  glUniform2i(m_resolve.loc("u_origin"), r.x, r.y);
  glUniform2i(m_resolve.loc("u_size"), r.w, r.h);
  glBindVertexArray(m_vao);
  glDrawArrays(GL_TRIANGLES, 0, 6);
  glBindVertexArray(0);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
}

std::vector<uint32_t> SplatDraw::accumulation() const {
  std::vector<uint32_t> out(m_bytes / sizeof(uint32_t));
  if (out.empty()) return out;
  glMemoryBarrier(GL_BUFFER_UPDATE_BARRIER_BIT);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_accum);
  glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, 0, GLsizeiptr(m_bytes), out.data());
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  return out;
}

}  // namespace diffscope::render
