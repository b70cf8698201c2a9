// glfw_display.h — GlfwDisplay: the Display of a GLFW window with an OpenGL 4.3 core context (Dear ImGui's
// example_glfw_opengl3): HiDPI content scale (GLFW_SCALE_TO_MONITOR), vsync, the back buffer as the frame.
// The ImGui platform backend and the key relay attach to window() (shell/window_glfw.cpp).
#pragma once
#include "render/display.h"
#include "render/window_fit.h"

struct GLFWwindow;

namespace diffscope::render {

class GlfwDisplay final : public Display {
 public:
  // Opens the window (screen coordinates; fitted to the primary monitor's work area when larger: fit_window in
  // render/window_fit.h) and makes its context current; with `saved` (the last window, window.json) its size
  // and place instead, fitted the same way (place_saved_window). Throws ResourceUnavailable when
  // there is no display or no GL 4.3 core context; GLFW is terminated again then.
  GlfwDisplay(int width, int height, const char* title, const WindowRect* saved = nullptr);
  // The window's place and size now, the size before the content scale (what `saved` takes).
  WindowRect window_rect() const;
  ~GlfwDisplay() override;  // destroys the window and terminates GLFW
  GlfwDisplay(const GlfwDisplay&) = delete;
  GlfwDisplay& operator=(const GlfwDisplay&) = delete;

  void begin_frame() override;  // glfwPollEvents
  void bind_target() override;  // the default framebuffer
  void end_frame() override;    // glfwSwapBuffers
  Pixels read_rgba() const override;
  DisplaySize size() const override;
  float content_scale() const override;
  void set_vsync(bool on) override;
  bool should_close() const override;
  void request_close() override;
  std::string description() const override;

  GLFWwindow* window() const { return m_window; }

 private:
  GLFWwindow* m_window = nullptr;
};

}  // namespace diffscope::render
