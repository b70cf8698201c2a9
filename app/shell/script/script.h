// script.h — the headless script's command language (README "Headless scripts"): what a line acts on (Script),
// the commands' parsers (one a command, in commands_*.cpp) and their table (command_table.cpp). A parser reads
// its line's words through ScriptArgs (session/script_args.h: quoting, strict numbers with their ranges,
// choices), ends with a.end() (a word it does not take is an error, never dropped) and returns what the line
// does. Every line is parsed before the app starts; run with a describing ScriptArgs, a parser gives its
// command's arguments for `diffscope gui --script-help`.
#pragma once
#include <imgui.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "base/ranges.h"
#include "render/egl_display.h"
#include "platform/stop_signal.h"
#include "session/script_args.h"
#include "shell/frame_loop.h"
#include "shell/run.h"
#include "ui/app.h"

namespace diffscope::shell::script {
using namespace ui;  // the shell drives the ui layer's App

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

// The state as one JSON line (the `print` command and the end of a headless run).
std::string state_json(Script& sc);
// A string as JSON (invalid UTF-8 replaced).
std::string json_string(const std::string& v);

using ScriptAction = std::function<void(Script&)>;

constexpr IntRange kFramesRange{0, 1'000'000};  // frames N, wait_complete MAX, measure FRAMES: minutes of frames at most

// commands_app.cpp: frames, waits, settings, models, the backend, the display, sections, the state
ScriptAction cmd_frames(ScriptArgs& a);
ScriptAction cmd_wait_complete(ScriptArgs& a);
ScriptAction cmd_set(ScriptArgs& a);
ScriptAction cmd_restore(ScriptArgs& a);
ScriptAction cmd_model(ScriptArgs& a);
ScriptAction cmd_backend(ScriptArgs& a);
ScriptAction cmd_stop_after(ScriptArgs& a);
ScriptAction cmd_size(ScriptArgs& a);
ScriptAction cmd_schedule(ScriptArgs& a);
ScriptAction cmd_open(ScriptArgs& a);
ScriptAction cmd_scheduler_config(ScriptArgs& a);
ScriptAction cmd_reset_counts(ScriptArgs& a);
ScriptAction cmd_print(ScriptArgs& a);
// commands_input.cpp: keys and the mouse
ScriptAction cmd_key(ScriptArgs& a);
ScriptAction cmd_mouse(ScriptArgs& a);
ScriptAction cmd_click(ScriptArgs& a);
ScriptAction cmd_wheel(ScriptArgs& a);
ScriptAction cmd_drag_timeline(ScriptArgs& a);
// commands_pick.cpp: picking particles, pins, edited starts
ScriptAction cmd_pick(ScriptArgs& a);
ScriptAction cmd_pin(ScriptArgs& a);
ScriptAction cmd_unpin(ScriptArgs& a);
ScriptAction cmd_move_start(ScriptArgs& a);
// commands_grid.cpp: the comparison grid
ScriptAction cmd_grid(ScriptArgs& a);
ScriptAction cmd_grid_metric(ScriptArgs& a);
ScriptAction cmd_grid_click(ScriptArgs& a);
ScriptAction cmd_grid_export(ScriptArgs& a);
// commands_output.cpp: exports, screenshots, expectations
ScriptAction cmd_export(ScriptArgs& a);
ScriptAction cmd_screenshot(ScriptArgs& a);
ScriptAction cmd_expect(ScriptArgs& a);
// commands_train.cpp: the training panel: data, brush, settings, the run
ScriptAction cmd_train_data(ScriptArgs& a);
ScriptAction cmd_brush(ScriptArgs& a);
ScriptAction cmd_brush_erase(ScriptArgs& a);
ScriptAction cmd_brush_undo(ScriptArgs& a);
ScriptAction cmd_train_set(ScriptArgs& a);
ScriptAction cmd_train(ScriptArgs& a);
// commands_measure.cpp: the kernel panel's rows and the loop's frames/s
ScriptAction cmd_bench(ScriptArgs& a);
ScriptAction cmd_measure(ScriptArgs& a);

// The script's commands (command_table.cpp): a new command is one entry there (its arguments come from its parser).
struct ScriptCommand {
  const char* name;
  ScriptAction (*parse)(ScriptArgs& args);
  const char* help;  // what the line does; `diffscope gui --script-help` adds the arguments
};
const ScriptCommand* find_command(const std::string& name);
// "unknown command 'sett' (did you mean 'set'?)" with where the commands are listed.
std::string unknown_command(const std::string& name);

}  // namespace diffscope::shell::script
