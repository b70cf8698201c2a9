// headless.cpp — the app without a window: the one frame loop (shell/frame_loop.h) on a render::EglDisplay
// (an EGL context, an offscreen target as the "screen"), ImGui with io.DisplaySize set by hand and input from
// a script (ImGui 1.86: io.MousePos, io.MouseDown[], io.KeysDown[] directly). A script line is one command; the
// commands are shell/script/ (a parser each, one table; `diffscope gui --script-help` prints them from it).
#include <imgui.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cfloat>
#include <chrono>
#include <cstdio>
#include <filesystem>
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
#include "shell/script/script.h"

namespace diffscope::shell {
using namespace ui;  // the shell drives the ui layer's App
using namespace script;
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

std::vector<std::string> script_lines(const HeadlessOptions& opts) {
  if (opts.script.empty()) return {"wait_complete 100000"};
  std::error_code ec;
  if (std::filesystem::is_directory(opts.script, ec))
    throw InvalidInput("--script " + opts.script + ": is a folder; valid: a script file (diffscope gui --script-help)");
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
