// frame_loop.cpp — the one frame loop (frame_loop.h).
#include "shell/frame_loop.h"

#include <epoxy/gl.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "ui/exporter.h"

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
  app.probe.begin_frame();
  const auto t_begin = std::chrono::steady_clock::now();
  m_platform.before_events();
  m_display.begin_frame();
  if (app.vsync_dirty) {
    m_display.set_vsync(app.settings.view.vsync);
    app.vsync_dirty = false;
  }
  const render::DisplaySize size = m_display.size();
  app.probe.mark(FramePhase::other);
  ImGui_ImplOpenGL3_NewFrame();
  m_platform.new_frame(size);
  ImGui::NewFrame();
  app.probe.mark(FramePhase::imgui_build);
  m_display.bind_target();
  app.frame(size.w, size.h);
  ImGui::Render();
  m_display.bind_target();
  glViewport(0, 0, size.w, size.h);
  ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
  app.probe.mark(FramePhase::imgui_render);
  if (before_present) before_present();
  app.probe.mark(FramePhase::other);
  m_display.end_frame();  // a window's swap, headless glFinish: measured as its own phase, not counted as a sync
  app.probe.mark(FramePhase::present);
  for (GLenum e; (e = glGetError()) != GL_NO_ERROR;) {
    if (++m_gl_errors <= 8) std::fprintf(stderr, "GL error 0x%04x after frame %d (%dx%d)\n", e, m_frames, size.w, size.h);
  }
  m_work_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_begin).count();
  ++m_frames;
}

void FrameLoop::reset_counts() {
  m_counts_at_reset = frame_counts_total();
  m_runs_at_reset = m_app.session->runs_completed();
}

float ui_scale(const render::Display& display) {
  const char* e = std::getenv("DIFFSCOPE_UI_SCALE");
  return e && std::atof(e) > 0 ? float(std::atof(e)) : display.content_scale();
}

void save_screenshot(const render::Display& display, const std::string& path) {
  const render::Pixels px = display.read_rgba();
  ui::write_png_rgba(path, px.rgba, px.w, px.h, 3);
}

}  // namespace diffscope::shell
