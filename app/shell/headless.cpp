// headless.cpp — the UI frame loop without a window: an EGL context, an offscreen target as the
// "screen", ImGui with io.DisplaySize set by hand and input from a script (ImGui 1.86: io.MousePos,
// io.MouseDown[], io.KeysDown[] directly). Script lines (one command each, '#' starts a comment):
//   frames N                      run N UI frames
//   wait_complete [MAX]           run frames until the run is complete (at most MAX frames)
//   set KEY VALUE                 a setting by its key in the settings schema (core/settings_schema.h: steps,
//                                 t_start, n, sampler, eta, seed, steps_per_launch, trail_frames, show_data,
//                                 camera X,Y,H|auto, export_size WxH, ...; old names such as spl, trail, data
//                                 still work, with a note), then one frame
//   model NAME|PATH / backend auto|cpu|cuda / restore FILE (an export's .png or .json, as if dropped)
//   key Space|Left|Right|Home|End|S|V|H [shift]   press and release a key
//   drag_timeline FROM TO [FRAMES]  mouse drag on the timeline slider, positions as fractions of its width
//   mouse X Y [down|up]           move the mouse (pixels) and set the left button
//   wheel X Y CLICKS              turn the mouse wheel at (X, Y) (zooms the 2D view about that point)
//   export snapshot|state|trajectory|grid|frames [PATH]; export video PATH [fps] (.mp4/.gif/.webp)
//   screenshot PATH               the whole frame, UI included
//   expect frame|computed|steps|t_start|n|complete|playing|gl_errors|readbacks|syncs|camera_fits|runs_since_reset
//          OP VALUE               (OP: == != >= <= > <; the last four count since the last reset_counts)
//   bench [cpu|gpu] [FILTER]      run the kernel panel's rows (and print them), open the panel
//   measure FRAMES                frames/s over FRAMES frames (after 10 warm-up frames) with the per-frame figures
//   size W H                      the display size from now on (0 0: a minimised window)
//   stop_after SECONDS            skip the rest of the script once SECONDS have passed since this line (soak runs)
//   reset_counts                  zero the GPU-wait counters that `expect readbacks|syncs|camera_fits` read
//   print                         one JSON line with the state (gl_errors: GL errors seen after frames so far;
//                                 error: the run's error, "" when none; gpu_mem_used_mb: device memory in use;
//                                 frame_ms and phase_ms: the last finished frame and its phases, which add up
//                                 to it; counts: read-backs, syncs and camera fits since reset_counts)
#include <epoxy/gl.h>
#include <imgui.h>
#include <imgui_impl_opengl3.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "core/errors.h"
#include "core/frame_probe.h"
#include "render/egl_context.h"
#include "render/gl_buffers.h"
#include "ui/keys.h"
#include "shell/compute_select.h"
#include "shell/run.h"
#include "ui/restore.h"
#include "ui/settings_keys.h"

namespace diffscope::shell {
using namespace ui;  // the shell drives the ui layer's App
namespace {

int key_code(const std::string& k) {
  if (k == "Space") return kKeySpace;
  if (k == "Left") return kKeyLeft;
  if (k == "Right") return kKeyRight;
  if (k == "Home") return kKeyHome;
  if (k == "End") return kKeyEnd;
  if (k == "S") return kKeyS;
  if (k == "V") return kKeyV;
  if (k == "H") return kKeyH;
  throw InvalidInput("script: unknown key '" + k + "'; valid: Space Left Right Home End S H");
}

class HeadlessLoop {
 public:
  HeadlessLoop(App& app, int w, int h) : m_app(app), m_w(w), m_h(h) { m_target.ensure(w, h); }

  // A window's framebuffer can be 0x0 (minimised): the app then draws with an empty viewport.
  void resize(int w, int h) {
    m_w = std::max(0, w), m_h = std::max(0, h);
    m_target.ensure(std::max(1, m_w), std::max(1, m_h));
  }

