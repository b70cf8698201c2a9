// egl_display.cpp — the headless Display.
#include "render/egl_display.h"

#include <epoxy/gl.h>

#include <algorithm>

namespace diffscope::render {

void EglDisplay::set_size(int w, int h) {
  m_size = {std::max(0, w), std::max(0, h)};
  m_target.ensure(std::max(1, m_size.w), std::max(1, m_size.h));
}

void EglDisplay::end_frame() { glFinish(); }

}  // namespace diffscope::render
