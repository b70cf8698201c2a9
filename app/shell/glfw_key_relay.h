// glfw_key_relay.h — the window's key callback. ImGui 1.86 samples io.KeysDown[] once per frame, so a tap
// whose press and release land in one glfwPollEvents (a short tap while a frame takes 500 ms) is lost to
// its widgets and to polled shortcuts. The relay queues every press for the app's shortcuts (App::keys) and
// forwards each event to ImGui, holding back the release of a key pressed since the last frame by one
// frame, so text fields and buttons see the tap too.
#pragma once

struct GLFWwindow;

namespace diffscope::shell {

// Replaces ImGui's key callback (call after ImGui_ImplGlfw_InitForOpenGL) with the relay. The window's user
// pointer, when set, is the App whose KeyQueue gets the presses.
void install_key_relay(GLFWwindow* window);
// Once per frame, before glfwPollEvents: hands the releases held back last frame to ImGui.
void key_relay_new_frame(GLFWwindow* window);

}  // namespace diffscope::shell
