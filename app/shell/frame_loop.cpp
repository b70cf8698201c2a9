// frame_loop.cpp — the one frame loop (frame_loop.h).
#include "shell/frame_loop.h"

#include <epoxy/gl.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <stb_image_write.h>  // libstb (Debian's libstb-dev, linked with imgui): stbi_write_jpg_to_func

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "base/errors.h"
#include "picture/exporter.h"
#include "platform/atomic_write.h"

namespace diffscope::shell {

ImGuiSession::ImGuiSession() {
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
}
ImGuiSession::~ImGuiSession() { ImGui::DestroyContext(); }

ImGuiGl3Renderer::ImGuiGl3Renderer() { ImGui_ImplOpenGL3_Init("#version 430 core"); }
ImGuiGl3Renderer::~ImGuiGl3Renderer() { ImGui_ImplOpenGL3_Shutdown(); }

void FrameLoop::run_frame() {
  ui::App& app = m_app;
  app.probe().begin_frame();
  const auto t_begin = std::chrono::steady_clock::now();
  m_platform.before_events();
  m_display.begin_frame();
  if (const std::optional<bool> vsync = app.take_vsync_change()) m_display.set_vsync(*vsync);
  const render::DisplaySize size = m_display.size();
  app.probe().mark(FramePhase::other);
  ImGui_ImplOpenGL3_NewFrame();
  m_platform.new_frame(size);
  ImGui::NewFrame();
  app.probe().mark(FramePhase::imgui_build);
  m_display.bind_target();
  app.frame(size.w, size.h);
  ImGui::Render();
  m_display.bind_target();
  glViewport(0, 0, size.w, size.h);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  app.probe().mark(FramePhase::imgui_render);
  if (before_present) before_present();
  app.probe().mark(FramePhase::other);
  m_display.end_frame();  // a window's swap, headless glFinish: measured as its own phase, not counted as a sync
  app.probe().mark(FramePhase::present);
  for (GLenum e; (e = glGetError()) != GL_NO_ERROR;) {
    if (++m_gl_errors <= 8) std::fprintf(stderr, "GL error 0x%04x after frame %d (%dx%d)\n", e, m_frames, size.w, size.h);
  }
  m_work_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_begin).count();
  ++m_frames;
}

void FrameLoop::reset_counts() {
  m_counts_at_reset = frame_counts_total();
  m_runs_at_reset = m_app.session().runs_completed();
}

float ui_scale(const render::Display& display) {
  const char* e = std::getenv("DIFFSCOPE_UI_SCALE");
  return e && std::atof(e) > 0 ? float(std::atof(e)) : display.content_scale();
}

namespace {
// "png", "jpeg" or "" (neither) from the path's extension, in any case.
std::string screenshot_format(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == ".png") return "png";
  if (ext == ".jpg" || ext == ".jpeg") return "jpeg";
  return "";
}
}  // namespace

void check_screenshot_path(const std::string& arg, const std::string& path) {
  if (!path.empty() && screenshot_format(path).empty())
    throw InvalidInput(arg + " " + path + ": unknown image type '" + std::filesystem::path(path).extension().string() +
                       "'; valid: .png, .jpg, .jpeg");
}

void save_screenshot(const render::Display& display, const std::string& path) {
  check_screenshot_path("screenshot", path);
  const render::Pixels px = display.read_rgba();
  if (screenshot_format(path) == "png") {
    write_png_rgba(path, px.rgba, px.w, px.h, 3);
    return;
  }
  std::string jpeg;
  auto append = [](void* ctx, void* data, int size) { static_cast<std::string*>(ctx)->append(static_cast<char*>(data), size); };
  if (!stbi_write_jpg_to_func(append, &jpeg, px.w, px.h, 4, px.rgba.data(), 92))  // alpha ignored (stb)
    throw InvalidInput("screenshot " + path + ": the JPEG encoder refused a " + std::to_string(px.w) + "x" +
                       std::to_string(px.h) + " frame");
  write_file_atomic(path, jpeg, "screenshot");
}

}  // namespace diffscope::shell
