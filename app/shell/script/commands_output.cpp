// commands_output.cpp — the script commands that export, take screenshots and check expectations.
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

ScriptAction cmd_export(ScriptArgs& a) {
  const std::string what = a.choice("KIND", {"snapshot", "grid", "state", "trajectory", "frames", "video", "svg", "pdf"});
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

}  // namespace diffscope::shell::script
