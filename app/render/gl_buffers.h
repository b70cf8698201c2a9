// gl_buffers.h — the GL side of the trajectory (an SSBO implementing run's TrajectoryBufferTarget), an
// offscreen render target (FBO + RGBA8 texture) and double-buffered GPU timer queries.
#pragma once
#include <epoxy/gl.h>

#include <cstdint>
#include <vector>

#include "run/compute_path.h"

namespace diffscope::render {

// The trajectory slots (n_slots, B, dim) float32 in one GL buffer, bound as SSBO 0 when drawing.
class GlTrajectoryBuffer final : public TrajectoryBufferTarget {
 public:
  GlTrajectoryBuffer();
  ~GlTrajectoryBuffer() override;
  GlTrajectoryBuffer(const GlTrajectoryBuffer&) = delete;
  GlTrajectoryBuffer& operator=(const GlTrajectoryBuffer&) = delete;
  unsigned gl_buffer() const override { return m_id; }
  size_t size_bytes() const override { return m_bytes; }
  // Throws ResourceUnavailable when GL runs out of memory.
  void resize(size_t bytes) override;
  void upload(size_t offset_bytes, size_t bytes, const void* data) override;
  void download(size_t offset_bytes, size_t bytes, void* out) const override;

 private:
  GLuint m_id = 0;
  size_t m_bytes = 0;
};

// An offscreen color target of a given size (RGBA8), for headless frames and snapshots.
class OffscreenTarget {
 public:
  OffscreenTarget() = default;
  ~OffscreenTarget();
  OffscreenTarget(const OffscreenTarget&) = delete;
  OffscreenTarget& operator=(const OffscreenTarget&) = delete;
  // (Re)creates the target when the size changes; throws std::runtime_error if the FBO is incomplete.
  void ensure(int width, int height);
  void bind() const;  // binds the FBO and sets the viewport
  GLuint fbo() const { return m_fbo; }
  int width() const { return m_w; }
  int height() const { return m_h; }
  // Reads the pixels, top row first (GL's bottom-up rows flipped), 4 bytes per pixel.
  std::vector<uint8_t> read_rgba_top_down() const;

 private:
  void release();
  GLuint m_fbo = 0, m_tex = 0;
  int m_w = 0, m_h = 0;
};

// The bound draw framebuffer and viewport, restored later (exports draw into their own target mid-frame).
struct SavedFramebuffer {
  SavedFramebuffer();
  void restore() const;
  GLint fbo = 0;
  GLint viewport[4] = {0, 0, 0, 0};
};

// GL_MAX_SHADER_STORAGE_BLOCK_SIZE: the largest trajectory the shaders can bind whole (128 MB on llvmpipe).
size_t max_storage_block_bytes();

// GL_TIME_ELAPSED around a span of GL work. Results are read when GL_QUERY_RESULT_AVAILABLE says so (a frame
// or more late); the CPU never waits: with every query of the ring still in flight, a span goes untimed.
class GpuTimer {
 public:
  ~GpuTimer();
  void begin();
  void end();
  // Milliseconds of the latest finished span (0 until one finished).
  double last_ms() const { return m_last_ms; }

 private:
  static constexpr int kQueries = 4;
  GLuint m_q[kQueries] = {};
  bool m_pending[kQueries] = {};
  bool m_active = false;
  int m_cur = 0;
  double m_last_ms = 0;
};

}  // namespace diffscope::render