  void run_frame() {
    m_app.probe.begin_frame();
    const auto t_begin = std::chrono::steady_clock::now();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(float(m_w), float(m_h));
    io.DisplayFramebufferScale = ImVec2(1, 1);
    // Real elapsed time, so the frame figures (and io.Framerate) are honest.
    const auto now = std::chrono::steady_clock::now();
    io.DeltaTime = m_frames == 0 ? 1.0f / 60.0f
                                 : std::max(1e-4f, std::chrono::duration<float>(now - m_last).count());
    m_last = now;
    m_app.probe.mark(FramePhase::other);
    ImGui_ImplOpenGL3_NewFrame();
    ImGui::NewFrame();
    m_app.probe.mark(FramePhase::imgui_build);
    m_target.bind();
    m_app.frame(m_w, m_h);
    ImGui::Render();
    m_target.bind();
    glViewport(0, 0, m_w, m_h);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    m_app.probe.mark(FramePhase::imgui_render);
    glFinish();  // the headless "present": a window's swap; measured as its own phase, not counted as a sync
    m_app.probe.mark(FramePhase::present);
    for (GLenum e; (e = glGetError()) != GL_NO_ERROR;) {
      if (++m_gl_errors <= 8) std::fprintf(stderr, "GL error 0x%04x after frame %d (%dx%d)\n", e, m_frames, m_w, m_h);
    }
    m_work_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t_begin).count();
    ++m_frames;
  }

  int frames() const { return m_frames; }
  int gl_errors() const { return m_gl_errors; }
  double work_ms() const { return m_work_ms; }  // wall time of the last run_frame()
  int width() const { return m_w; }
  int height() const { return m_h; }
  const render::OffscreenTarget& target() const { return m_target; }
  void reset_counts() {
    m_counts_at_reset = frame_counts_total();
    m_runs_at_reset = m_app.session->runs_completed();
  }
  int runs_at_reset() const { return m_runs_at_reset; }
  FrameCounts counts() const { return frame_counts_total() - m_counts_at_reset; }

