// run.h — the two ways to run the app: a GLFW window, or headless (EGL offscreen, scripted input).
#pragma once
#include <string>

#include "ui/app.h"

namespace diffscope::shell {
using ui::AppOptions;

struct WindowOptions {
  int width = 1600, height = 1000;  // window size in screen coordinates
  bool size_given = false;          // --size: this size, not the last window's (CONFIG_DIR/window.json)
  int max_frames = 0;               // > 0: close after this many frames (smoke tests)
  std::string screenshot;           // with max_frames: write the last frame (with UI) here (.png, .jpg, .jpeg)
};

// Opens the window and runs the frame loop until it is closed. Throws ResourceUnavailable when no window
// can be opened (no display).
int run_window(const AppOptions& app_opts, const WindowOptions& win);

struct HeadlessOptions {
  int width = 1280, height = 800;   // framebuffer pixels (ImGui's io.DisplaySize)
  std::string script;               // script file; "" = run until the first run completes
  std::string screenshot;           // final frame with UI, .png or .jpg / .jpeg (optional)
};

// What went wrong in a headless run that ran to its end (the script goes on after a failed line, as the app
// does; the caller turns this into the exit status: `diffscope gui --headless` exits 2, or 3 when a command
// failed for want of a resource such as ffmpeg).
struct HeadlessResult {
  int failed_expects = 0;          // `expect` and `wait_complete` lines that failed (or the run did not complete)
  int failed_commands = 0;         // `export`, `model` and `restore` lines that failed, exports started by S / V
  bool unavailable = false;        // one of them failed for want of a resource (ResourceUnavailable)
  std::string first_failure;       // "script:LINE: export KIND: why" (or "model NAME: why", ...) of the first
  bool ok() const { return failed_expects == 0 && failed_commands == 0; }
  void command_failed(const std::string& what, bool unavailable);
};

// Runs the UI frame loop in an EGL context without a window, then the script (each line's failure is printed
// on stdout and counted). Throws ResourceUnavailable when no EGL/GL 4.3 context exists, InvalidInput for a
// malformed script line.
HeadlessResult run_headless(const AppOptions& app_opts, const HeadlessOptions& opts);

// The headless script's command language, every command with its arguments, their ranges and defaults, made from
// the command table (`diffscope gui --script-help`).
std::string script_help();

}  // namespace diffscope::shell
