// headless.cpp — the app without a window: the one frame loop (shell/frame_loop.h) on a render::EglDisplay
// (an EGL context, an offscreen target as the "screen"), ImGui with io.DisplaySize set by hand and input from
// a script (ImGui 1.86: io.MousePos, io.MouseDown[], io.KeysDown[] directly). Script lines (one command each,
// '#' starts a comment; the commands are the table kCommands below: a new command is one entry there). Words split
// at blanks; a value with blanks goes in double quotes (set export_dir "/a/my runs"); a word a command does not
// take, a non-number or a number out of its range is exit 2 at once (core/script_args.h, README "Headless scripts"):
//   frames N                      run N UI frames, N in [0, 1000000]
//   wait_complete [MAX]           run frames until the run is complete (at most MAX frames)
//   set KEY VALUE                 a setting by its key in the settings schema (core/settings_schema.h: steps,
//                                 t_start, n, sampler, eta, seed, steps_per_launch, trail_frames, show_data,
//                                 camera X,Y,H|auto, export_size WxH, ...; old names such as spl, trail, data
//                                 still work, with a note), then one frame
//   model NAME|PATH / backend auto|cpu|cuda / restore FILE (an export's .png or .json, as if dropped); a model or
//                                 restore that does not load is printed, the script goes on, the run exits 2
//   key Space|Left|Right|Home|End|S|V|H [shift]   press and release a key (an export S / V started that fails
//                                 counts as a failed export)
//   drag_timeline FROM TO [FRAMES]  mouse drag on the timeline slider, positions as fractions of its width
//   mouse X Y [down|up]           move the mouse (pixels) and set the left button
//   wheel X Y CLICKS              turn the mouse wheel at (X, Y) (zooms the 2D view about that point)
//   export snapshot|state|trajectory|grid|frames [PATH]; export video PATH [fps] (.mp4/.gif/.webp); a failed
//                                 export prints its error and the script goes on, but the run exits non-zero
//   screenshot PATH               the whole frame, UI included
//   expect frame|computed|steps|t_start|n|complete|playing|gl_errors|readbacks|syncs|camera_fits|runs_since_reset
//          OP VALUE               (OP: == != >= <= > <; the last four count since the last reset_counts)
//   bench [cpu|gpu] [FILTER]      run the kernel panel's rows (and print them), open the panel
//   measure FRAMES                frames/s over FRAMES frames (after 10 warm-up frames) with the per-frame figures
//   size W H                      the display size from now on (0 0: a minimised window)
//   stop_after SECONDS            skip the rest of the script once SECONDS have passed since this line (soak runs)
//   schedule [wait]               open the Schedule section (wait: until its exact-ODE errors are computed)
//   scheduler_config [PATH]       apply a diffusers scheduler_config.json as the model section does (none: clear)
//   reset_counts                  zero the GPU-wait counters that `expect readbacks|syncs|camera_fits` read
//   print                         one JSON line with the state (gl_errors: GL errors seen after frames so far;
//                                 error: the run's error, "" when none; gpu_mem_used_mb: device memory in use;
//                                 frame_ms and phase_ms: the last finished frame and its phases, which add up
//                                 to it; counts: read-backs, syncs and camera fits since reset_counts)
#include <imgui.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/errors.h"
#include "core/exact_lab.h"
#include "core/frame_probe.h"
#include "core/script_args.h"
#include "core/stop_signal.h"
#include "render/egl_display.h"
#include "shell/compute_select.h"
#include "shell/frame_loop.h"
#include "shell/run.h"
#include "ui/exporter.h"
#include "ui/keys.h"
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
  throw InvalidInput("script: unknown key '" + k + "'; valid: Space Left Right Home End S V H");
}

// ImGui's platform side without a window: no ini file, GLFW's key codes (as the window, keys.h), the display
// size and the real elapsed time (so the frame figures and io.Framerate are honest) set by hand each frame.
class HeadlessPlatform final : public FramePlatform {
 public:
  HeadlessPlatform() {
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.BackendPlatformName = "diffscope_headless";
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
  }
  void new_frame(render::DisplaySize size) override {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(float(size.w), float(size.h));
    io.DisplayFramebufferScale = ImVec2(1, 1);
    const auto now = std::chrono::steady_clock::now();
    io.DeltaTime = m_first ? 1.0f / 60.0f : std::max(1e-4f, std::chrono::duration<float>(now - m_last).count());
    m_first = false;
    m_last = now;
  }

