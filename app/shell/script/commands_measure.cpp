// commands_measure.cpp — the script commands that measure: the kernel panel's rows and the loop's frames/s.
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
        "precision=%s trail=%d draw=%s; runs completed %d; steps/frame %.1f; kernel %.2f ms/frame; "
        "outside the kernel %.2f ms/frame; map %.3f unmap %.3f GL draw %.3f ms/frame; read-backs %ld "
        "syncs %ld camera fits %ld; path: %s\n",
        count_noun(n, "frame").c_str(), s, n / s, 1e3 * s / n, median_ms, app.session().settings().n_samples,
        app.session().n_steps(), precision_name(app.session().settings().precision), app.settings().view.trail_frames,
        draw_mode_name(app.settings().view.draw_mode), app.session().runs_completed() - runs0, double(steps) / n, steps_ms / n, outside_ms, map / n, unmap / n,
        draw / n, c.readbacks, c.syncs, c.camera_fits, app.session().path_note().c_str());
    std::printf("measure phases (ms/frame): %s\n",
                phase_ms_json(phase_sum, frame_ms.empty() ? 0.0 : 1.0 / frame_ms.size()).c_str());
    // The same as one JSON line, for bench/gate.py.
    std::printf("measure_json: {\"frames\": %d, \"fps\": %.3f, \"mean_ms\": %.4f, \"median_ms\": %.4f, "
                "\"kernel_ms\": %.4f, \"outside_kernel_ms\": %.4f, \"gl_draw_ms\": %.4f, \"draw_mode\": \"%s\", "
                "\"steps_per_frame\": %.2f, \"n\": %d, "
                "\"readbacks\": %ld, \"syncs\": %ld, \"camera_fits\": %ld, \"path\": %s, \"phase_ms\": %s}\n",
                n, n / s, 1e3 * s / n, median_ms, steps_ms / n, outside_ms, draw / n,
                draw_mode_name(app.settings().view.draw_mode), double(steps) / n,
                app.session().settings().n_samples, c.readbacks, c.syncs, c.camera_fits,
                json_string(app.session().path_note()).c_str(),
                phase_ms_json(phase_sum, frame_ms.empty() ? 0.0 : 1.0 / frame_ms.size()).c_str());
  };
}

}  // namespace diffscope::shell::script
