// gl_buffers.cpp — trajectory SSBO, offscreen FBO, timer queries.
#include "render/gl_buffers.h"

#include <cstring>
#include <stdexcept>
#include <string>

#include "base/errors.h"
#include "run/frame_probe.h"

namespace diffscope::render {

GlTrajectoryBuffer::GlTrajectoryBuffer() { glGenBuffers(1, &m_id); }
GlTrajectoryBuffer::~GlTrajectoryBuffer() {
  if (m_id) glDeleteBuffers(1, &m_id);
}

void GlTrajectoryBuffer::resize(size_t bytes) {
  while (glGetError() != GL_NO_ERROR) {
  }
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_id);
  glBufferData(GL_SHADER_STORAGE_BUFFER, static_cast<GLsizeiptr>(bytes), nullptr, GL_DYNAMIC_DRAW);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
  if (glGetError() == GL_OUT_OF_MEMORY) {
    m_bytes = 0;
    throw ResourceUnavailable("trajectory buffer: OpenGL is out of memory for " + std::to_string(bytes >> 20) +
                              " MB; lower the samples or the memory budget");
  }
  m_bytes = bytes;
}

void GlTrajectoryBuffer::upload(size_t offset_bytes, size_t bytes, const void* data) {
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_id);
  glBufferSubData(GL_SHADER_STORAGE_BUFFER, static_cast<GLintptr>(offset_bytes), static_cast<GLsizeiptr>(bytes),
                  data);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
}

void GlTrajectoryBuffer::download(size_t offset_bytes, size_t bytes, void* out) const {
  count_readback();
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, m_id);
  glGetBufferSubData(GL_SHADER_STORAGE_BUFFER, static_cast<GLintptr>(offset_bytes), static_cast<GLsizeiptr>(bytes),
                     out);
  glBindBuffer(GL_SHADER_STORAGE_BUFFER, 0);
}

OffscreenTarget::~OffscreenTarget() { release(); }

void OffscreenTarget::release() {
  if (m_fbo) glDeleteFramebuffers(1, &m_fbo);
  if (m_tex) glDeleteTextures(1, &m_tex);
  m_fbo = m_tex = 0;
  m_w = m_h = 0;
}

void OffscreenTarget::ensure(int width, int height) {
  if (m_fbo && width == m_w && height == m_h) return;
  release();
  glGenTextures(1, &m_tex);
  glBindTexture(GL_TEXTURE_2D, m_tex);
  glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, width, height);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glGenFramebuffers(1, &m_fbo);
  glBindFramebuffer(GL_FRAMEBUFFER, m_fbo);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, m_tex, 0);
  const GLenum st = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (st != GL_FRAMEBUFFER_COMPLETE) {
    release();
    throw std::runtime_error("offscreen target " + std::to_string(width) + "x" + std::to_string(height) +
                             " is incomplete (status 0x" + std::to_string(st) + ")");
  }
  m_w = width;
  m_h = height;
}

void OffscreenTarget::bind() const {
  glBindFramebuffer(GL_FRAMEBUFFER, m_fbo);
  glViewport(0, 0, m_w, m_h);
}

std::vector<uint8_t> OffscreenTarget::read_rgba_top_down() const {
  count_readback();
  std::vector<uint8_t> px(static_cast<size_t>(m_w) * m_h * 4), out(px.size());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, m_fbo);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadPixels(0, 0, m_w, m_h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  const size_t row = static_cast<size_t>(m_w) * 4;
  for (int y = 0; y < m_h; ++y) std::memcpy(out.data() + y * row, px.data() + (m_h - 1 - y) * row, row);
  return out;
}

SavedFramebuffer::SavedFramebuffer() {
  glGetIntegerv(GL_DRAW_FRAMEBUFFER_BINDING, &fbo);
  glGetIntegerv(GL_VIEWPORT, viewport);
}

void SavedFramebuffer::restore() const {
  glBindFramebuffer(GL_FRAMEBUFFER, static_cast<GLuint>(fbo));
  glViewport(viewport[0], viewport[1], viewport[2], viewport[3]);
}

size_t max_storage_block_bytes() {
  GLint64 v = 0;
  glGetInteger64v(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &v);
  return v > 0 ? static_cast<size_t>(v) : 0;
}

GpuTimer::~GpuTimer() {
  if (m_q[0]) glDeleteQueries(kQueries, m_q);
}

void GpuTimer::begin() {
  if (!m_q[0]) glGenQueries(kQueries, m_q);
  // Collect every finished span, oldest first; never wait for one still in flight.
  for (int k = 1; k <= kQueries; ++k) {
    const int q = (m_cur + k) % kQueries;
    if (!m_pending[q]) continue;
    GLint ready = 0;
    glGetQueryObjectiv(m_q[q], GL_QUERY_RESULT_AVAILABLE, &ready);
    if (!ready) break;  // later queries finish later
    GLuint64 ns = 0;
    glGetQueryObjectui64v(m_q[q], GL_QUERY_RESULT, &ns);
    m_last_ms = ns * 1e-6;
    m_pending[q] = false;
  }
  m_active = !m_pending[m_cur];  // every query still in flight (a GPU far behind): skip this span
  if (m_active) glBeginQuery(GL_TIME_ELAPSED, m_q[m_cur]);
}

void GpuTimer::end() {
  if (!m_active) return;
  glEndQuery(GL_TIME_ELAPSED);
  m_pending[m_cur] = true;
  m_cur = (m_cur + 1) % kQueries;
  m_active = false;
}

}  // namespace diffscope::render
