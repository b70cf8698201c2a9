// headless.cpp — the app without a window: the one frame loop (shell/frame_loop.h) on a render::EglDisplay
// (an EGL context, an offscreen target as the "screen"), ImGui with io.DisplaySize set by hand and input from
// a script (ImGui 1.86: io.MousePos, io.MouseDown[], io.KeysDown[] directly). A script line is one command; the
// commands are the table kCommands below, each with a parser whose ScriptArgs reads give its arguments, ranges and
// defaults: `diffscope gui --script-help` prints them from that table (README "Headless scripts").
#include <imgui.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include "base/errors.h"
#include "base/words.h"
#include "diffusion/exact_lab.h"
#include "picture/exporter.h"
#include "picture/restore.h"
#include "platform/stop_signal.h"
#include "render/egl_display.h"
#include "run/frame_probe.h"
#include "session/script_args.h"
#include "session/settings_keys.h"
#include "shell/compute_select.h"
#include "shell/frame_loop.h"
#include "shell/run.h"
#include "ui/keys.h"
#include "ui/panels.h"

namespace diffscope::shell {
using namespace ui;  // the shell drives the ui layer's App
namespace {

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
  // A line's action, applied at once (where the line runs), as the widget's and the key's are in a frame.
  void act(Action a) {
    app.push(std::move(a));
    app.apply_actions();
  }
  void watch_key_export() {
    check_key_export();
    app.clear_export_error();
    key_export_line = line_no;
  }
  void check_key_export() {
    if (key_export_line == 0 || app.exporter().video_active() || app.exporter().sequence_active()) return;
    if (!app.exporter().last_error.empty()) {
      std::printf("script:%d: key: export error: %s\n", key_export_line, app.exporter().last_error.c_str());
      result.command_failed("script:" + std::to_string(key_export_line) + ": export started by a key: " +
                                app.exporter().last_error, app.exporter().last_error_unavailable);
      app.clear_export_error();
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
  const ComputePath* path = app.session().compute_path();
  const render::DisplaySize size = sc.display.size();
  std::ostringstream s;
  s << "{\"frame\": " << app.shown_frame() << ", \"computed\": " << app.session().computed_steps()
    << ", \"steps\": " << app.session().n_steps() << ", \"t_start\": " << app.session().settings().t_start
    << ", \"n\": " << app.session().settings().n_samples << ", \"complete\": " << (app.session().complete() ? 1 : 0)
    << ", \"playing\": " << (app.playing() ? 1 : 0) << ", \"fps\": " << app.stats().fps
    << ", \"path\": " << json_string(app.session().path_note()) << ", \"last_run_ms\": " << app.session().last_run_ms()
    << ", \"spl\": " << app.session().settings().steps_per_launch
    << ", \"gpu_mem_used_mb\": " << (path ? path->device_memory_used_mb() : 0)
    << ", \"error\": " << json_string(app.session().error()) << ", \"gl_errors\": " << loop.gl_errors()
    << ", \"frame_work_ms\": " << loop.work_ms() << ", \"frame_ms\": " << app.probe().last().frame_ms
    << ", \"phase_ms\": " << phase_ms_json(app.probe().last().phase_ms)
    << ", \"counts\": {\"readbacks\": " << loop.counts().readbacks << ", \"syncs\": " << loop.counts().syncs
    << ", \"camera_fits\": " << loop.counts().camera_fits << "}"
    << ", \"size\": [" << size.w << ", " << size.h << "]}";
  return s.str();
}

// ---- the commands (a parser each; commands() lists them) -----------------------------------------------------
// A parser reads its line's words through ScriptArgs (session/script_args.h: quoting, strict numbers with their
// ranges, choices), ends with a.end() (a word it does not take is an error, never dropped) and returns what the
// line does. Every line is parsed before the app starts; run with a describing ScriptArgs, a parser gives its
// command's arguments for `diffscope gui --script-help`.

using ScriptAction = std::function<void(Script&)>;

constexpr IntRange kFramesRange{0, 1'000'000};  // frames N, wait_complete MAX, measure FRAMES: minutes of frames at most

ScriptAction cmd_frames(ScriptArgs& a) {
  const int64_t n = a.integer_or("N", kFramesRange, 1);
  a.end();
  return [n](Script& sc) {
    for (int64_t k = 0; k < n; ++k) sc.frame();
  };
}

ScriptAction cmd_wait_complete(ScriptArgs& a) {
  const int max = int(a.integer_or("MAX", {1, kFramesRange.hi}, 100000));
  a.end();
  return [max](Script& sc) {
    App& app = sc.app;
    for (int k = 0; k < max && !app.session().complete() && app.session().error().empty(); ++k) sc.frame();
    sc.frame();  // let the cursor follow the last frame
    if (!app.session().complete()) {
      // Without --script the one line is implicit: "the run", not a script line the user never wrote.
      const std::string where = sc.implicit ? "the run" : "script:" + std::to_string(sc.line_no) + ": wait_complete";
      if (!app.session().error().empty())
        std::printf("%s: failed: %s\n", where.c_str(), app.session().error().c_str());
      else
        std::printf("%s: not complete after %s\n", where.c_str(), count_noun(max, "frame").c_str());
      ++sc.result.failed_expects;
    }
  };
}

ScriptAction cmd_set(ScriptArgs& a) {
  const std::string key = a.word("KEY (" + setting_keys() + ")"), val = a.word("VALUE (in the key's range)");
  a.end();
  return [key, val](Script& sc) {
    sc.act(Action::set_setting(key, val));  // out of range (for this model): refused (SEMANTICS §3)
    // An old key name: a note (session/settings_schema.h).
    if (const std::string& note = sc.app.last_outcome().note; !note.empty())
      std::printf("script:%d: %s", sc.line_no, note.c_str());
    sc.frame();
  };
}

ScriptAction cmd_restore(ScriptArgs& a) {  // restore FILE: as a file dropped on the window (picture/restore.h)
  const std::string p = a.word("FILE");
  a.end();
  return [p](Script& sc) {
    sc.act(Action::restore(p));
    const bool ok = sc.app.last_outcome().ok;
    sc.frame();
    const std::string& message = sc.app.exporter().messages.back();
    std::printf("restore: %s\n", message.c_str());
    if (!ok) sc.failed("restore " + p + ": " + message, false);
    else if (!sc.app.model_error().empty()) sc.failed("restore " + p + ": model: " + sc.app.model_error(), false);
  };
}

ScriptAction cmd_model(ScriptArgs& a) {  // a model that does not load is a failed line (exit 2 after the script)
  const std::string p = a.word("NAME|PATH");
  a.end();
  return [p](Script& sc) {
    sc.act(Action::load_model(p));
    sc.frame();
    if (!sc.app.model_error().empty()) {
      std::printf("script:%d: model: %s\n", sc.line_no, sc.app.model_error().c_str());
      sc.failed("model " + p + ": " + after_label(sc.app.model_error(), p), false);
    }
  };
}

ScriptAction cmd_backend(ScriptArgs& a) {
  const std::string b = a.choice("BACKEND", {"auto", "cpu", "cuda"});
  a.end();
  return [b](Script& sc) {
    sc.act(Action::select_backend(b));
    sc.frame();
  };
}

// The keys a script presses: GLFW's codes (ui/keys.h) and the character a window's char callback would add.
struct ScriptKey {
  const char* name;
  int code;
  char character;  // 0: none (the arrows, Home, End)
};
constexpr ScriptKey kScriptKeys[] = {{"Space", kKeySpace, ' '}, {"Left", kKeyLeft, 0}, {"Right", kKeyRight, 0},
                                     {"Home", kKeyHome, 0},     {"End", kKeyEnd, 0},   {"S", kKeyS, 's'},
                                     {"V", kKeyV, 'v'},         {"H", kKeyH, 'h'}};

std::vector<std::string> script_key_names() {
  std::vector<std::string> names;
  for (const ScriptKey& k : kScriptKeys) names.push_back(k.name);
  return names;
}

const ScriptKey& script_key(const std::string& name) {
  return *std::find_if(std::begin(kScriptKeys), std::end(kScriptKeys), [&](const ScriptKey& k) { return name == k.name; });
}

// Holds `keys` down for one frame (with their characters, as a window's char callback adds them).
void keys_down(Script& sc, const std::vector<ScriptKey>& keys, bool shift, bool down) {
  sc.io.KeyShift = down && shift;
  for (const ScriptKey& k : keys) {
    sc.io.KeysDown[k.code] = down;
    if (down && k.character)
      sc.io.AddInputCharacter(shift ? unsigned(std::toupper(k.character)) : unsigned(k.character));
  }
}

ScriptAction cmd_key(ScriptArgs& a) {
  const ScriptKey key = script_key(a.choice("KEY", script_key_names()));
  const bool shift = a.choice_or("MODIFIER", {"shift"}, "") == "shift";
  a.end();
  return [key, shift](Script& sc) {
    const bool exports = key.code == kKeyS || key.code == kKeyV;
    if (exports) sc.watch_key_export();
    keys_down(sc, {key}, shift, true);
    sc.frame();
    keys_down(sc, {key}, shift, false);
    sc.frame();
    if (exports) sc.check_key_export();  // a snapshot is written by now; a video is checked when it ends
  };
}

constexpr RealRange kPixelRange{-1e6, 1e6};  // mouse positions, pixels (off the display is allowed)

ScriptAction cmd_mouse(ScriptArgs& a) {
  const double x = a.real("X", kPixelRange), y = a.real("Y", kPixelRange);
  const std::string b = a.choice_or("BUTTON", {"down", "up"}, "");
  a.end();
  return [x, y, b](Script& sc) {
    sc.io.MousePos = ImVec2(float(x), float(y));
    if (b == "down") sc.io.MouseDown[0] = true;
    if (b == "up") sc.io.MouseDown[0] = false;
    sc.frame();
  };
}

// click ITEM [KEY...]: a left click in the middle of a named item; the keys are pressed in the click's own frame,
// as a window delivers keys typed before its next frame (a slow frame on the CPU backend).
ScriptAction cmd_click(ScriptArgs& a) {
  const std::string name = a.choice("ITEM", named_item_names());
  std::vector<ScriptKey> keys;
  for (std::string k; !(k = a.choice_or("KEY (pressed in the click's frame; more may follow)", script_key_names(), "")).empty();)
    keys.push_back(script_key(k));
  a.end();
  return [name, keys](Script& sc) {
    const auto it = sc.app.ui().named_items.find(name);
    if (it == sc.app.ui().named_items.end())
      throw InvalidInput("click: " + name + " is not on the screen (its section is closed or the UI hidden)");
    sc.io.MousePos = ImVec2(0.5f * (it->second.x0 + it->second.x1), 0.5f * (it->second.y0 + it->second.y1));
    sc.frame();
    const bool exports = std::any_of(keys.begin(), keys.end(), [](const ScriptKey& k) { return k.code == kKeyS || k.code == kKeyV; });
    if (exports) sc.watch_key_export();
    sc.io.MouseDown[0] = true;
    keys_down(sc, keys, false, true);
    sc.frame();
    sc.io.MouseDown[0] = false;
    keys_down(sc, keys, false, false);
    sc.frame();
    if (exports) sc.check_key_export();
  };
}

ScriptAction cmd_wheel(ScriptArgs& a) {  // wheel X Y CLICKS: the mouse wheel at (X, Y) pixels (zoom)
  const double x = a.real("X", kPixelRange), y = a.real("Y", kPixelRange), clicks = a.real("CLICKS", {-1000, 1000});
  a.end();
  return [x, y, clicks](Script& sc) {
    sc.io.MousePos = ImVec2(float(x), float(y));
    sc.frame();
    sc.io.MouseWheel = float(clicks);
    sc.frame();
    sc.io.MouseWheel = 0;
  };
}

ScriptAction cmd_drag_timeline(ScriptArgs& a) {
  const float from = float(a.real("FROM", {-1, 2})), to = float(a.real("TO", {-1, 2}));
  const int n = int(a.integer_or("FRAMES", {1, 10000}, 8));
  a.end();
  return [from, to, n](Script& sc) {
    App& app = sc.app;
    ImGuiIO& io = sc.io;
    const UiState& ui = app.ui();
    auto x_at = [&](float u) { return ui.timeline_x0 + 1.0f + u * (ui.timeline_x1 - ui.timeline_x0 - 2.0f); };
    io.MousePos = ImVec2(x_at(from), ui.timeline_y);
    sc.frame();
    io.MouseDown[0] = true;
    sc.frame();
    for (int k = 1; k <= n; ++k) {
      io.MousePos = ImVec2(x_at(from + (to - from) * k / float(n)), ui.timeline_y);
      sc.frame();
    }
    io.MouseDown[0] = false;
    sc.frame();
    io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    sc.frame();
  };
}

ScriptAction cmd_export(ScriptArgs& a) {
  const std::string what = a.choice("KIND", {"snapshot", "grid", "state", "trajectory", "frames", "video"});
  const std::string path = a.word_or("PATH (video: .mp4, .gif or .webp; else the export folder's next name)", "");
  // FPS only after a video's PATH (another kind's third word is left over: a path with a blank, unquoted).
  const bool video = what == "video";
  const int fps = video || a.describing() ? int(a.integer_or("FPS (video only; else the Export section's)", {1, 240}, 0)) : 0;
  a.end();
  const ExportKind kind = parse_export_kind(what);
  if (video && path.empty()) throw InvalidInput("export: missing PATH (.mp4, .gif or .webp)");
  return [what, path, fps, kind](Script& sc) {
    App& app = sc.app;
    const Exporter& ex = app.exporter();
    while (ex.video_active() || ex.sequence_active()) sc.frame();  // one started by a key
    if (kind == ExportKind::Video) app.clear_export_error();  // export video PATH [fps]: frames 0..shown, waits
    sc.act(Action::export_file(kind, path, fps));  // the S key, the buttons and scripts share it
    ExportResult r = app.last_export();
    while (ex.video_active() || ex.sequence_active()) sc.frame();
    if (kind == ExportKind::Video && !ex.last_error.empty()) r = {false, "", ex.last_error, ex.last_error_unavailable};
    if (r.ok) {
      std::printf("export %s: %s\n", what.c_str(), r.path.c_str());
    } else {  // reported; the script goes on, as the app does, and the exit status says it failed
      std::printf("export %s: error: %s\n", what.c_str(), r.error.c_str());
      sc.failed("export " + what + ": " + r.error, r.unavailable);
    }
    sc.frame();
  };
}

ScriptAction cmd_screenshot(ScriptArgs& a) {
  const std::string path = a.word("PATH (.png, .jpg or .jpeg)");
  a.end();
  check_screenshot_path("screenshot", path);
  return [path](Script& sc) {
    save_screenshot(sc.display, path);
    std::printf("screenshot: %s\n", path.c_str());
  };
}

// What `expect` compares: the app's state, and the GPU-wait counters since the last reset_counts.
struct Quantity {
  const char* name;
  double (*value)(Script&);
};
const Quantity kQuantities[] = {
    {"frame", [](Script& sc) { return double(sc.app.shown_frame()); }},
    {"computed", [](Script& sc) { return double(sc.app.session().computed_steps()); }},
    {"steps", [](Script& sc) { return double(sc.app.session().n_steps()); }},
    {"t_start", [](Script& sc) { return double(sc.app.session().settings().t_start); }},
    {"n", [](Script& sc) { return double(sc.app.session().settings().n_samples); }},
    {"complete", [](Script& sc) { return sc.app.session().complete() ? 1.0 : 0.0; }},
    {"playing", [](Script& sc) { return sc.app.playing() ? 1.0 : 0.0; }},
    {"show_ui", [](Script& sc) { return sc.app.settings().view.show_ui ? 1.0 : 0.0; }},
    {"exports", [](Script& sc) { return double(sc.app.exports_run()); }},
    {"clipped", [](Script& sc) { return double(sc.app.ui().layout_audit.clipped().size()); }},
    {"gl_errors", [](Script& sc) { return double(sc.loop.gl_errors()); }},
    {"runs_since_reset",
     [](Script& sc) { return double(sc.app.session().runs_completed() - sc.loop.runs_at_reset()); }},
    {"readbacks", [](Script& sc) { return double(sc.loop.counts().readbacks); }},
    {"syncs", [](Script& sc) { return double(sc.loop.counts().syncs); }},
    {"camera_fits", [](Script& sc) { return double(sc.loop.counts().camera_fits); }},
};

ScriptAction cmd_expect(ScriptArgs& a) {
  std::vector<std::string> names;
  for (const Quantity& q : kQuantities) names.push_back(q.name);
  const std::string what = a.choice("QUANTITY", names);
  const std::string op = a.choice("OP", {"==", "!=", ">=", "<=", ">", "<"});
  const double v = a.real("VALUE", {-1e300, 1e300});
  a.end();
  const Quantity q = *std::find_if(std::begin(kQuantities), std::end(kQuantities),
                                   [&](const Quantity& c) { return what == c.name; });
  return [q, what, op, v](Script& sc) {
    const double got = q.value(sc);
    const bool ok = op == "==" ? got == v : op == "!=" ? got != v : op == ">=" ? got >= v
                  : op == "<=" ? got <= v : op == ">"  ? got > v  : got < v;
    if (!ok) {
      std::printf("script:%d: expect %s %s %g failed: got %g\n", sc.line_no, what.c_str(), op.c_str(), v, got);
      if (what == "clipped") std::printf("%s", sc.app.ui().layout_audit.report().c_str());
      ++sc.result.failed_expects;
    }
  };
}

ScriptAction cmd_bench(ScriptArgs& a) {  // bench [cpu|gpu] [filter]: the kernel panel's rows
  const std::string which = a.choice_or("BACKEND", {"cpu", "gpu"}, "cpu");
  const std::string filter = a.word_or("FILTER (gpu: the rows whose name has it)", "");
  a.end();
  return [which, filter](Script& sc) {
    App& app = sc.app;
    sc.act(Action::run_bench(which, filter));
    if (!app.last_outcome().ok) std::printf("bench gpu: %s\n", app.last_outcome().note.c_str());
    for (const auto& b : app.bench().rows())
      std::printf("bench: %s | %s | median %.2f us p10 %.2f p90 %.2f | err %.3g%s\n", b.what.c_str(), b.backend.c_str(),
                  b.median_us, b.p10_us, b.p90_us, b.max_err, b.rel_err ? " rel" : " abs");
    sc.frame();
    sc.frame();
  };
}

ScriptAction cmd_measure(ScriptArgs& a) {  // measure FRAMES: frames/s of the loop, with the phases
  const int n = int(a.integer_or("FRAMES", {1, kFramesRange.hi}, 120));
  a.end();
  return [n](Script& sc) {
    App& app = sc.app;
    for (int k = 0; k < 10; ++k) sc.frame();  // warm-up
    const int runs0 = app.session().runs_completed();
    const FrameCounts counts0 = frame_counts_total();
    double map = 0, unmap = 0, draw = 0, steps_ms = 0;
    long steps = 0;
    std::array<double, kFramePhases> phase_sum{};
    std::vector<double> frame_ms;
    const auto t0 = std::chrono::steady_clock::now();
    for (int k = 0; k < n; ++k) {
      sc.frame();
      map += app.stats().map_ms, unmap += app.stats().unmap_ms, draw += app.stats().draw_gpu_ms;
      steps_ms += app.stats().steps_ms, steps += app.stats().steps_this_frame;
      if (k > 0) {  // probe.last() is the frame before this one: the first belongs to the warm-up
        for (int p = 0; p < kFramePhases; ++p) phase_sum[p] += app.probe().last().phase_ms[p];
        frame_ms.push_back(app.probe().last().frame_ms);
      }
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const FrameCounts c = frame_counts_total() - counts0;
    std::sort(frame_ms.begin(), frame_ms.end());
    const double median_ms = frame_ms.empty() ? 0 : frame_ms[frame_ms.size() / 2];
    const double outside_ms = median_ms - steps_ms / n;
    std::printf(
        "measure: %s in %.3f s = %.1f frames/s (%.2f ms/frame, median %.2f); B=%d steps=%d "
        "precision=%s trail=%d; runs completed %d; steps/frame %.1f; kernel %.2f ms/frame; "
        "outside the kernel %.2f ms/frame; map %.3f unmap %.3f GL draw %.3f ms/frame; read-backs %ld "
        "syncs %ld camera fits %ld; path: %s\n",
        count_noun(n, "frame").c_str(), s, n / s, 1e3 * s / n, median_ms, app.session().settings().n_samples,
        app.session().n_steps(), precision_name(app.session().settings().precision), app.settings().view.trail_frames,
        app.session().runs_completed() - runs0, double(steps) / n, steps_ms / n, outside_ms, map / n, unmap / n,
        draw / n, c.readbacks, c.syncs, c.camera_fits, app.session().path_note().c_str());
    std::printf("measure phases (ms/frame): %s\n",
                phase_ms_json(phase_sum, frame_ms.empty() ? 0.0 : 1.0 / frame_ms.size()).c_str());
    // The same as one JSON line, for bench/gate.py.
    std::printf("measure_json: {\"frames\": %d, \"fps\": %.3f, \"mean_ms\": %.4f, \"median_ms\": %.4f, "
                "\"kernel_ms\": %.4f, \"outside_kernel_ms\": %.4f, \"steps_per_frame\": %.2f, \"n\": %d, "
                "\"readbacks\": %ld, \"syncs\": %ld, \"camera_fits\": %ld, \"path\": %s, \"phase_ms\": %s}\n",
                n, n / s, 1e3 * s / n, median_ms, steps_ms / n, outside_ms, double(steps) / n,
                app.session().settings().n_samples, c.readbacks, c.syncs, c.camera_fits,
                json_string(app.session().path_note()).c_str(),
                phase_ms_json(phase_sum, frame_ms.empty() ? 0.0 : 1.0 / frame_ms.size()).c_str());
  };
}

ScriptAction cmd_stop_after(ScriptArgs& a) {
  const double secs = a.real("SECONDS", {0, 1e7});
  a.end();
  return [secs](Script& sc) {
    sc.deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(secs));
  };
}

ScriptAction cmd_size(ScriptArgs& a) {
  const int w = int(a.integer("W", {0, 16384})), h = int(a.integer("H", {0, 16384}));
  a.end();
  return [w, h](Script& sc) {
    sc.display.set_size(w, h);
    sc.frame();
  };
}

// schedule [wait]: open the Schedule section; wait: run frames until its exact-ODE job is done (at most 60 s).
ScriptAction cmd_schedule(ScriptArgs& a) {
  const bool wait = a.choice_or("WAIT", {"wait"}, "") == "wait";
  a.end();
  return [wait](Script& sc) {
    sc.act(Action::simple(ActionKind::OpenSchedule));
    sc.frame();
    sc.frame();
    for (int k = 0; wait && sc.app.ui().exact_lab && sc.app.ui().exact_lab->busy() && k < 6000; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      sc.frame();
    }
    sc.frame();
  };
}

ScriptAction cmd_open(ScriptArgs& a) {  // open SECTION: expand a section of the left panel, or the kernel panel
  const std::string name = a.choice("SECTION", section_names());
  a.end();
  return [name](Script& sc) {
    sc.act(Action::open_section(name));
    sc.frame();
    sc.frame();
  };
}

ScriptAction cmd_scheduler_config(ScriptArgs& a) {
  const std::string path = a.word_or("PATH (none: clear)", "");
  a.end();
  return [path](Script& sc) {
    sc.act(Action::load_scheduler_config(path));
    if (!sc.app.model_error().empty()) throw InvalidInput("script: " + sc.app.model_error());
    sc.frame();
  };
}

ScriptAction cmd_reset_counts(ScriptArgs& a) {
  a.end();
  return [](Script& sc) { sc.loop.reset_counts(); };
}

ScriptAction cmd_print(ScriptArgs& a) {
  a.end();
  return [](Script& sc) { std::printf("%s\n", state_json(sc).c_str()); };
}

// The script's commands: a new command is one entry here (its arguments come from its parser).
struct ScriptCommand {
  const char* name;
  ScriptAction (*parse)(ScriptArgs& args);
  const char* help;  // what the line does; `diffscope gui --script-help` adds the arguments
};
constexpr ScriptCommand kCommands[] = {
    {"frames", cmd_frames, "run N UI frames"},
    {"wait_complete", cmd_wait_complete,
     "run frames until the run is complete (at most MAX frames; not complete then: a failed expectation)"},
    {"set", cmd_set,
     "a setting by its key (old names such as spl, trail, data still work, with a note), then one frame; a value "
     "out of its range (for this model) is exit 2"},
    {"restore", cmd_restore, "open an export's .png or .json as if dropped on the window"},
    {"model", cmd_model, "load a bundled model or a .safetensors file; one that does not load is printed, the script "
                         "goes on and the run exits 2"},
    {"backend", cmd_backend, "switch the compute backend"},
    {"key", cmd_key,
     "press and release a key (with its character, as a window types it); an export S / V started that fails "
     "counts as a failed export"},
    {"mouse", cmd_mouse, "move the mouse to (X, Y) pixels and set the left button"},
    {"click", cmd_click, "a left click in the middle of a named item, the KEYs pressed in the same frame (a text "
                         "field takes the keys typed after the click)"},
    {"wheel", cmd_wheel, "turn the mouse wheel at (X, Y) pixels (zooms the 2D view about that point)"},
    {"drag_timeline", cmd_drag_timeline,
     "drag on the timeline slider from FROM to TO (fractions of its width) in FRAMES frames"},
    {"export", cmd_export,
     "an export as the Export section's buttons; video: frames 0 .. the shown one; a failed export prints its "
     "error, the script goes on and the run exits non-zero"},
    {"screenshot", cmd_screenshot, "the whole frame, UI included"},
    {"expect", cmd_expect,
     "compare a quantity with VALUE (readbacks, syncs, camera_fits: since the last reset_counts; exports: run so "
     "far; clipped: the UI's clipped items this frame, listed when it fails); a failed one makes the run exit 2"},
    {"bench", cmd_bench, "run the kernel panel's rows (and print them), open the panel"},
    {"measure", cmd_measure, "frames/s over FRAMES frames (after 10 warm-up frames) with the per-frame figures"},
    {"stop_after", cmd_stop_after, "skip the rest of the script once SECONDS have passed since this line (soak runs)"},
    {"size", cmd_size, "the display size in pixels from now on (0 0: a minimised window)"},
    {"open", cmd_open, "expand a section of the left panel (scrolled into view by the user, not by this), or the "
                       "kernel panel"},
    {"schedule", cmd_schedule, "open the Schedule section (wait: until its exact-ODE errors are computed)"},
    {"scheduler_config", cmd_scheduler_config,
     "apply a diffusers scheduler_config.json as the model section does (no PATH: clear it)"},
    {"reset_counts", cmd_reset_counts, "zero the GPU-wait counters that expect readbacks|syncs|camera_fits read"},
    {"print", cmd_print,
     "one JSON line with the state (gl_errors: GL errors so far; error: the run's error, \"\" when none; "
     "gpu_mem_used_mb; frame_ms and phase_ms: the last finished frame and its phases, which add up to it; counts: "
     "read-backs, syncs and camera fits since reset_counts)"},
};

const ScriptCommand* find_command(const std::string& name) {
  for (const ScriptCommand& c : kCommands)
    if (name == c.name) return &c;
  return nullptr;
}

// "unknown command 'sett' (did you mean 'set'?)" with where the commands are listed.
std::string unknown_command(const std::string& name) {
  std::vector<std::string> names;
  for (const ScriptCommand& c : kCommands) names.push_back(c.name);
  const std::string near = nearest_name(name, names);
  return "unknown command '" + name + "'" + (near.empty() ? "" : " (did you mean '" + near + "'?)") +
         "; the commands: diffscope gui --script-help";
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

std::string script_help() {
  std::string s =
      "diffscope gui --headless --script FILE runs FILE's lines in order, one command a line. Words split at "
      "blanks; a value with blanks goes in double quotes (set export_dir \"/a/my runs\"; \\\" and \\\\ inside "
      "stand for \" and \\); '#' starts a comment. An unknown command, a missing word, a word a command does not "
      "take, a non-number or a number out of its range is exit 2 before the app starts. [X]: optional.\n";
  for (const ScriptCommand& c : kCommands) {
    ScriptArgs d = ScriptArgs::describing(c.name);
    try {
      (void)c.parse(d);
    } catch (const ScriptArgs::Described&) {
    }
    std::string usage = c.name, args;
    for (const ScriptArgSpec& a : d.described()) {
      const size_t paren = a.what.find(" (");
      const std::string name = a.what.substr(0, paren);
      usage += a.optional ? " [" + name + "]" : " " + name;
      std::string what = a.valid.empty() ? "a word" : a.valid;
      if (paren != std::string::npos) what += " " + a.what.substr(paren + 1);
      if (a.optional) what += a.fallback.empty() ? "; optional" : "; default " + a.fallback;
      args += "      " + name + ": " + what + "\n";
    }
    s += "\n  " + usage + "\n      " + c.help + "\n" + args;
  }
  return s;
}

HeadlessResult run_headless(const AppOptions& app_opts, const HeadlessOptions& opts) {
  check_screenshot_path("--screenshot", opts.screenshot);  // before the GL context: a bad name costs nothing
  // Every line is parsed (its command, words and their ranges) before any GL context exists: a bad script costs
  // no EGL start-up. What depends on the app (a setting's range for the model, a file that loads) is checked as
  // the line runs.
  const std::vector<std::string> lines = script_lines(opts);
  struct Line {
    int line_no;
    ScriptAction action;
  };
  std::vector<Line> script;
  for (size_t k = 0; k < lines.size(); ++k) {
    try {
      const std::vector<std::string> words = script_words(lines[k]);
      if (words.empty()) continue;
      const ScriptCommand* c = find_command(words.front());
      if (!c) throw InvalidInput(unknown_command(words.front()));
      ScriptArgs args(words.front(), std::vector<std::string>(words.begin() + 1, words.end()));
      script.push_back({int(k + 1), c->parse(args)});
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
  if (!app.settings_note().empty()) std::fprintf(stderr, "%s", app.settings_note().c_str());
  if (!app.input_error().empty()) throw InvalidInput(app.input_error());  // e.g. a mistyped --model: exit 2 at once
  if (!app.model_error().empty()) std::fprintf(stderr, "model: %s\n", app.model_error().c_str());
  display.set_size(opts.width, opts.height);
  FrameLoop loop(app, display, platform);
  Script sc{app, display, loop, ImGui::GetIO()};
  sc.implicit = opts.script.empty();
  sc.frame();

  for (const Line& line : script) {
    sc.line_no = line.line_no;
    if (std::chrono::steady_clock::now() >= sc.deadline) {
      std::printf("script:%d: stop_after: time is up after %s\n", sc.line_no, count_noun(loop.frames(), "frame").c_str());
      break;
    }
    try {
      line.action(sc);
    } catch (const InvalidInput& e) {
      std::string m = e.what();
      if (m.rfind("script", 0) != 0) m = "script:" + std::to_string(sc.line_no) + ": " + m;
      throw InvalidInput(m);
    }
    std::fflush(stdout);
  }
  // An export still being written (a video or frame sequence the V key or the Export section started) is
  // finished, not dropped, before the app closes.
  while (app.exporter().video_active() || app.exporter().sequence_active()) sc.frame();
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