 private:
  bool m_first = true;
  std::chrono::steady_clock::time_point m_last;
};

// What the script's commands act on.
struct Script {
  App& app;
  render::EglDisplay& display;
  FrameLoop& loop;
  ImGuiIO& io;
  int line_no = 0;
  bool implicit = false;  // no --script: the one implicit line "wait_complete 100000"
  HeadlessResult result;  // the failed expect / wait_complete lines and commands
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  int key_export_line = 0;  // > 0: the S or V key of that line started an export not yet checked
  // A failed command of this line: printed by the command, counted here (the script goes on).
  void failed(const std::string& what, bool unavailable) {
    result.command_failed("script:" + std::to_string(line_no) + ": " + what, unavailable);
  }
  // The S / V key of this line may start an export; its outcome is checked once no export is running.
  void watch_key_export() {
    check_key_export();
    app.exporter->last_error.clear();
    key_export_line = line_no;
  }
  void check_key_export() {
    if (key_export_line == 0 || app.exporter->video_active() || app.exporter->sequence_active()) return;
    if (!app.exporter->last_error.empty()) {
      std::printf("script:%d: key: export error: %s\n", key_export_line, app.exporter->last_error.c_str());
      result.command_failed("script:" + std::to_string(key_export_line) + ": export started by a key: " +
                                app.exporter->last_error, app.exporter->last_error_unavailable);
      app.exporter->last_error.clear();
    }
    key_export_line = 0;
  }
  void frame() {
    loop.run_frame();
    if (line_no > key_export_line) check_key_export();  // the key's own line checks after its frames
    throw_if_stopped();  // SIGINT / SIGTERM: unwind (an unfinished video's temporary file goes with it)
  }
};

