// glfw_platform.cpp — ImGui's GLFW backend and the key relay on the window.
#include "shell/glfw_platform.h"

#include <epoxy/gl.h>  // before GLFW
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include "shell/glfw_key_relay.h"

namespace diffscope::shell {

GlfwPlatform::GlfwPlatform(render::GlfwDisplay& display) : m_display(display) {
  ImGui_ImplGlfw_InitForOpenGL(display.window(), true);
  install_key_relay(display.window());  // short key taps reach the shortcuts and ImGui even at low frame rates
}

GlfwPlatform::~GlfwPlatform() { ImGui_ImplGlfw_Shutdown(); }

void GlfwPlatform::before_events() { key_relay_new_frame(m_display.window()); }

void GlfwPlatform::new_frame(render::DisplaySize) { ImGui_ImplGlfw_NewFrame(); }

}  // namespace diffscope::shell
