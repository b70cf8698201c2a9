// glfw_platform.h — ImGui's platform side of the window: Dear ImGui's GLFW backend and the key relay
// (shell/glfw_key_relay.h) on a render::GlfwDisplay's window, installed for as long as it lives.
#pragma once
#include "render/glfw_display.h"
#include "shell/frame_loop.h"

namespace diffscope::shell {

class GlfwPlatform final : public FramePlatform {
 public:
  explicit GlfwPlatform(render::GlfwDisplay& display);  // ImGui's context must exist
  ~GlfwPlatform() override;
  GlfwPlatform(const GlfwPlatform&) = delete;
  GlfwPlatform& operator=(const GlfwPlatform&) = delete;

  void before_events() override;                      // the key relay's held-back releases
  void new_frame(render::DisplaySize size) override;  // ImGui_ImplGlfw_NewFrame

 private:
  render::GlfwDisplay& m_display;
};

}  // namespace diffscope::shell
