// commands_app.cpp — the script commands that drive the app: frames, waits, settings, models, the backend, the display size, sections, the state.
#include "shell/script/script.h"

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

namespace diffscope::shell::script {

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

}  // namespace diffscope::shell::script
