// egl_display.h — EglDisplay: the Display of the headless app (ARCHITECTURE.md "Headless"): an EGL context
// (render/egl_context.h) and an offscreen framebuffer of the size set_size() gives, as the "screen".
#pragma once
#include "render/display.h"
#include "render/egl_context.h"
#include "render/gl_buffers.h"

namespace diffscope::render {

class EglDisplay final : public Display {
 public:
  // Creates and makes current the EGL context (throws ResourceUnavailable); no target until set_size().
  EglDisplay() = default;

  // The frame size from now on (each clamped to >= 0; the target keeps at least 1 x 1 pixels).
  void set_size(int w, int h);

  void begin_frame() override {}
  void bind_target() override { m_target.bind(); }
  void end_frame() override;  // glFinish: the headless "present"
  Pixels read_rgba() const override { return {m_target.read_rgba_top_down(), m_target.width(), m_target.height()}; }
  DisplaySize size() const override { return m_size; }
  float content_scale() const override { return 1.0f; }
  std::string description() const override { return m_egl.description(); }

 private:
  EglContext m_egl;
  OffscreenTarget m_target;
  DisplaySize m_size;
};

}  // namespace diffscope::render
