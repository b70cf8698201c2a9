// window_glfw.cpp — the windowed app: a render::GlfwDisplay, ImGui's GLFW platform (shell/glfw_platform.h),
// drag-and-drop, Ctrl+C, and the one frame loop (shell/frame_loop.h) until the window closes.
#include <epoxy/gl.h>
#include <GLFW/glfw3.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>

#include "base/words.h"
#include "picture/restore.h"
#include "render/glfw_display.h"
#include "shell/compute_select.h"
#include "shell/frame_loop.h"
#include "shell/glfw_platform.h"
#include "shell/run.h"

namespace diffscope::shell {
using namespace ui;  // the shell drives the ui layer's App
namespace {

// Ctrl+C or a kill from the terminal ends the frame loop like closing the window, so settings are saved.
std::atomic<bool> g_quit_requested{false};
extern "C" void on_quit_signal(int) { g_quit_requested.store(true); }

void drop_callback(GLFWwindow* w, int count, const char** paths) {
  auto* app = static_cast<App*>(glfwGetWindowUserPointer(w));
  if (!app || count == 0) return;
  // An export's PNG or sidecar: its model, settings and view; else a model.
  app->push(is_restore_file(paths[0]) ? Action::restore(paths[0]) : Action::load_model(paths[0]));
}

// The window's user pointer is the App (the key relay and the drop callback read it) while this lives.
struct WindowApp {
  WindowApp(GLFWwindow* w, App& app) : window(w) {
    glfwSetWindowUserPointer(window, &app);
    glfwSetDropCallback(window, drop_callback);
  }
  ~WindowApp() { glfwSetWindowUserPointer(window, nullptr); }
  GLFWwindow* window;
};
}  // namespace

int run_window(const AppOptions& app_opts, const WindowOptions& win) {
  check_screenshot_path("--screenshot", win.screenshot);  // before the window: a bad name costs nothing
  // The last window's size and place (when persisting and no --size), saved again at the end.
  const std::string window_file =
      app_opts.persist ? (app_opts.config_dir.empty() ? default_config_dir() : app_opts.config_dir) + "/window.json" : "";
  const std::optional<render::WindowRect> saved =
      window_file.empty() || win.size_given ? std::nullopt : render::load_window_rect(window_file);
  // Declared in the order they are made; destroyed in reverse, also when something below throws.
  render::GlfwDisplay display(win.width, win.height, "diffscope", saved ? &*saved : nullptr);  // ResourceUnavailable
  ImGuiSession imgui;
  GlfwPlatform platform(display);
  ImGuiGl3Renderer imgui_gl3;

  App app(app_opts, make_compute_services());
  app.init(ui_scale(display));
  app.connect_keys();
  WindowApp window_app(display.window(), app);
  FrameLoop loop(app, display, platform);
  int phase_frames = 0;
  std::array<double, kFramePhases> phase_sum{};
  const int warm = win.max_frames > 0 ? std::max(1, win.max_frames / 10) : 0;
  auto t_warm = std::chrono::steady_clock::now();
  loop.before_present = [&] {
    const int frames = loop.frames() + 1;  // this frame included
    if (frames == warm) t_warm = std::chrono::steady_clock::now();
    if (frames > warm + 1) {  // probe.last() is the frame before: warm-up frames stay out
      for (int p = 0; p < kFramePhases; ++p) phase_sum[p] += app.probe().last().phase_ms[p];
      ++phase_frames;
    }
    if (win.max_frames > 0 && frames >= win.max_frames) {
      if (!win.screenshot.empty()) save_screenshot(display, win.screenshot);
      display.request_close();
    }
  };
  std::signal(SIGINT, on_quit_signal);
  std::signal(SIGTERM, on_quit_signal);
  while (!display.should_close() && !g_quit_requested.load()) loop.run_frame();
  const int frames = loop.frames();
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_warm).count();
  std::printf(
      "diffscope gui: %s, %.1f fps at the end, mean %.1f frames/s after %s; "
      "B=%d steps=%d precision=%s trail=%d runs %d; GL: %s; path: %s\n",
      count_noun(frames, "frame").c_str(), app.stats().fps, frames > warm && secs > 0 ? (frames - warm) / secs : 0.0,
      count_noun(warm, "warm-up frame").c_str(), app.session().settings().n_samples, app.session().n_steps(),
      precision_name(app.session().settings().precision), app.settings().view.trail_frames,
      app.session().runs_completed(), display.description().c_str(), app.session().path_note().c_str());
  std::printf("diffscope gui: phases after warm-up (ms/frame, present = the swap): %s\n",
              phase_ms_json(phase_sum, phase_frames ? 1.0 / phase_frames : 0.0).c_str());
  if (!window_file.empty()) render::save_window_rect(window_file, display.window_rect());
  app.shutdown();
  return 0;
}

}  // namespace diffscope::shell
