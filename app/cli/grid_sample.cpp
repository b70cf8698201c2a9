// grid_sample.cpp — `diffscope sample --grid SPEC` (grid_sample.h).
#include "cli/grid_sample.h"

#include <chrono>
#include <cstdio>

#include "base/errors.h"
#include "base/precision.h"
#include "base/ranges.h"
#include "diffusion/step_table.h"
#include "base/words.h"
#include "cli/cli_util.h"
#include "formats/npy.h"
#include "grid/grid_live.h"
#include "grid/grid_metrics.h"
#include "grid/grid_run.h"
#include "model/model.h"
#include "platform/atomic_write.h"
#include "platform/model_paths.h"
#include "platform/output_files.h"
#include "platform/stop_signal.h"
#include "run/finite_checks.h"

#if defined(DIFFSCOPE_HAVE_GUI) && __has_include("picture/grid_png.h")
#include "picture/command_line.h"
#include "picture/grid_png.h"
#include "picture/sample_png.h"
#include "formats/video_writer.h"
#define DIFFSCOPE_GRID_PNG 1
#endif

namespace diffscope::cli {
namespace {

std::string real_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// --video: its path, format and fps, ffmpeg present; not with --grid-position (the video holds every position).
void check_grid_video(const GridSampleArgs& a) {
#ifdef DIFFSCOPE_GRID_PNG
  check_output_path("--video", a.video);
  video_format_of("--video", a.video);
  check_video_fps("--fps", a.fps);
  if (a.position) throw InvalidInput("--grid-position cannot be combined with --video; valid: one of them");
  check_ffmpeg_available("--video", a.video);
#else
  throw InvalidInput("--video = " + a.video + ": this build has no GUI (headless GL); valid: --out and the metrics");
#endif
}

// Every check that needs no model: the flags a grid cannot honour, the outputs, the spec.
GridSpec check_grid_args(const GridSampleArgs& a) {
  if (!a.refused.empty())
    throw InvalidInput(a.refused.front() + " cannot be combined with --grid; valid: --out, --png, --metrics-csv, "
                       "--metrics-json and the run's settings (sampler, steps, spacing, eta, t_start, n, seed, ...)");
  const GridSpec spec = parse_grid_spec(a.spec, "--grid");
  if (a.model.empty() && spec.rows.axis != GridAxis::Model && spec.cols.axis != GridAxis::Model)
    throw InvalidInput("--model is required with --grid unless the grid has a model axis");
  if (a.position) check_real_range("--grid-position", *a.position, {0.0, 1.0});
  check_output_path("--out", a.out);
  if (!a.metrics_csv.empty()) check_output_path("--metrics-csv", a.metrics_csv);
  if (!a.metrics_json.empty()) check_output_path("--metrics-json", a.metrics_json);
  if (!a.png.empty()) check_output_path("--png", a.png);
  if (!a.video.empty()) check_grid_video(a);
  check_backend_precision(a.backend, a.base.precision);
  check_sample_request(a.base);
#ifdef DIFFSCOPE_GRID_PNG
  if (!a.png.empty()) {
    int w = 0, h = 0;
    parse_png_size("--size", a.size, &w, &h);
    grid_png_layout(spec, w, h);
  }
#endif
  return spec;
}

#ifdef DIFFSCOPE_GRID_PNG
// The command that reproduces the grid's files (the sidecar's command_line).
std::string grid_command_line(const GridSampleArgs& a, const GridSpec& spec) {
  const SampleRequest& q = a.base;
  std::string c = "diffscope sample --grid " + shell_quote(grid_spec_text(spec));
  if (!a.model.empty()) c += " --model " + shell_quote(a.model);
  c += std::string(" --sampler ") + sampler_name(q.sampler) + " --n " + std::to_string(q.n) + " --seed " +
       std::to_string(q.seed) + " --backend " + a.backend + " --precision " + precision_name(q.precision);
  if (q.steps) c += " --steps " + std::to_string(*q.steps);
  if (q.t_start) c += " --t-start " + std::to_string(*q.t_start);
  if (q.spacing) c += std::string(" --spacing ") + spacing_name(*q.spacing);
  if (q.eta_named) c += " --eta " + std::to_string(q.eta);
  if (q.from_data) c += " --from-data";
  if (a.position) c += " --grid-position " + real_text(*a.position) + " --grid-align " + a.align;
  c += " --out " + shell_quote(a.out);
  if (!a.png.empty()) c += " --png " + shell_quote(a.png);
  if (!a.video.empty()) c += " --video " + shell_quote(a.video) + " --fps " + real_text(a.fps);
  c += " --size " + a.size;
  if (!a.metrics_csv.empty()) c += " --metrics-csv " + shell_quote(a.metrics_csv);
  if (!a.metrics_json.empty()) c += " --metrics-json " + shell_quote(a.metrics_json);
  return c;
}
#endif

std::string shape_text(const GridPlan& p) {
  return "(" + std::to_string(p.spec.n_rows()) + ", " + std::to_string(p.spec.n_cols()) + ", " + std::to_string(p.n) +
         ", " + std::to_string(p.dim) + ")";
}

}  // namespace

void run_grid_sample(const GridSampleArgs& a) {
  const StopSignalScope stop;
  GridRequest g;
  g.spec = check_grid_args(a);
  g.base = a.base;
  g.base_model = a.model;
  g.arg = "--grid";
  g.load = [](const std::string& name) {
    return std::make_shared<const DiffusionModel>(load_diffusion_model(resolve_model_arg("--model", name)));
  };
  const std::string backend_name = a.backend;
  g.check_cell = [backend_name](const SampleRequest& q) { check_backend_precision(backend_name, q.precision); };
  const GridPlan plan = plan_grid(g, [](const RunNote& n) { std::fprintf(stderr, "note: %s\n", n.text.c_str()); });
  auto backend = make_backend(a.backend);
  const auto t0 = std::chrono::steady_clock::now();
  const GridAlign align = a.align == "step" ? GridAlign::Step : GridAlign::NoiseLevel;
  std::optional<GridPosition> position;
  if (a.position) position = GridPosition{*a.position, align};
  GridLive live;  // --video: every cell's frames kept
  if (!a.video.empty()) live.run(g, *backend);
  SequentialGridExecutor exec(*backend);
  const GridResult res = a.video.empty() ? run_grid(plan, exec, [] { throw_if_stopped(); }, position) : live.result();
  const int64_t cells = static_cast<int64_t>(plan.cells.size());
  check_output_finite("--out", res.x.data(), cells, plan.n, plan.dim);
  AtomicFileSet files;
  add_npy_float(files, a.out, {plan.spec.n_rows(), plan.spec.n_cols(), plan.n, plan.dim}, res.x.data(), "--out");
  std::string wrote = a.out + " " + shape_text(plan);
  if (a.position) wrote += " at timeline position " + real_text(*a.position) + " (aligned by " + a.align + ")";
  const nlohmann::json metrics = grid_metrics_json(plan, res);
  if (!a.metrics_csv.empty()) files.add(a.metrics_csv, "--metrics-csv", grid_metrics_csv(plan, res)), wrote += ", " + a.metrics_csv;
  if (!a.metrics_json.empty()) files.add(a.metrics_json, "--metrics-json", metrics.dump(2) + "\n"), wrote += ", " + a.metrics_json;
#ifdef DIFFSCOPE_GRID_PNG
  if (!a.png.empty()) {
    GridPng req{&plan, &res, 0, 0, a.png, a.png_text, backend->name(), grid_command_line(a, plan.spec)};
    parse_png_size("--size", a.size, &req.width, &req.height);
    GridPngFiles png = render_grid_png(req);
    files.add(a.png, "--png", std::move(png.png));
    files.add(png_sidecar_path(a.png), "--png", std::move(png.sidecar));
    wrote += ", " + a.png;
  }
  if (!a.video.empty()) {  // the video is moved into place first; its sidecar goes with the other files
    GridPng req{&plan, &res, 0, 0, "", false, backend->name(), grid_command_line(a, plan.spec)};
    parse_png_size("--size", a.size, &req.width, &req.height);
    files.add(video_sidecar_path(a.video), "--video",
              write_grid_video(live, req, GridVideo{a.video, a.fps, a.video_lossless, a.video_yuv420, align}));
    wrote += ", " + a.video;
  }
#endif
  throw_if_stopped();
  files.commit();
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "wrote %s in %s (%s, %s)\n", wrote.c_str(), duration_text(total_s).c_str(),
               count_noun(cells, "cell").c_str(), backend->name().c_str());
}

}  // namespace diffscope::cli
