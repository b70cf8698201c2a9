// frame_loop.h — the one frame loop of the app, the same for the window and headless (polyscope's Engine +
// Dear ImGui's example loop): the display's events, ImGui's new frame, App::frame, ImGui's draw, present. The
// display (render/display.h) says where the frame goes; the FramePlatform feeds ImGui's input side.
#pragma once
#include <chrono>
#include <functional>
#include <string>

#include "render/display.h"
#include "run/frame_probe.h"
#include "ui/app.h"

namespace diffscope::shell {

// ImGui's platform side of a display: what sets up io before ImGui::NewFrame.
class FramePlatform {
 public:
  virtual ~FramePlatform() = default;
  // Before the display's events of a frame (the window's key relay hands over held-back releases).
  virtual void before_events() {}
  // After them, before ImGui::NewFrame: io's display size, scale, time step and input.
  virtual void new_frame(render::DisplaySize size) = 0;
};

// ImGui's context for as long as it lives (also when what follows, e.g. App::init, throws).
class ImGuiSession {
 public:
  ImGuiSession();
  ~ImGuiSession();
  ImGuiSession(const ImGuiSession&) = delete;
  ImGuiSession& operator=(const ImGuiSession&) = delete;
};

// ImGui's OpenGL 3 renderer backend (GLSL 4.30) for as long as it lives; made after the platform backend (the
// window's comes first, as in ImGui's example) and shut down before it.
class ImGuiGl3Renderer {
 public:
  ImGuiGl3Renderer();
  ~ImGuiGl3Renderer();
  ImGuiGl3Renderer(const ImGuiGl3Renderer&) = delete;
  ImGuiGl3Renderer& operator=(const ImGuiGl3Renderer&) = delete;
};

class FrameLoop {
 public:
  FrameLoop(ui::App& app, render::Display& display, FramePlatform& platform)
      : m_app(app), m_display(display), m_platform(platform) {}

  // One frame. GL errors seen after it are counted (the first 8 printed).
  void run_frame();
  // Called each frame after the drawing, before the display presents it (a window's screenshot is read here).
  std::function<void()> before_present;

  int frames() const { return m_frames; }
  int gl_errors() const { return m_gl_errors; }
  double work_ms() const { return m_work_ms; }  // wall time of the last run_frame()
  // The GPU-wait counters and completed runs since the last reset_counts() (scripts' expect).
  void reset_counts();
  int runs_at_reset() const { return m_runs_at_reset; }
  FrameCounts counts() const { return frame_counts_total() - m_counts_at_reset; }

 private:
  ui::App& m_app;
  render::Display& m_display;
  FramePlatform& m_platform;
  int m_frames = 0, m_gl_errors = 0;
  double m_work_ms = 0;
  FrameCounts m_counts_at_reset;
  int m_runs_at_reset = 0;
};

// The UI scale: $DIFFSCOPE_UI_SCALE when set > 0 (HiDPI layout checks without such a monitor), else the display's.
float ui_scale(const render::Display& display);

// Writes the display's current frame (UI included), atomically: the window's --frames --screenshot, the
// headless `screenshot` command and --screenshot. The format follows the name: .png (RGB PNG, libpng), .jpg or
// .jpeg (JPEG, quality 92, stb_image_write); any other name is refused (check_screenshot_path).
void save_screenshot(const render::Display& display, const std::string& path);
// Throws InvalidInput naming `arg` and `path` when the name ends in none of .png, .jpg, .jpeg (any case); call
// it before any work, so a bad name costs nothing ("" passes: no screenshot).
void check_screenshot_path(const std::string& arg, const std::string& path);

}  // namespace diffscope::shell
