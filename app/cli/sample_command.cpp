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
#include "core/model_paths.h"
#include "core/npy.h"
#include "core/output_files.h"
#include "core/ranges.h"
#include "core/sampling.h"
#include "core/step_table.h"

#if defined(DIFFSCOPE_HAVE_GUI) && __has_include("ui/sample_png.h")
#include "ui/sample_png.h"
#define DIFFSCOPE_SAMPLE_PNG 1
#endif

namespace diffscope::cli {
namespace {

struct SampleOptions {
  std::string model, out, trajectory;
  int64_t n = 4096;
  std::string sampler = "ddim", spacing = "default";
  int64_t steps_offset = 0;
  double eta = 0.0;
  int64_t steps = 0;
  CLI::Option* steps_option = nullptr;  // steps default to t_start + 1 when not given
  int64_t t_start = 999;
  std::string seed_text = "0";
  uint64_t seed = 0;  // parsed from seed_text
  bool from_data = false;
  std::string png, size = "1024x1024";  // GUI builds: headless picture of the run
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

void run_sample(SampleOptions o) {
  // Everything is checked before any computation; outputs are written only at the end.
  const Precision precision = parse_precision(o.precision);
  check_backend_precision(o.backend, precision);
  const Sampler sampler = parse_sampler(o.sampler);
  const Spacing spacing = parse_spacing(o.spacing);
  check_range("--steps-offset", o.steps_offset, {0, INT_MAX});
  o.seed = parse_seed(o.seed_text);
  check_range("--n", o.n, sample_count_range(o.backend == "cuda"));
  check_eta(o.eta);
  check_range("--trajectory-stride", o.stride, {1, INT_MAX});
  check_output_path("--out", o.out);
  if (!o.trajectory.empty()) check_output_path("--trajectory", o.trajectory);
  const DiffusionModel model = load_diffusion_model(resolve_model_arg("--model", o.model));
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
    if (o.trajectory.empty()) stride = std::max(stride, (N + 47) / 48);
  }
  const bool keep_frames = !o.trajectory.empty() || !o.png.empty();
#else
  const bool keep_frames = !o.trajectory.empty();
#endif
  const std::vector<int> frames = kept_frames(N, stride);
  const int64_t n_frames = static_cast<int64_t>(frames.size());
  // Every output, derived names included, is distinct and fits on its file system (SEMANTICS §9).
  std::vector<OutputFile> outputs{{"--out", o.out, npy_file_bytes({n, dim}, 4)}};
  if (!o.trajectory.empty()) outputs.push_back({"--trajectory", o.trajectory, npy_file_bytes({n_frames, n, dim}, 4)});
  if (!o.png.empty()) {
    outputs.push_back({"--png", o.png});
    outputs.push_back({"the sidecar of --png", png_sidecar_path(o.png)});
  }
  check_distinct_outputs(outputs);
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
  if (!o.png.empty()) {
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
               {"backend", o.backend},         {"device", backend->name()},
               {"trajectory_stride", stride},  {"timings", {{"sample_ms", sample_ms}}}};
    ui::SamplePngFiles png = ui::render_sample_png(req);
    files.add(o.png, "--png", std::move(png.png));
    files.add(png_sidecar_path(o.png), "--png", std::move(png.sidecar));
    wrote += ", " + o.png + " (" + std::to_string(png_w) + "x" + std::to_string(png_h) + ")";
  }
#endif
  files.commit();
  std::fprintf(stderr, "wrote %s in %.1f s (%d steps, %s, %s)\n", wrote.c_str(), sample_ms / 1e3, N,
               sampler_name(sampler), backend->name().c_str());
}

}  // namespace

void register_sample(CLI::App& app, Action& action) {
  auto o = std::make_shared<SampleOptions>();
  CLI::App* sub = app.add_subcommand("sample", "sample from a model with any solver and spacing (SEMANTICS §3)");
  sub->add_option("--model", o->model, "bundled model name (moons, digits8x8, ...) or .safetensors path")->required();
  sub->add_option("--n", o->n, "number of samples, in [1, 1000000]")->capture_default_str();
  sub->add_option("--sampler", o->sampler, std::string("solver: ") + sampler_choices() + " (SEMANTICS §3)")
      ->check(CLI::IsMember(sampler_names()))
      ->capture_default_str();
  sub->add_option("--spacing", o->spacing,
                  std::string("step spacing: ") + spacing_choices() +
                      " (ddim and the new solvers; ddpm/ddpm-mean take default)")
      ->check(CLI::IsMember(spacing_names()))
      ->capture_default_str();
  sub->add_option("--steps-offset", o->steps_offset, "diffusers' steps_offset, added by --spacing leading")
      ->capture_default_str();
  sub->add_option("--eta", o->eta, "ddim noise scale, in [0, 1]")->capture_default_str();
  o->steps_option = sub->add_option("--steps", o->steps, "number of steps N, in [1, t_start+1] (default t_start+1)");
  sub->add_option("--t-start", o->t_start, "start timestep, in [0, T-1]")->capture_default_str();
  sub->add_option("--seed", o->seed_text, "Philox seed, an integer in [0, 2^64-1] (SEMANTICS §7)")
      ->capture_default_str();
  sub->add_flag("--from-data", o->from_data, "start from the model's data_samples noised to t_start");
  sub->add_option("--out", o->out, "output samples: (n, dim) float32 .npy")->required();
  sub->add_option("--trajectory", o->trajectory, "optional trajectory: (frames, n, dim) float32 .npy");
  sub->add_option("--trajectory-stride", o->stride, "keep frames 0, s, 2s, ... and the last")->capture_default_str();
  sub->add_option("--backend", o->backend, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  sub->add_option("--precision", o->precision, "fp32 | tf32 | bf16 (tf32/bf16 need --backend cuda)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16"}))
      ->capture_default_str();
#ifdef DIFFSCOPE_SAMPLE_PNG
  sub->add_option("--png", o->png, "also render the run headless into this PNG (with a .json sidecar)");
  sub->add_option("--size", o->size, "PNG size WxH")->capture_default_str();
#endif
  sub->callback([o, &action] { action = [o] { run_sample(*o); }; });
}

}  // namespace diffscope::cli
