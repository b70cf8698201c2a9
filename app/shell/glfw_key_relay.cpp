// glfw_key_relay.cpp — key presses to the app's queue and to ImGui, short taps' releases one frame late.
#include "shell/glfw_key_relay.h"

#include <epoxy/gl.h>  // before GLFW (app.h brings the renderer's GL header too)
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>

#include <algorithm>
#include <bitset>
#include <vector>

#include "ui/app.h"

namespace diffscope::shell {
using namespace ui;  // the shell drives the ui layer's App

namespace {

struct Release {
  int key, scancode, mods;
};
std::bitset<GLFW_KEY_LAST + 1> g_pressed_this_frame;  // one window per process: the state of its relay
std::vector<Release> g_held_back;

void relay(GLFWwindow* window, int key, int scancode, int action, int mods) {
  if (auto* app = static_cast<App*>(glfwGetWindowUserPointer(window)); app && action != GLFW_RELEASE)
    app->push_key({key, (mods & GLFW_MOD_SHIFT) != 0, (mods & GLFW_MOD_CONTROL) != 0, action == GLFW_REPEAT});
  const bool known = key >= 0 && key <= GLFW_KEY_LAST;
  if (known && action == GLFW_PRESS) {
    g_pressed_this_frame.set(key);
    // Pressed again before its held-back release reached ImGui: the key is down, drop that release.
    g_held_back.erase(std::remove_if(g_held_back.begin(), g_held_back.end(), [&](const Release& r) { return r.key == key; }),
                      g_held_back.end());
  }
  if (known && action == GLFW_RELEASE && g_pressed_this_frame.test(key)) {
    g_held_back.push_back({key, scancode, mods});
    return;
  }
  ImGui_ImplGlfw_KeyCallback(window, key, scancode, action, mods);
}

}  // namespace

void install_key_relay(GLFWwindow* window) { glfwSetKeyCallback(window, relay); }

void key_relay_new_frame(GLFWwindow* window) {
  g_pressed_this_frame.reset();
  std::vector<Release> held;
  held.swap(g_held_back);
  for (const Release& r : held) ImGui_ImplGlfw_KeyCallback(window, r.key, r.scancode, GLFW_RELEASE, r.mods);
}

}  // namespace diffscope::shell
