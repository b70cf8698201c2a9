// window_glfw.cpp — the windowed frame loop (Dear ImGui's example_glfw_opengl3): GLFW window with a GL 4.3
// core context (epoxy), HiDPI content scale, drag-and-drop, vsync, then App::frame each frame.
#include <epoxy/gl.h>
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "core/errors.h"
#include "render/gl_buffers.h"
#include "ui/exporter.h"
#include "shell/glfw_key_relay.h"
#include "shell/compute_select.h"
#include "shell/run.h"

namespace diffscope::shell {
using namespace ui;  // the shell drives the ui layer's App
namespace {
void glfw_error(int code, const char* msg) { std::fprintf(stderr, "diffscope: glfw error %d: %s\n", code, msg); }

// Ctrl+C or a kill from the terminal ends the frame loop like closing the window, so settings are saved.
std::atomic<bool> g_quit_requested{false};
extern "C" void on_quit_signal(int) { g_quit_requested.store(true); }

void drop_callback(GLFWwindow* w, int count, const char** paths) {
  auto* app = static_cast<App*>(glfwGetWindowUserPointer(w));
  if (app && count > 0) app->load_model(paths[0]);
}
}  // namespace

int run_window(const AppOptions& app_opts, const WindowOptions& win) {
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
  GLFWwindow* window = glfwCreateWindow(win.width, win.height, "diffscope", nullptr, nullptr);
  if (!window) {
    glfwTerminate();
    throw ResourceUnavailable("cannot create a window with an OpenGL 4.3 core context");
  }
  glfwMakeContextCurrent(window);
  float sx = 1, sy = 1;
  glfwGetWindowContentScale(window, &sx, &sy);
  if (const char* e = std::getenv("DIFFSCOPE_UI_SCALE"); e && std::atof(e) > 0) sx = float(std::atof(e));

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  install_key_relay(window);  // short key taps reach the shortcuts and ImGui even at low frame rates
  ImGui_ImplOpenGL3_Init("#version 430 core");

  int rc = 0;
  {
    App app(app_opts, make_compute_services());
    app.init(sx);
    app.keys.connect();
    glfwSetWindowUserPointer(window, &app);
    glfwSetDropCallback(window, drop_callback);
    int frames = 0, phase_frames = 0;
    std::array<double, kFramePhases> phase_sum{};
    const int warm = win.max_frames > 0 ? std::max(1, win.max_frames / 10) : 0;
    auto t_warm = std::chrono::steady_clock::now();
    std::signal(SIGINT, on_quit_signal);
    std::signal(SIGTERM, on_quit_signal);
    while (!glfwWindowShouldClose(window) && !g_quit_requested.load()) {
      app.probe.begin_frame();
      key_relay_new_frame(window);
      glfwPollEvents();
      if (app.vsync_dirty) {
        glfwSwapInterval(app.settings.view.vsync ? 1 : 0);
        app.vsync_dirty = false;
      }
      app.probe.mark(FramePhase::other);
      ImGui_ImplOpenGL3_NewFrame();
      ImGui_ImplGlfw_NewFrame();
      ImGui::NewFrame();
      app.probe.mark(FramePhase::imgui_build);
      int w = 0, h = 0;
      glfwGetFramebufferSize(window, &w, &h);  // drawing is sized by the framebuffer, not the window
      glBindFramebuffer(GL_FRAMEBUFFER, 0);
      app.frame(w, h);
      ImGui::Render();
      glViewport(0, 0, w, h);
      ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
      app.probe.mark(FramePhase::imgui_render);
      ++frames;
      if (frames == warm) t_warm = std::chrono::steady_clock::now();
      if (frames > warm + 1) {  // probe.last() is the frame before: warm-up frames stay out
        for (int p = 0; p < kFramePhases; ++p) phase_sum[p] += app.probe.last().phase_ms[p];
        ++phase_frames;
      }
      if (win.max_frames > 0 && frames >= win.max_frames) {
        if (!win.screenshot.empty()) {
          std::vector<uint8_t> px(size_t(w) * h * 4), flip(px.size());
          glPixelStorei(GL_PACK_ALIGNMENT, 1);
          glReadBuffer(GL_BACK);
          glReadPixels(0, 0, w, h, GL_RGBA, GL_UNSIGNED_BYTE, px.data());
          for (int y = 0; y < h; ++y)
            std::copy_n(px.data() + size_t(h - 1 - y) * w * 4, size_t(w) * 4, flip.data() + size_t(y) * w * 4);
          write_png_rgba(win.screenshot, flip, w, h, 3);
        }
        glfwSetWindowShouldClose(window, GLFW_TRUE);
      }
      app.probe.mark(FramePhase::other);
      glfwSwapBuffers(window);
      app.probe.mark(FramePhase::present);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_warm).count();
    std::printf("diffscope gui: %d frames, %.1f fps at the end, mean %.1f frames/s after %d warm-up frames; "
                "B=%d steps=%d precision=%s trail=%d runs %d; GL: %s; path: %s\n",
                frames, app.stats.fps, frames > warm && secs > 0 ? (frames - warm) / secs : 0.0, warm,
                app.session->settings().n_samples, app.session->n_steps(),
                precision_name(app.session->settings().precision), app.settings.view.trail_frames,
                app.session->runs_completed(), reinterpret_cast<const char*>(glGetString(GL_RENDERER)),
                app.session->path_note().c_str());
    std::printf("diffscope gui: phases after warm-up (ms/frame, present = the swap): %s\n",
                phase_ms_json(phase_sum, phase_frames ? 1.0 / phase_frames : 0.0).c_str());
    app.shutdown();
    glfwSetWindowUserPointer(window, nullptr);
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  return rc;
}

}  // namespace diffscope::shell