 private:
  App& m_app;
  int m_w, m_h;
  render::OffscreenTarget m_target;
  int m_frames = 0, m_gl_errors = 0;
  double m_work_ms = 0;
  std::chrono::steady_clock::time_point m_last;
  FrameCounts m_counts_at_reset;
  int m_runs_at_reset = 0;
};


std::string json_string(const std::string& v) {
  return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string state_json(App& app, const HeadlessLoop& loop) {
  const ComputePath* path = app.session->compute_path();
  std::ostringstream s;
  s << "{\"frame\": " << app.shown_frame() << ", \"computed\": " << app.session->computed_steps()
    << ", \"steps\": " << app.session->n_steps() << ", \"t_start\": " << app.session->settings().t_start
    << ", \"n\": " << app.session->settings().n_samples << ", \"complete\": " << (app.session->complete() ? 1 : 0)
    << ", \"playing\": " << (app.playing ? 1 : 0) << ", \"fps\": " << app.stats.fps
    << ", \"path\": " << json_string(app.session->path_note()) << ", \"last_run_ms\": " << app.session->last_run_ms()
    << ", \"spl\": " << app.session->settings().steps_per_launch
    << ", \"gpu_mem_used_mb\": " << (path ? path->device_memory_used_mb() : 0)
    << ", \"error\": " << json_string(app.session->error())
    << ", \"gl_errors\": " << loop.gl_errors() << ", \"frame_work_ms\": " << loop.work_ms()
    << ", \"frame_ms\": " << app.probe.last().frame_ms << ", \"phase_ms\": " << phase_ms_json(app.probe.last().phase_ms)
    << ", \"counts\": {\"readbacks\": " << loop.counts().readbacks << ", \"syncs\": " << loop.counts().syncs
    << ", \"camera_fits\": " << loop.counts().camera_fits << "}"
    << ", \"size\": [" << loop.width() << ", " << loop.height() << "]}";
  return s.str();
}

double state_value(App& app, const HeadlessLoop& loop, const std::string& what) {
  if (what == "frame") return app.shown_frame();
  if (what == "computed") return app.session->computed_steps();
  if (what == "steps") return app.session->n_steps();
  if (what == "t_start") return app.session->settings().t_start;
  if (what == "n") return app.session->settings().n_samples;
  if (what == "complete") return app.session->complete() ? 1 : 0;
  if (what == "playing") return app.playing ? 1 : 0;
  if (what == "gl_errors") return loop.gl_errors();
  if (what == "runs_since_reset") return app.session->runs_completed() - loop.runs_at_reset();
  if (what == "readbacks") return double(loop.counts().readbacks);
  if (what == "syncs") return double(loop.counts().syncs);
  if (what == "camera_fits") return double(loop.counts().camera_fits);
  throw InvalidInput("script: expect: unknown quantity '" + what + "'");
}

bool compare(double a, const std::string& op, double b) {
  if (op == "==") return a == b;
  if (op == "!=") return a != b;
  if (op == ">=") return a >= b;
  if (op == "<=") return a <= b;
  if (op == ">") return a > b;
  if (op == "<") return a < b;
  throw InvalidInput("script: expect: unknown operator '" + op + "'");
}

}  // namespace

int run_headless(const AppOptions& app_opts, const HeadlessOptions& opts) {
  render::EglContext egl;  // throws ResourceUnavailable
  std::fprintf(stderr, "diffscope gui --headless: %s\n", egl.description().c_str());
  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;
  io.BackendPlatformName = "diffscope_headless";
  // Key map: GLFW's codes, like the window (keys.h).
  io.KeyMap[ImGuiKey_Tab] = kKeyTab;
  io.KeyMap[ImGuiKey_LeftArrow] = kKeyLeft;
  io.KeyMap[ImGuiKey_RightArrow] = kKeyRight;
  io.KeyMap[ImGuiKey_UpArrow] = kKeyUp;
  io.KeyMap[ImGuiKey_DownArrow] = kKeyDown;
  io.KeyMap[ImGuiKey_Home] = kKeyHome;
  io.KeyMap[ImGuiKey_End] = kKeyEnd;
  io.KeyMap[ImGuiKey_Delete] = kKeyDelete;
  io.KeyMap[ImGuiKey_Backspace] = kKeyBackspace;
  io.KeyMap[ImGuiKey_Space] = kKeySpace;
  io.KeyMap[ImGuiKey_Enter] = kKeyEnter;
  io.KeyMap[ImGuiKey_Escape] = kKeyEscape;
  io.KeyMap[ImGuiKey_A] = kKeyA;
  ImGui_ImplOpenGL3_Init("#version 430 core");

  int rc = 0;
  {
    App app(app_opts, make_compute_services());
    const char* scale_env = std::getenv("DIFFSCOPE_UI_SCALE");  // HiDPI layout checks without a monitor
    app.init(scale_env && std::atof(scale_env) > 0 ? float(std::atof(scale_env)) : 1.0f);
    if (!app.settings_note.empty()) std::fprintf(stderr, "%s", app.settings_note.c_str());
    if (!app.input_error.empty()) throw InvalidInput(app.input_error);  // e.g. a mistyped --model: exit 2 at once
    if (!app.model_error.empty()) std::fprintf(stderr, "model: %s\n", app.model_error.c_str());
    HeadlessLoop loop(app, opts.width, opts.height);
    loop.run_frame();

    std::vector<std::string> lines;
    if (!opts.script.empty()) {
      std::ifstream f(opts.script);
      if (!f) throw InvalidInput("--script " + opts.script + ": cannot be read");
      for (std::string l; std::getline(f, l);) lines.push_back(l);
    } else {
      lines = {"wait_complete 100000"};
    }
    int line_no = 0;
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
    for (const std::string& raw : lines) {
      ++line_no;
      if (std::chrono::steady_clock::now() >= deadline) {
        std::printf("script:%d: stop_after: time is up after %d frames\n", line_no, loop.frames());
        break;
      }
      std::string line = raw.substr(0, raw.find('#'));
      std::istringstream in(line);
      std::string cmd;
      if (!(in >> cmd)) continue;
      try {
        if (cmd == "frames") {
          int n = 1;
          in >> n;
          for (int k = 0; k < n; ++k) loop.run_frame();
        } else if (cmd == "wait_complete") {
          int max = 100000;
          in >> max;
          for (int k = 0; k < max && !app.session->complete() && app.session->error().empty(); ++k) loop.run_frame();
          loop.run_frame();  // let the cursor follow the last frame
          if (!app.session->complete()) {
            std::printf("script:%d: wait_complete: not complete after %d frames%s%s\n", line_no, max,
                        app.session->error().empty() ? "" : "; the run failed: ", app.session->error().c_str());
            rc = 1;
          }
        } else if (cmd == "set") {
          std::string key, val;
          in >> key >> val;
          std::string note;  // an old key name: a note (core/settings_schema.h)
          apply_setting(app.settings, key, val, "set " + key, &note);  // out of range: refused (SEMANTICS §3)
          if (!note.empty()) std::printf("script:%d: %s", line_no, note.c_str());
          if (app.session->has_model())
            check_model_ranges(app.settings.sampling, app.session->model().schedule,
                               app.session->compute_path() && app.session->compute_path()->is_gpu(),
                               {{key, "set " + key}});
          loop.run_frame();
        } else if (cmd == "restore") {  // restore FILE: as a file dropped on the window (ui/restore.h)
          std::string p;
          in >> p;
          restore_into_app(app, p);
          loop.run_frame();
          std::printf("restore: %s\n", app.exporter->messages.back().c_str());
        } else if (cmd == "model") {
          std::string p;
          in >> p;
          app.load_model(p);
          loop.run_frame();
          if (!app.model_error.empty()) std::printf("script:%d: model: %s\n", line_no, app.model_error.c_str());
        } else if (cmd == "backend") {
          std::string b;
          in >> b;
          app.select_backend(b);
          loop.run_frame();
        } else if (cmd == "key") {
          std::string k, mod;
          in >> k >> mod;
          const int code = key_code(k);
          io.KeyShift = mod == "shift";
          io.KeysDown[code] = true;
          loop.run_frame();
          io.KeysDown[code] = false;
          io.KeyShift = false;
          loop.run_frame();
        } else if (cmd == "mouse") {
          float x = 0, y = 0;
          std::string b;
          in >> x >> y >> b;
          io.MousePos = ImVec2(x, y);
          if (b == "down") io.MouseDown[0] = true;
          if (b == "up") io.MouseDown[0] = false;
          loop.run_frame();
        } else if (cmd == "wheel") {  // wheel X Y CLICKS: the mouse wheel at (X, Y) pixels (zoom the 2D view)
          float x = 0, y = 0, clicks = 0;
          in >> x >> y >> clicks;
          io.MousePos = ImVec2(x, y);
          loop.run_frame();
          io.MouseWheel = clicks;
          loop.run_frame();
          io.MouseWheel = 0;
        } else if (cmd == "drag_timeline") {
          float a = 0, b = 1;
          int n = 8;
          in >> a >> b >> n;
          auto x_at = [&](float u) { return app.timeline_x0 + 1.0f + u * (app.timeline_x1 - app.timeline_x0 - 2.0f); };
          io.MousePos = ImVec2(x_at(a), app.timeline_y);
          loop.run_frame();
          io.MouseDown[0] = true;
          loop.run_frame();
          for (int k = 1; k <= std::max(1, n); ++k) {
            io.MousePos = ImVec2(x_at(a + (b - a) * k / float(std::max(1, n))), app.timeline_y);
            loop.run_frame();
          }
          io.MouseDown[0] = false;
          loop.run_frame();
          io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
          loop.run_frame();
        } else if (cmd == "export") {
          std::string what, path;
          in >> what >> path;
          const ExportKind kind = parse_export_kind(what);
          if (kind == ExportKind::Video) {  // export video PATH [fps]: frames 0..shown, waits until written
            int fps = 0;
            if (in >> fps) app.exporter->video.fps = fps;
            app.exporter->last_error.clear();
          }
          ExportResult r = app.run_export(kind, path);
          while (app.exporter->video_active() || app.exporter->sequence_active()) loop.run_frame();
          if (kind == ExportKind::Video && !app.exporter->last_error.empty()) r = {false, "", app.exporter->last_error};
          if (r.ok)
            std::printf("export %s: %s\n", what.c_str(), r.path.c_str());
          else
            std::printf("export %s: error: %s\n", what.c_str(), r.error.c_str());
          loop.run_frame();
        } else if (cmd == "screenshot") {
          std::string path;
          in >> path;
          write_png_rgba(path, loop.target().read_rgba_top_down(), loop.target().width(), loop.target().height(), 3);
          std::printf("screenshot: %s\n", path.c_str());
        } else if (cmd == "expect") {
          std::string what, op;
          double v = 0;
          in >> what >> op >> v;
          const double got = state_value(app, loop, what);
          if (!compare(got, op, v)) {
            std::printf("script:%d: expect %s %s %g failed: got %g\n", line_no, what.c_str(), op.c_str(), v, got);
            rc = 1;
          }
        } else if (cmd == "bench") {  // bench [cpu|gpu] [filter]: the kernel panel's rows
          std::string which = "cpu", filter;
          in >> which >> filter;
          app.open_kernels = true;
          if (which == "gpu") {
            if (!app.bench.run_gpu(filter)) std::printf("bench gpu: %s\n", app.bench.gpu_note().c_str());
          } else if (app.session->has_model()) {
            app.bench.run(app.session->model(), app.bench.config);
          }
          for (const auto& b : app.bench.rows())
            std::printf("bench: %s | %s | median %.2f us p10 %.2f p90 %.2f | err %.3g%s\n", b.what.c_str(),
                        b.backend.c_str(), b.median_us, b.p10_us, b.p90_us, b.max_err, b.rel_err ? " rel" : " abs");
          loop.run_frame();
          loop.run_frame();
        } else if (cmd == "measure") {  // measure FRAMES: frames/s of the loop as it is set up, with the phases
          int n = 120;
          in >> n;
          n = std::max(1, n);
          for (int k = 0; k < 10; ++k) loop.run_frame();  // warm-up
          const int runs0 = app.session->runs_completed();
          const FrameCounts counts0 = frame_counts_total();
          double map = 0, unmap = 0, draw = 0, steps_ms = 0;
          long steps = 0;
          std::array<double, kFramePhases> phase_sum{};
          std::vector<double> frame_ms;
          const auto t0 = std::chrono::steady_clock::now();
          for (int k = 0; k < n; ++k) {
            loop.run_frame();
            map += app.stats.map_ms, unmap += app.stats.unmap_ms, draw += app.stats.draw_gpu_ms;
            steps_ms += app.stats.steps_ms, steps += app.stats.steps_this_frame;
            if (k > 0) {  // probe.last() is the frame before this one: the first belongs to the warm-up
              for (int p = 0; p < kFramePhases; ++p) phase_sum[p] += app.probe.last().phase_ms[p];
              frame_ms.push_back(app.probe.last().frame_ms);
            }
          }
          const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
          const FrameCounts c = frame_counts_total() - counts0;
          std::sort(frame_ms.begin(), frame_ms.end());
          const double median_ms = frame_ms.empty() ? 0 : frame_ms[frame_ms.size() / 2];
          const double outside_ms = median_ms - steps_ms / n;
          std::printf("measure: %d frames in %.3f s = %.1f frames/s (%.2f ms/frame, median %.2f); B=%d steps=%d "
                      "precision=%s trail=%d; runs completed %d; steps/frame %.1f; kernel %.2f ms/frame; "
                      "outside the kernel %.2f ms/frame; map %.3f unmap %.3f GL draw %.3f ms/frame; read-backs %ld "
                      "syncs %ld camera fits %ld; path: %s\n",
                      n, s, n / s, 1e3 * s / n, median_ms, app.session->settings().n_samples, app.session->n_steps(),
                      precision_name(app.session->settings().precision), app.settings.view.trail_frames,
                      app.session->runs_completed() - runs0, double(steps) / n, steps_ms / n, outside_ms, map / n,
                      unmap / n, draw / n, c.readbacks, c.syncs, c.camera_fits, app.session->path_note().c_str());
          std::printf("measure phases (ms/frame): %s\n",
                      phase_ms_json(phase_sum, frame_ms.empty() ? 0.0 : 1.0 / frame_ms.size()).c_str());
          // The same as one JSON line, for bench/gate.py.
          std::printf("measure_json: {\"frames\": %d, \"fps\": %.3f, \"mean_ms\": %.4f, \"median_ms\": %.4f, "
                      "\"kernel_ms\": %.4f, \"outside_kernel_ms\": %.4f, \"steps_per_frame\": %.2f, \"n\": %d, "
                      "\"readbacks\": %ld, \"syncs\": %ld, \"camera_fits\": %ld, \"path\": %s, \"phase_ms\": %s}\n",
                      n, n / s, 1e3 * s / n, median_ms, steps_ms / n, outside_ms, double(steps) / n,
                      app.session->settings().n_samples, c.readbacks, c.syncs, c.camera_fits,
                      json_string(app.session->path_note()).c_str(),
                      phase_ms_json(phase_sum, frame_ms.empty() ? 0.0 : 1.0 / frame_ms.size()).c_str());
        } else if (cmd == "stop_after") {
          double secs = 0;
          in >> secs;
          deadline = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(secs));
        } else if (cmd == "size") {
          int w = -1, h = -1;
          in >> w >> h;
          if (w < 0 || h < 0 || w > 16384 || h > 16384)
            throw InvalidInput("script: size W H with each in [0, 16384]");
          loop.resize(w, h);
          loop.run_frame();
        } else if (cmd == "reset_counts") {
          loop.reset_counts();
        } else if (cmd == "print") {
          std::printf("%s\n", state_json(app, loop).c_str());
        } else {
          throw InvalidInput("script:" + std::to_string(line_no) + ": unknown command '" + cmd + "'");
        }
      } catch (const InvalidInput& e) {
        std::string m = e.what();
        if (m.rfind("script", 0) != 0) m = "script:" + std::to_string(line_no) + ": " + m;
        throw InvalidInput(m);
      }
      std::fflush(stdout);
    }
    if (!opts.screenshot.empty()) {
      write_png_rgba(opts.screenshot, loop.target().read_rgba_top_down(), loop.target().width(), loop.target().height(), 3);
      std::printf("screenshot: %s\n", opts.screenshot.c_str());
    }
    std::printf("%s\n", state_json(app, loop).c_str());
    app.shutdown();
  }
  ImGui_ImplOpenGL3_Shutdown();
  ImGui::DestroyContext();
  return rc;
}

}  // namespace diffscope::shell
