// sample_command.cpp — `diffscope sample`: a full sampling run with any sampler's step table from noise
// or from noised data (SEMANTICS §3, §7), with an optional strided trajectory.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/cli_util.h"
#include "core/atomic_write.h"
#include "core/errors.h"
#include "core/finite_checks.h"
#include "core/model.h"
#include "core/json_path.h"
#include "core/model_paths.h"
#include "core/npy.h"
#include "core/output_files.h"
#include "core/ranges.h"
#include "core/sampling.h"
#include "core/scheduler_config.h"
#include "core/step_table.h"
#include "core/video_writer.h"

#if defined(DIFFSCOPE_HAVE_GUI) && __has_include("ui/sample_png.h")
#include "ui/sample_png.h"
#define DIFFSCOPE_SAMPLE_PNG 1
#endif

namespace diffscope::cli {
namespace {

struct SampleOptions {
  std::string model, out, trajectory;
  std::string noise;                 // --noise x_T.npy: the start state instead of the seed's Philox noise
  int64_t n = 4096;
  CLI::Option* n_option = nullptr;
  std::string sampler = "ddim", spacing = "default";
  int64_t steps_offset = 0;
  CLI::Option *spacing_option = nullptr, *steps_offset_option = nullptr;
  std::string scheduler_config, write_scheduler_config;  // diffusers' scheduler_config.json in / out
  double eta = 0.0;
  int64_t steps = 0;
  CLI::Option* steps_option = nullptr;  // steps default to t_start + 1 when not given
  int64_t t_start = 999;
  std::string seed_text = "0";
  uint64_t seed = 0;  // parsed from seed_text
  bool from_data = false;
  std::string png, size = "1024x1024";  // GUI builds: headless picture of the run
  std::string video, video_frames;      // GUI builds: headless video of the run (sample_png.h)
  double fps = 30;
  bool video_lossless = false;
  bool no_png_text = false;
  int64_t stride = 1;
  std::string backend = "cpu", precision = "fp32";
};

// Frames kept with stride s over N steps: 0, s, 2s, ... and always N (SEMANTICS §3).
std::vector<int> kept_frames(int N, int s) {
  std::vector<int> f;
  for (int k = 0; k < N; k += s) f.push_back(k);
  f.push_back(N);
  return f;
}

// Parses a seed in [0, 2^64-1] (CLI11 would wrap "-1" and saturate overflows).
uint64_t parse_seed(const std::string& text) {
  const std::string valid = "; valid: an integer in [0, 18446744073709551615]";
  const bool negative = text.size() > 1 && text[0] == '-' && text.find_first_not_of("0123456789", 1) == std::string::npos;
  if (negative) throw InvalidInput("--seed = " + text + " is out of range" + valid);
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    throw InvalidInput("--seed = '" + text + "' is not an integer" + valid);
  try {
    return std::stoull(text);
  } catch (const std::exception&) {
    throw InvalidInput("--seed = " + text + " is out of range" + valid);
  }
}

// "4096, 2" for messages.
std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s;
  for (int64_t d : shape) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "(" + s + ")";
}

#ifdef DIFFSCOPE_SAMPLE_PNG
// The video's kept-frame range from --video-frames FIRST:LAST (step numbers, inclusive, in [0, N]).
ui::SampleVideo video_range(const SampleOptions& o, const std::vector<int>& frames) {
  ui::SampleVideo v{o.video, o.fps, o.video_lossless, 0, static_cast<int>(frames.size()) - 1};
  if (o.video_frames.empty()) return v;
  int a = 0, b = 0;
  char colon = 0, extra = 0;
  const int N = frames.back();
  if (std::sscanf(o.video_frames.c_str(), "%d%c%d%c", &a, &colon, &b, &extra) != 3 || colon != ':' || a < 0 ||
      b > N || a > b)
    throw InvalidInput("--video-frames = " + o.video_frames + " is not valid; want FIRST:LAST with 0 <= FIRST <= LAST <= " +
                       std::to_string(N));
  v.first = static_cast<int>(std::lower_bound(frames.begin(), frames.end(), a) - frames.begin());
  v.last = static_cast<int>(std::upper_bound(frames.begin(), frames.end(), b) - frames.begin()) - 1;
  if (v.first > v.last)
    throw InvalidInput("--video-frames = " + o.video_frames + " holds no kept frame (--trajectory-stride " +
                       std::to_string(o.stride) + ")");
  return v;
}
#endif

// --noise: a (n, dim) float32/float64 .npy of finite values replacing the start noise only (step noise still
// comes from --seed); its rows set n, so an --n that differs is refused. Empty without --noise.
Matrix2D load_start_noise(SampleOptions& o, int dim) {
  if (o.noise.empty()) return {};
  Matrix2D m = load_matrix(o.noise, "--noise");
  if (m.cols != dim)
    throw InvalidInput("--noise '" + o.noise + "' has " + std::to_string(m.cols) + " columns; valid: the model's dim " +
                       std::to_string(dim) + " (shape (n, " + std::to_string(dim) + "))");
  if (o.n_option->count() > 0 && o.n != m.rows)
    throw InvalidInput("--n = " + std::to_string(o.n) + " differs from the " + std::to_string(m.rows) + " rows of --noise '" +
                       o.noise + "'; valid: leave --n out (the rows set n) or give --n " + std::to_string(m.rows));
  o.n = m.rows;
  check_range("--n", o.n, sample_count_range(o.backend == "cuda"));
  check_finite("--noise", m);
  return m;
}

void run_sample(SampleOptions o) {
  // Everything is checked before any computation; outputs are written only at the end.
  const Precision precision = parse_precision(o.precision);
  check_backend_precision(o.backend, precision);
  const Sampler sampler = parse_sampler(o.sampler);
  Spacing spacing = parse_spacing(o.spacing);
  check_range("--steps-offset", o.steps_offset, {0, INT_MAX});
  if (!o.write_scheduler_config.empty()) check_output_path("--write-scheduler-config", o.write_scheduler_config);
  o.seed = parse_seed(o.seed_text);
  check_range("--n", o.n, sample_count_range(o.backend == "cuda"));
  check_eta(o.eta);
  check_range("--trajectory-stride", o.stride, {1, INT_MAX});
  check_output_path("--out", o.out);
  if (!o.trajectory.empty()) check_output_path("--trajectory", o.trajectory);
  if (!o.noise.empty() && o.from_data)
    throw InvalidInput("--noise cannot be combined with --from-data: both set the start state; valid: one of them");
  DiffusionModel model = load_diffusion_model(resolve_model_arg("--model", o.model));
  if (!o.scheduler_config.empty()) {  // its schedule (by SEMANTICS §3's rule) and, unless given, spacing and offset
    const SchedulerConfig config = load_scheduler_config(o.scheduler_config);
    const size_t old_warnings = model.warnings.size();
    apply_scheduler_config(model, config);
    for (size_t i = old_warnings; i < model.warnings.size(); ++i)
      std::fprintf(stderr, "warning: %s\n", model.warnings[i].c_str());
    // ddpm and ddpm-mean take one timestep per step: a config's spacing does not apply to them.
    const bool per_t = sampler == Sampler::Ddpm || sampler == Sampler::DdpmMean;
    if (o.spacing_option->count() == 0 && !per_t) spacing = config.spacing;
    if (o.steps_offset_option->count() == 0) o.steps_offset = config.steps_offset;
  }
  const Matrix2D start_noise = load_start_noise(o, model.net.dim);
  check_range("--t-start", o.t_start, t_start_range(model.schedule));
  const int t_start = static_cast<int>(o.t_start);
  const int64_t steps = o.steps_option->count() == 0 ? o.t_start + 1 : o.steps;
  check_range("--steps", steps, sample_steps_range(t_start));
  const StepTable table = build_step_table(model.schedule, sampler, t_start, static_cast<int>(steps), o.eta, spacing,
                                          static_cast<int>(o.steps_offset));
  if (o.from_data && model.n_data <= 0)
    throw InvalidInput("--from-data: the model '" + o.model + "' has no data_samples tensor");

  const int n = static_cast<int>(o.n), dim = model.net.dim, N = table.steps();
  // SEMANTICS §3 "Finite coefficients": refuse a run whose coefficients are not finite in float32.
  check_run_coefficients(model.schedule, table, N, o.from_data ? t_start : -1);
  int stride = static_cast<int>(std::min<int64_t>(o.stride, N));
#ifdef DIFFSCOPE_SAMPLE_PNG
  int png_w = 1024, png_h = 1024;
  if (!o.png.empty()) {
    ui::parse_png_size("--size", o.size, &png_w, &png_h);
    check_output_path("--png", o.png);
    // Without --trajectory the picture's trails come from at most about 48 kept frames.
    if (o.trajectory.empty() && o.video.empty()) stride = std::max(stride, (N + 47) / 48);
  }
  if (!o.video.empty()) {
    ui::parse_png_size("--size", o.size, &png_w, &png_h);
    check_output_path("--video", o.video);
    video_format_of("--video", o.video);
    check_video_fps("--fps", o.fps);
  }
  const bool keep_frames = !o.trajectory.empty() || !o.png.empty() || !o.video.empty();
#else
  const bool keep_frames = !o.trajectory.empty();
#endif
  const std::vector<int> frames = kept_frames(N, stride);
#ifdef DIFFSCOPE_SAMPLE_PNG
  const ui::SampleVideo video = video_range(o, frames);
#endif
  const int64_t n_frames = static_cast<int64_t>(frames.size());
  // Every output, derived names included, is distinct and fits on its file system (SEMANTICS §9).
  std::vector<OutputFile> outputs{{"--out", o.out, npy_file_bytes({n, dim}, 4)}};
  if (!o.trajectory.empty()) outputs.push_back({"--trajectory", o.trajectory, npy_file_bytes({n_frames, n, dim}, 4)});
  if (!o.png.empty()) {
    outputs.push_back({"--png", o.png});
    outputs.push_back({"the sidecar of --png", png_sidecar_path(o.png)});
  }
  if (!o.video.empty()) {
    outputs.push_back({"--video", o.video});
    outputs.push_back({"the sidecar of --video", png_sidecar_path(o.video)});
  }
  if (!o.write_scheduler_config.empty()) outputs.push_back({"--write-scheduler-config", o.write_scheduler_config});
  check_distinct_outputs(outputs);
  const std::string config_text = o.write_scheduler_config.empty()
                                      ? ""
                                      : scheduler_config_json(model.schedule, sampler, spacing, table.steps_offset);
  if (!o.png.empty()) {  // after the collision check, which names both colliding arguments
    const std::string ext = o.png.size() >= 4 ? o.png.substr(o.png.size() - 4) : "";
    if (ext != ".png" && ext != ".PNG")
      throw InvalidInput("--png = " + o.png + ": the picture is written as PNG; valid: a name ending in .png");
  }
  check_output_space(outputs);
  std::vector<float> x = allocate_floats("--n", static_cast<double>(n) * dim);
  std::vector<float> traj, prev_x0;  // prev_x0: dpmpp's previous data prediction, kept across the chunks
  if (table.uses_prev()) prev_x0 = allocate_floats("--n", static_cast<double>(n) * dim);
  if (keep_frames) traj = allocate_floats("--trajectory", static_cast<double>(n_frames) * n * dim);
  auto backend = make_backend(o.backend);
  const auto t0 = std::chrono::steady_clock::now();

  if (o.from_data)
    fill_start_from_data(model, t_start, o.seed, n, x.data());
  else if (!o.noise.empty())
    std::copy(start_noise.data.begin(), start_noise.data.end(), x.begin());
  else
    fill_start_noise(model, o.seed, n, x.data());

  // Run between the kept frames (and, on a terminal, in about 100 chunks to show progress). With stride 1
  // the backend writes every frame itself (one call instead of N).
  const bool every_frame = !traj.empty() && stride == 1;
  std::vector<int> stops = traj.empty() || every_frame ? std::vector<int>{N} : frames;
  Progress progress("sample steps", N);
  {  // about 100 chunks: progress on a terminal, a line every few seconds otherwise
    const int tick = std::max(1, N / 100);
    for (int k = tick; k < N; k += tick) stops.push_back(k);
    std::sort(stops.begin(), stops.end());
    stops.erase(std::unique(stops.begin(), stops.end()), stops.end());
  }
  const int64_t frame_elems = static_cast<int64_t>(n) * dim;
  size_t next_frame = 0;
  if (!traj.empty() && frames[0] == 0) std::memcpy(traj.data(), x.data(), sizeof(float) * frame_elems), next_frame = 1;
  int k = 0;
  for (int stop : stops) {
    if (stop <= k) continue;
    float* step_frames = every_frame ? traj.data() + (k + 1) * frame_elems : nullptr;
    backend->run_steps(model, table, k, stop, x.data(), n, o.seed, step_frames, precision, 0,
                       prev_x0.empty() ? nullptr : prev_x0.data());
    k = stop;
    if (!every_frame && !traj.empty() && next_frame < frames.size() && frames[next_frame] == k) {
      std::memcpy(traj.data() + next_frame * frame_elems, x.data(), sizeof(float) * frame_elems);
      ++next_frame;
    }
    progress.update(k);
  }

  const double sample_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  // No output with a non-finite value, and all outputs or none (SEMANTICS §9).
  check_output_finite("--out", x.data(), 1, n, dim);
  if (!traj.empty()) check_output_finite(o.trajectory.empty() ? "--png (its frames)" : "--trajectory", traj.data(),
                                         n_frames, n, dim);
  AtomicFileSet files;
  add_npy_float(files, o.out, {n, dim}, x.data(), "--out");
  std::string wrote = o.out + " " + shape_text({n, dim});
  if (!o.trajectory.empty()) {
    add_npy_float(files, o.trajectory, {n_frames, n, dim}, traj.data(), "--trajectory");
    wrote += ", " + o.trajectory + " " + shape_text({n_frames, n, dim});
  }
#ifdef DIFFSCOPE_SAMPLE_PNG
  if (!o.png.empty() || !o.video.empty()) {
    ui::SamplePng req;
    req.model = &model;
    req.B = n;
    req.frames = traj.data();
    req.n_frames = static_cast<int>(frames.size());
    req.png = o.png;
    req.width = png_w;
    req.height = png_h;
    req.run = {{"sampler", sampler_name(sampler)}, {"spacing", spacing_name(spacing)},
               {"steps_offset", table.steps_offset}, {"evaluations", table.evaluations(0, N)},
               {"eta", o.eta},   {"steps", N},
               {"t_start", t_start},           {"seed", o.seed},  {"n", n},
               {"from_data", o.from_data},     {"precision", precision_name(precision)},
               {"backend", o.backend},         {"device", backend->device()},
               {"trajectory_stride", stride},  {"timings", {{"sample_ms", sample_ms}}}};
    if (!o.noise.empty()) put_path(req.run, "noise", o.noise);
    if (!o.scheduler_config.empty()) put_path(req.run, "scheduler_config", o.scheduler_config);
    req.frame_numbers = frames;
    req.png_text = !o.no_png_text;
    if (!o.png.empty()) {
      ui::SamplePngFiles png = ui::render_sample_png(req);
      files.add(o.png, "--png", std::move(png.png));
      files.add(png_sidecar_path(o.png), "--png", std::move(png.sidecar));
      wrote += ", " + o.png + " (" + std::to_string(png_w) + "x" + std::to_string(png_h) + ")";
    }
    // The video (ffmpeg writes it through its own temporary file) before the other outputs, so that a failed
    // encode leaves nothing written.
    if (!o.video.empty()) {
      ui::render_sample_video(req, video);
      wrote += ", " + o.video;
    }
  }
#endif
  if (!config_text.empty()) {
    files.add(o.write_scheduler_config, "--write-scheduler-config", config_text);
    wrote += ", " + o.write_scheduler_config;
  }
  files.commit();
  std::fprintf(stderr, "wrote %s in %.1f s (%d steps, %s, %s)\n", wrote.c_str(), sample_ms / 1e3, N,
               sampler_name(sampler), backend->name().c_str());
}

}  // namespace

