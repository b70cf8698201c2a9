// script.cpp — the state of a headless run as one JSON line.
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

}  // namespace diffscope::shell::script