std::string json_string(const std::string& v) {
  return nlohmann::json(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string state_json(Script& sc) {
  App& app = sc.app;
  const FrameLoop& loop = sc.loop;
  const ComputePath* path = app.session->compute_path();
  const render::DisplaySize size = sc.display.size();
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
    << ", \"size\": [" << size.w << ", " << size.h << "]}";
  return s.str();
}

double state_value(Script& sc, const std::string& what) {
  App& app = sc.app;
  if (what == "frame") return app.shown_frame();
  if (what == "computed") return app.session->computed_steps();
  if (what == "steps") return app.session->n_steps();
  if (what == "t_start") return app.session->settings().t_start;
  if (what == "n") return app.session->settings().n_samples;
  if (what == "complete") return app.session->complete() ? 1 : 0;
  if (what == "playing") return app.playing ? 1 : 0;
  if (what == "gl_errors") return sc.loop.gl_errors();
  if (what == "runs_since_reset") return app.session->runs_completed() - sc.loop.runs_at_reset();
  if (what == "readbacks") return double(sc.loop.counts().readbacks);
  if (what == "syncs") return double(sc.loop.counts().syncs);
  if (what == "camera_fits") return double(sc.loop.counts().camera_fits);
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

// ---- the commands (one function each; kCommands lists them) ----------------------------------------------
// Each reads its words through ScriptArgs (core/script_args.h: quoting, strict numbers with their ranges) and
// ends with a.end(), so a word it does not take is an error, never dropped.

constexpr IntRange kFramesRange{0, 1'000'000};  // frames N, wait_complete MAX, measure FRAMES: minutes of frames at most

void cmd_frames(Script& sc, ScriptArgs& a) {
  const int64_t n = a.integer_or("N", kFramesRange, 1);
  a.end();
  for (int64_t k = 0; k < n; ++k) sc.frame();
}

void cmd_wait_complete(Script& sc, ScriptArgs& a) {
  App& app = sc.app;
  const int max = int(a.integer_or("MAX", {1, kFramesRange.hi}, 100000));
  a.end();
  for (int k = 0; k < max && !app.session->complete() && app.session->error().empty(); ++k) sc.frame();
  sc.frame();  // let the cursor follow the last frame
  if (!app.session->complete()) {
    // Without --script the one line is implicit: "the run", not a script line the user never wrote.
    const std::string where = sc.implicit ? "the run" : "script:" + std::to_string(sc.line_no) + ": wait_complete";
    if (!app.session->error().empty())
      std::printf("%s: failed: %s\n", where.c_str(), app.session->error().c_str());
    else
      std::printf("%s: not complete after %d frames\n", where.c_str(), max);
    ++sc.result.failed_expects;
  }
}

void cmd_set(Script& sc, ScriptArgs& a) {
  App& app = sc.app;
  const std::string key = a.word("KEY"), val = a.word("VALUE");
  a.end();
  std::string note;  // an old key name: a note (core/settings_schema.h)
  apply_setting(app.settings, key, val, "set " + key, &note);  // out of range: refused (SEMANTICS §3)
  if (!note.empty()) std::printf("script:%d: %s", sc.line_no, note.c_str());
  if (app.session->has_model())
    check_model_ranges(app.settings.sampling, app.session->model().schedule,
                       app.session->compute_path() && app.session->compute_path()->is_gpu(), {{key, "set " + key}});
  sc.frame();
}

void cmd_restore(Script& sc, ScriptArgs& a) {  // restore FILE: as a file dropped on the window (ui/restore.h)
  const std::string p = a.word("FILE");
  a.end();
  sc.app.model_error.clear();
  const bool ok = restore_into_app(sc.app, p);
  sc.frame();
  std::printf("restore: %s\n", sc.app.exporter->messages.back().c_str());
  if (!ok) sc.failed("restore " + p + ": " + sc.app.exporter->messages.back(), false);
  else if (!sc.app.model_error.empty()) sc.failed("restore " + p + ": model: " + sc.app.model_error, false);
}

void cmd_model(Script& sc, ScriptArgs& a) {  // a model that does not load is a failed line (exit 2 after the script)
  const std::string p = a.word("NAME|PATH");
  a.end();
  sc.app.load_model(p);
  sc.frame();
  if (!sc.app.model_error.empty()) {
    std::printf("script:%d: model: %s\n", sc.line_no, sc.app.model_error.c_str());
    sc.failed("model " + p + ": " + sc.app.model_error, false);
  }
}

void cmd_backend(Script& sc, ScriptArgs& a) {
  const std::string b = a.word("auto|cpu|cuda");
  a.end();
  sc.app.select_backend(b);
  sc.frame();
}

void cmd_key(Script& sc, ScriptArgs& a) {
  const std::string k = a.word("KEY (Space Left Right Home End S V H)"), mod = a.word_or("");
  a.end();
  if (!mod.empty() && mod != "shift") throw InvalidInput("key: '" + mod + "' is not a modifier; valid: shift");
  const int code = key_code(k);
  const bool exports = code == kKeyS || code == kKeyV;
  if (exports) sc.watch_key_export();
  sc.io.KeyShift = mod == "shift";
  sc.io.KeysDown[code] = true;
  sc.frame();
  sc.io.KeysDown[code] = false;
  sc.io.KeyShift = false;
  sc.frame();
  if (exports) sc.check_key_export();  // a snapshot is written by now; a video is checked when it ends
}

constexpr RealRange kPixelRange{-1e6, 1e6};  // mouse positions, pixels (off the display is allowed)

void cmd_mouse(Script& sc, ScriptArgs& a) {
  const double x = a.real("X", kPixelRange), y = a.real("Y", kPixelRange);
  const std::string b = a.word_or("");
  a.end();
  if (!b.empty() && b != "down" && b != "up") throw InvalidInput("mouse: '" + b + "' is not a button state; valid: down up");
  sc.io.MousePos = ImVec2(float(x), float(y));
  if (b == "down") sc.io.MouseDown[0] = true;
  if (b == "up") sc.io.MouseDown[0] = false;
  sc.frame();
}

void cmd_wheel(Script& sc, ScriptArgs& a) {  // wheel X Y CLICKS: the mouse wheel at (X, Y) pixels (zoom)
  const double x = a.real("X", kPixelRange), y = a.real("Y", kPixelRange), clicks = a.real("CLICKS", {-1000, 1000});
  a.end();
  sc.io.MousePos = ImVec2(float(x), float(y));
  sc.frame();
  sc.io.MouseWheel = float(clicks);
  sc.frame();
  sc.io.MouseWheel = 0;
}

void cmd_drag_timeline(Script& sc, ScriptArgs& a) {
  App& app = sc.app;
  ImGuiIO& io = sc.io;
  const float from = float(a.real("FROM", {-1, 2})), to = float(a.real("TO", {-1, 2}));
  const int n = int(a.integer_or("FRAMES", {1, 10000}, 8));
  a.end();
  auto x_at = [&](float u) { return app.timeline_x0 + 1.0f + u * (app.timeline_x1 - app.timeline_x0 - 2.0f); };
  io.MousePos = ImVec2(x_at(from), app.timeline_y);
  sc.frame();
  io.MouseDown[0] = true;
  sc.frame();
  for (int k = 1; k <= n; ++k) {
    io.MousePos = ImVec2(x_at(from + (to - from) * k / float(n)), app.timeline_y);
    sc.frame();
  }
  io.MouseDown[0] = false;
  sc.frame();
  io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
  sc.frame();
}

void cmd_export(Script& sc, ScriptArgs& a) {
  App& app = sc.app;
  const std::string what = a.word("KIND (snapshot grid state trajectory frames video)");
  const ExportKind kind = parse_export_kind(what);
  const std::string path = kind == ExportKind::Video ? a.word("PATH (.mp4, .gif or .webp)") : a.word_or("");
  const int fps = kind == ExportKind::Video ? int(a.integer_or("fps", {1, 240}, 0)) : 0;
  a.end();
  while (app.exporter->video_active() || app.exporter->sequence_active()) sc.frame();  // one started by a key
  if (kind == ExportKind::Video) {  // export video PATH [fps]: frames 0..shown, waits until written
    if (fps > 0) app.exporter->video.fps = fps;
    app.exporter->last_error.clear();
  }
  ExportResult r = app.run_export(kind, path);  // the S key, the buttons and scripts share it
  while (app.exporter->video_active() || app.exporter->sequence_active()) sc.frame();
  if (kind == ExportKind::Video && !app.exporter->last_error.empty())
    r = {false, "", app.exporter->last_error, app.exporter->last_error_unavailable};
  if (r.ok) {
    std::printf("export %s: %s\n", what.c_str(), r.path.c_str());
  } else {  // reported; the script goes on, as the app does, and the exit status says it failed
    std::printf("export %s: error: %s\n", what.c_str(), r.error.c_str());
    sc.failed("export " + what + ": " + r.error, r.unavailable);
  }
  sc.frame();
}

void cmd_screenshot(Script& sc, ScriptArgs& a) {
  const std::string path = a.word("PATH");
  a.end();
  save_screenshot(sc.display, path);
  std::printf("screenshot: %s\n", path.c_str());
}

void cmd_expect(Script& sc, ScriptArgs& a) {
  const std::string what = a.word("QUANTITY"), op = a.word("OP (== != >= <= > <)");
  const double v = a.real("VALUE", {-1e300, 1e300});
  a.end();
  const double got = state_value(sc, what);
  if (!compare(got, op, v)) {
    std::printf("script:%d: expect %s %s %g failed: got %g\n", sc.line_no, what.c_str(), op.c_str(), v, got);
    ++sc.result.failed_expects;
  }
}

void cmd_bench(Script& sc, ScriptArgs& a) {  // bench [cpu|gpu] [filter]: the kernel panel's rows
  App& app = sc.app;
  const std::string which = a.word_or("cpu"), filter = a.word_or("");
  a.end();
  if (which != "cpu" && which != "gpu") throw InvalidInput("bench: '" + which + "' is not a backend; valid: cpu gpu");
  app.open_kernels = true;
  if (which == "gpu") {
    if (!app.bench.run_gpu(filter)) std::printf("bench gpu: %s\n", app.bench.gpu_note().c_str());
  } else if (app.session->has_model()) {
    app.bench.run(app.session->model(), app.bench.config);
  }
  for (const auto& b : app.bench.rows())
    std::printf("bench: %s | %s | median %.2f us p10 %.2f p90 %.2f | err %.3g%s\n", b.what.c_str(), b.backend.c_str(),
                b.median_us, b.p10_us, b.p90_us, b.max_err, b.rel_err ? " rel" : " abs");
  sc.frame();
  sc.frame();
}

void cmd_measure(Script& sc, ScriptArgs& a) {  // measure FRAMES: frames/s of the loop, with the phases
  App& app = sc.app;
  const int n = int(a.integer_or("FRAMES", {1, kFramesRange.hi}, 120));
  a.end();
  for (int k = 0; k < 10; ++k) sc.frame();  // warm-up
  const int runs0 = app.session->runs_completed();
  const FrameCounts counts0 = frame_counts_total();
  double map = 0, unmap = 0, draw = 0, steps_ms = 0;
  long steps = 0;
  std::array<double, kFramePhases> phase_sum{};
  std::vector<double> frame_ms;
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < n; ++k) {
    sc.frame();
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
}

void cmd_stop_after(Script& sc, ScriptArgs& a) {
  const double secs = a.real("SECONDS", {0, 1e7});
  a.end();
  sc.deadline = std::chrono::steady_clock::now() +
                std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(secs));
}

void cmd_size(Script& sc, ScriptArgs& a) {
  const int w = int(a.integer("W", {0, 16384})), h = int(a.integer("H", {0, 16384}));
  a.end();
  sc.display.set_size(w, h);
  sc.frame();
}

// schedule [wait]: open the Schedule section; wait: run frames until its exact-ODE job is done (at most 60 s).
void cmd_schedule(Script& sc, ScriptArgs& a) {
  const std::string wait = a.word_or("");
  a.end();
  if (!wait.empty() && wait != "wait") throw InvalidInput("schedule: '" + wait + "' is not an option; valid: wait");
  sc.app.open_schedule = true;
  sc.frame();
  sc.frame();
  for (int k = 0; wait == "wait" && sc.app.exact_lab && sc.app.exact_lab->busy() && k < 6000; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    sc.frame();
  }
  sc.frame();
}

void cmd_scheduler_config(Script& sc, ScriptArgs& a) {
  const std::string path = a.word_or("");
  a.end();
  sc.app.load_scheduler_config(path);
  if (!sc.app.model_error.empty()) throw InvalidInput("script: " + sc.app.model_error);
  sc.frame();
}

void cmd_reset_counts(Script& sc, ScriptArgs& a) {
  a.end();
  sc.loop.reset_counts();
}

void cmd_print(Script& sc, ScriptArgs& a) {
  a.end();
  std::printf("%s\n", state_json(sc).c_str());
}

// The script's commands: a new command is one line here (and its line in the list at the top of this file).
struct ScriptCommand {
  const char* name;
  void (*run)(Script&, ScriptArgs& args);
};
constexpr ScriptCommand kCommands[] = {
    {"frames", cmd_frames},
    {"wait_complete", cmd_wait_complete},
    {"set", cmd_set},
    {"restore", cmd_restore},
    {"model", cmd_model},
    {"backend", cmd_backend},
    {"key", cmd_key},
    {"mouse", cmd_mouse},
    {"wheel", cmd_wheel},
    {"drag_timeline", cmd_drag_timeline},
    {"export", cmd_export},
    {"screenshot", cmd_screenshot},
    {"expect", cmd_expect},
    {"bench", cmd_bench},
    {"measure", cmd_measure},
    {"stop_after", cmd_stop_after},
    {"size", cmd_size},
    {"schedule", cmd_schedule},
    {"scheduler_config", cmd_scheduler_config},
    {"reset_counts", cmd_reset_counts},
    {"print", cmd_print},
};

const ScriptCommand* find_command(const std::string& name) {
  for (const ScriptCommand& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

std::vector<std::string> script_lines(const HeadlessOptions& opts) {
  if (opts.script.empty()) return {"wait_complete 100000"};
  std::ifstream f(opts.script);
  if (!f) throw InvalidInput("--script " + opts.script + ": cannot be read");
  std::vector<std::string> lines;
  for (std::string l; std::getline(f, l);) lines.push_back(l);
  // A UTF-8 byte-order mark (some editors write one) is not part of the first command.
  if (!lines.empty() && lines[0].rfind("\xEF\xBB\xBF", 0) == 0) lines[0].erase(0, 3);
  return lines;
}

}  // namespace

void HeadlessResult::command_failed(const std::string& what, bool unavailable_) {
  if (failed_commands++ == 0) first_failure = what;
  unavailable = unavailable || unavailable_;
}

HeadlessResult run_headless(const AppOptions& app_opts, const HeadlessOptions& opts) {
  check_screenshot_path("--screenshot", opts.screenshot);  // before the GL context: a bad name costs nothing
  // The script is read and each line's words and command checked before any GL context exists: a bad script
  // costs no EGL start-up (the values are checked as each line runs).
  const std::vector<std::string> lines = script_lines(opts);
  for (size_t k = 0; k < lines.size(); ++k) {
    try {
      const std::vector<std::string> words = script_words(lines[k]);
      if (!words.empty() && !find_command(words.front()))
        throw InvalidInput("unknown command '" + words.front() + "'");
    } catch (const InvalidInput& e) {
      throw InvalidInput("script:" + std::to_string(k + 1) + ": " + e.what());
    }
  }
  // Declared in the order they are made; destroyed in reverse, also when something below throws.
  render::EglDisplay display;  // throws ResourceUnavailable
  std::fprintf(stderr, "diffscope gui --headless: %s\n", display.description().c_str());
  ImGuiSession imgui;
  HeadlessPlatform platform;
  ImGuiGl3Renderer imgui_gl3;

  App app(app_opts, make_compute_services());
  app.init(ui_scale(display));
  if (!app.settings_note.empty()) std::fprintf(stderr, "%s", app.settings_note.c_str());
  if (!app.input_error.empty()) throw InvalidInput(app.input_error);  // e.g. a mistyped --model: exit 2 at once
  if (!app.model_error.empty()) std::fprintf(stderr, "model: %s\n", app.model_error.c_str());
  display.set_size(opts.width, opts.height);
  FrameLoop loop(app, display, platform);
  Script sc{app, display, loop, ImGui::GetIO()};
  sc.implicit = opts.script.empty();
  sc.frame();

  for (const std::string& raw : lines) {
    ++sc.line_no;
    if (std::chrono::steady_clock::now() >= sc.deadline) {
      std::printf("script:%d: stop_after: time is up after %d frames\n", sc.line_no, loop.frames());
      break;
    }
    try {
      std::vector<std::string> words = script_words(raw);
      if (words.empty()) continue;
      const std::string cmd = words.front();
      const ScriptCommand* c = find_command(cmd);
      if (!c) throw InvalidInput("script:" + std::to_string(sc.line_no) + ": unknown command '" + cmd + "'");
      ScriptArgs args(cmd, std::vector<std::string>(words.begin() + 1, words.end()));
      c->run(sc, args);
    } catch (const InvalidInput& e) {
      std::string m = e.what();
      if (m.rfind("script", 0) != 0) m = "script:" + std::to_string(sc.line_no) + ": " + m;
      throw InvalidInput(m);
    }
    std::fflush(stdout);
  }
  // An export still being written (a video or frame sequence the V key or the Export section started) is
  // finished, not dropped, before the app closes.
  while (app.exporter->video_active() || app.exporter->sequence_active()) sc.frame();
  sc.check_key_export();
  if (!opts.screenshot.empty()) {
    save_screenshot(display, opts.screenshot);
    std::printf("screenshot: %s\n", opts.screenshot.c_str());
  }
  std::printf("%s\n", state_json(sc).c_str());
  app.shutdown();
  return sc.result;
}

}  // namespace diffscope::shell