void register_sample(CLI::App& app, Action& action) {
  auto o = std::make_shared<SampleOptions>();
  CLI::App* sub = app.add_subcommand("sample", "sample from a model with any solver and spacing (SEMANTICS §3)");
  sub->add_option("--model", o->model, "bundled model name (moons, digits8x8, ...) or .safetensors path")->required();
  o->n_option = sub->add_option("--n", o->n, "number of samples, in [1, 1000000] (with --noise: its rows)")
                    ->capture_default_str();
  sub->add_option("--sampler", o->sampler, std::string("solver: ") + sampler_choices() + " (SEMANTICS §3)")
      ->check(CLI::IsMember(sampler_names()))
      ->capture_default_str();
  o->spacing_option = sub->add_option("--spacing", o->spacing,
                  std::string("step spacing: ") + spacing_choices() +
                      " (ddim and the new solvers; ddpm/ddpm-mean take default)")
      ->check(CLI::IsMember(spacing_names()))
      ->capture_default_str();
  o->steps_offset_option = sub->add_option("--steps-offset", o->steps_offset, "diffusers' steps_offset, added by --spacing leading")
      ->capture_default_str();
  sub->add_option("--scheduler-config", o->scheduler_config,
                  "diffusers scheduler_config.json: its schedule (unless the model file has its own), spacing and "
                  "steps_offset (--spacing / --steps-offset override them; SEMANTICS §3)");
  sub->add_option("--write-scheduler-config", o->write_scheduler_config,
                  "also write the run's schedule and spacing as a diffusers scheduler_config.json");
  sub->add_option("--eta", o->eta, "ddim noise scale, in [0, 1]")->capture_default_str();
  o->steps_option = sub->add_option("--steps", o->steps, "number of steps N, in [1, t_start+1] (default t_start+1)");
  sub->add_option("--t-start", o->t_start, "start timestep, in [0, T-1]")->capture_default_str();
  sub->add_option("--seed", o->seed_text, "Philox seed, an integer in [0, 2^64-1] (SEMANTICS §7)")
      ->capture_default_str();
  sub->add_flag("--from-data", o->from_data, "start from the model's data_samples noised to t_start");
  sub->add_option("--noise", o->noise, "start from this (n, dim) .npy instead of the seed's noise (frame 0 of a "
                                       "--trajectory is one); step noise still comes from --seed");
  sub->add_option("--out", o->out, "output samples: (n, dim) float32 .npy")->required();
  sub->add_option("--trajectory", o->trajectory, "optional trajectory: (frames, n, dim) float32 .npy");
  sub->add_option("--trajectory-stride", o->stride, "keep frames 0, s, 2s, ... and the last")->capture_default_str();
  sub->add_option("--backend", o->backend, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  sub->add_option("--precision", o->precision, "fp32 | tf32 | bf16 (tf32/bf16 need --backend cuda)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16"}))
      ->capture_default_str();
#ifdef DIFFSCOPE_SAMPLE_PNG
  sub->add_option("--png", o->png, "also render the run headless into this PNG (with a .json sidecar)");
  sub->add_option("--size", o->size, "PNG and video size WxH (made even for .mp4)")->capture_default_str();
  sub->add_option("--video", o->video, "also render every kept frame into a video: .mp4 (H.264), .gif or .webp "
                                       "(needs ffmpeg; without it the frames are written as PNGs)");
  sub->add_flag("--no-png-text", o->no_png_text, "do not put the sidecar JSON into the PNG (iTXt chunk 'diffscope')");
  sub->add_option("--fps", o->fps, "video frames per second, in [1, 240]")->capture_default_str();
  sub->add_flag("--video-lossless", o->video_lossless, "exact video: .mp4 as libx264rgb -qp 0, .webp lossless");
  sub->add_option("--video-frames", o->video_frames, "video of the frames FIRST:LAST (steps, inclusive; default all)");
#endif
  sub->callback([o, &action] { action = [o] { run_sample(*o); }; });
}

}  // namespace diffscope::cli
