// run.h — the two ways to run the app: a GLFW window, or headless (EGL offscreen, scripted input).
#pragma once
#include <string>

#include "ui/app.h"

namespace diffscope::shell {
using ui::AppOptions;

struct WindowOptions {
  int width = 1600, height = 1000;  // window size in screen coordinates
  int max_frames = 0;               // > 0: close after this many frames (smoke tests)
  std::string screenshot;           // with max_frames: write the last frame (with UI) as PNG here
};

// Opens the window and runs the frame loop until it is closed. Throws ResourceUnavailable when no window
// can be opened (no display).
int run_window(const AppOptions& app_opts, const WindowOptions& win);

struct HeadlessOptions {
  int width = 1280, height = 800;   // framebuffer pixels (ImGui's io.DisplaySize)
  std::string script;               // script file; "" = run until the first run completes
  std::string screenshot;           // final frame with UI as PNG (optional)
};

// Runs the UI frame loop in an EGL context without a window. Returns 0 when every script command
// succeeded, 1 when an `expect` failed. Throws ResourceUnavailable when no EGL/GL 4.3 context exists.
int run_headless(const AppOptions& app_opts, const HeadlessOptions& opts);

}  // namespace diffscope::shell
