// glfw_display.cpp — the window's Display (GLFW 3.3, GL 4.3 core through epoxy).
#include "render/glfw_display.h"

#include <epoxy/gl.h>
#include <GLFW/glfw3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/errors.h"

namespace diffscope::render {
namespace {
void glfw_error(int code, const char* msg) { std::fprintf(stderr, "diffscope: glfw error %d: %s\n", code, msg); }
}  // namespace

GlfwDisplay::GlfwDisplay(int width, int height, const char* title, const WindowRect* saved) {
  glfwSetErrorCallback(glfw_error);
  if (!glfwInit())
    throw ResourceUnavailable(
        "cannot open a window (no display?). Without a display: `diffscope gui --headless --screenshot out.png` "
        "(add --script FILE to drive it: frames, set, key, export, screenshot, ... as in app/shell/headless.cpp), "
        "or `diffscope sample --model moons --steps 100 --out x.npy --png x.png` for a picture of one run");
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 4);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
  // A window larger than the screen (1600 x 1000 on a laptop) opens fitted to the primary monitor's work area.
  WindowRect area;
  float scale = 1;
  if (GLFWmonitor* m = glfwGetPrimaryMonitor()) {
    glfwGetMonitorWorkarea(m, &area.x, &area.y, &area.w, &area.h);
    glfwGetMonitorContentScale(m, &scale, nullptr);
  }
  const WindowRect r = saved ? place_saved_window(*saved, scale, area) : fit_window(width, height, scale, area);
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);  // shown once placed
  m_window = glfwCreateWindow(r.w, r.h, title, nullptr, nullptr);
  if (!m_window) {
    glfwTerminate();
    throw ResourceUnavailable("cannot create a window with an OpenGL 4.3 core context");
  }
  if (r.x >= 0) glfwSetWindowPos(m_window, r.x, r.y);
  glfwShowWindow(m_window);
  glfwMakeContextCurrent(m_window);
}

GlfwDisplay::~GlfwDisplay() {
  glfwDestroyWindow(m_window);
  glfwTerminate();
}

void GlfwDisplay::begin_frame() { glfwPollEvents(); }

void GlfwDisplay::bind_target() { glBindFramebuffer(GL_FRAMEBUFFER, 0); }

void GlfwDisplay::end_frame() { glfwSwapBuffers(m_window); }

Pixels GlfwDisplay::read_rgba() const {
  const DisplaySize s = size();
  std::vector<uint8_t> px(size_t(s.w) * s.h * 4);
  Pixels out{std::vector<uint8_t>(px.size()), s.w, s.h};
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glReadBuffer(GL_BACK);
  glReadPixels(0, 0, s.w, s.h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
  for (int y = 0; y < s.h; ++y)
    std::copy_n(px.data() + size_t(s.h - 1 - y) * s.w * 4, size_t(s.w) * 4, out.rgba.data() + size_t(y) * s.w * 4);
  return out;
}

DisplaySize GlfwDisplay::size() const {
  DisplaySize s;
  glfwGetFramebufferSize(m_window, &s.w, &s.h);  // drawing is sized by the framebuffer, not the window
  return s;
}

WindowRect GlfwDisplay::window_rect() const {
  WindowRect r;
  glfwGetWindowPos(m_window, &r.x, &r.y);
  glfwGetWindowSize(m_window, &r.w, &r.h);
  const float s = content_scale();
  if (s > 0 && s != 1) r.w = int(std::lround(r.w / s)), r.h = int(std::lround(r.h / s));
  return r;
}

float GlfwDisplay::content_scale() const {
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(m_window, &sx, &sy);
  return sx;
}

void GlfwDisplay::set_vsync(bool on) { glfwSwapInterval(on ? 1 : 0); }
bool GlfwDisplay::should_close() const { return glfwWindowShouldClose(m_window); }
void GlfwDisplay::request_close() { glfwSetWindowShouldClose(m_window, GLFW_TRUE); }

std::string GlfwDisplay::description() const {
  const char* r = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  return r ? r : "?";
}

}  // namespace diffscope::render
