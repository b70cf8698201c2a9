// sample_command.cpp — `diffscope sample`: a full sampling run with any sampler's step table from noise
// or from noised data (SEMANTICS §3, §7), with an optional strided trajectory.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/errors.h"
#include "base/ranges.h"
#include "base/ranges.h"
#include "base/words.h"
#include "base/words.h"
#include "cli/cli.h"
#include "cli/cli_util.h"
#include "cli/family_options.h"
#include "cli/guidance_options.h"
#include "cli/grid_sample.h"
#include "diffusion/input_checks.h"
#include "diffusion/sampling.h"
#include "diffusion/scheduler_config.h"
#include "diffusion/step_table.h"
#include "formats/json_path.h"
#include "formats/npy.h"
#include "formats/sidecar_file.h"
#include "formats/video_writer.h"
#include "model/model.h"
#include "picture/command_line.h"
#include "platform/atomic_write.h"
#include "platform/model_paths.h"
#include "platform/output_files.h"
#include "platform/stop_signal.h"
#include "run/finite_checks.h"
#include "run/run_plan.h"
#include "run/trajectory_store.h"
#include "session/settings_schema.h"
#include "session/view_fit.h"

#if defined(DIFFSCOPE_HAVE_GUI) && __has_include("picture/sample_png.h")
#include "picture/restore.h"
#include "picture/sample_png.h"
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
  bool spacing_from_config = false, steps_offset_from_config = false;  // --config gave them: a scheduler config's lose
  std::string scheduler_config, write_scheduler_config;  // diffusers' scheduler_config.json in / out
  double eta = 0.0;
  int64_t steps = 0;
  CLI::Option* steps_option = nullptr;  // steps default to t_start + 1 when not given
  int64_t t_start = 0;  // given by --t-start or --config; else the model's default_t_start (run/finite_checks.h)
  bool t_start_from_config = false;
  std::string seed_text = "0";
  uint64_t seed = 0;  // parsed from seed_text
  bool from_data = false;
  bool steps_from_config = false, stride_from_config = false;
  // Model families (cli/family_options.h); the sidecar's values of --config where no flag was given.
  FamilyOptions family;
  bool prediction_type_from_config = false, flow_shift_from_config = false, flow_mu_from_config = false;
  GuidanceOptions guidance;  // --class and the guidance options (cli/guidance_options.h), or --config's values
  std::string png, size = "1024x1024";  // GUI builds: headless picture of the run
  std::string video, video_frames;      // GUI builds: headless video of the run (sample_png.h)
  std::string svg, pdf;                 // GUI builds with cairo: the run as a vector figure (picture/figure.h)
  double fps = 30;
  bool video_lossless = false, video_yuv420 = false;
  bool no_png_text = false;
  int64_t stride = 1;
  std::string backend = "cpu", precision = "fp32";
  // The picture (GUI builds): every view setting that changes a pixel, by its settings-schema key
  // (session/settings_schema.h), from --config and the generated --key-name flags; the flags win.
  std::string config;                           // --config sidecar.json|export.png
  std::map<std::string, std::string> view_flags;  // schema key -> the text of its --flag
  std::string grid, metrics_csv, metrics_json;  // --grid SPEC: the comparison grid (cli/grid_sample.h)
  double grid_position = 1;                      // --grid-position U: the cells' states at timeline position U
  std::string grid_align = "noise";
  int64_t frame = -1;                           // the frame written to --out and drawn; -1: the last
  bool frame_from_config = false;
  double camera_aspect = 0, ui_scale = 1;
  CLI::App* sub = nullptr;
  bool given(const std::string& flag) const {
    const CLI::Option* opt = sub ? sub->get_option_no_throw(flag) : nullptr;
    return opt && opt->count() > 0;
  }
};

// A range bound as typed ("0.05", "16384").
std::string num_text(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", v);
  return b;
}

// Sidecar keys that are not settings: what the run measured or wrote (SEMANTICS §6). --config reads the
// picture values among them (frame, camera_aspect, ui_scale, trajectory_stride, noise, steps_offset, backend).
bool is_sidecar_record(const std::string& k) {
  static const char* const kKeys[] = {"format", "kind", "generator", "model", "device", "timestep", "computed_steps",
                                      "command_line", "created_utc", "timings", "png", "npy", "video", "svg", "pdf", "fps", "lossless", "pix_fmt",
                                      "frames", "shape", "grid", "render_device", "frames_drawn", "evaluations",
                                      "frame", "camera_aspect", "ui_scale", "trajectory_stride", "noise", "steps_offset",
                                      "scheduler_config", "backend", "cam_auto", "camera_auto", "time_input",
                                      "levels", "prediction_type", "sigmas", "flow_shift", "flow_mu", "class_label",
                                      "guidance_scale", "guidance_interval", "guidance_rescale"};
  return std::find(std::begin(kKeys), std::end(kKeys), k) != std::end(kKeys);
}

// The run's family values of a --config sidecar (SEMANTICS §6, format 3) where no flag was given: prediction_type,
// sigmas, flow_shift, flow_mu. A value of the wrong type or out of range is refused naming the sidecar's key.
void apply_config_family(SampleOptions& o, const nlohmann::json& flat) {
  const std::string at = "--config " + o.config + ": ";
  auto bad = [&](const char* key, const std::string& valid) {
    return InvalidInput(at + key + " = " + flat[key].dump() + " is not valid; valid: " + valid);
  };
  // "from_file": the settings rows' unset value (session/settings_schema.h), as the app's exports write it.
  const auto unset = [&](const char* key) { return flat[key].is_string() && flat[key].get<std::string>() == "from_file"; };
  if (flat.contains("prediction_type") && !o.given("--prediction-type") && !unset("prediction_type")) {
    if (!flat["prediction_type"].is_string()) throw bad("prediction_type", family_choices());
    parse_family(flat["prediction_type"].get<std::string>(), at + "prediction_type");
    o.family.prediction_type = flat["prediction_type"].get<std::string>(), o.prediction_type_from_config = true;
  }
  if (flat.contains("sigmas") && !o.given("--sigmas")) {
    const nlohmann::json& a = flat["sigmas"];
    std::vector<double> levels;
    for (size_t i = 0; a.is_array() && i < a.size(); ++i)
      if (a[i].is_number()) levels.push_back(a[i].get<double>());
    if (!a.is_array() || levels.size() != a.size() || levels.empty())
      throw bad("sigmas", "a list of numbers, strictly decreasing, > 0 but the last");
    o.family.sigmas = sigmas_text(levels);
  }
  for (const char* key : {"flow_shift", "flow_mu"}) {
    const bool shift = key == std::string("flow_shift");
    if (!flat.contains(key) || o.given(shift ? "--flow-shift" : "--flow-mu") || unset(key)) continue;
    const bool ok = flat[key].is_number() && std::isfinite(flat[key].get<double>()) && (!shift || flat[key].get<double>() > 0);
    if (!ok) throw bad(key, shift ? "a finite number > 0" : "a finite number");
    (shift ? o.family.flow_shift : o.family.flow_mu) = flat[key].get<double>();
    (shift ? o.flow_shift_from_config : o.flow_mu_from_config) = true;
  }
}

// The run's class and guidance of a --config sidecar (SEMANTICS §12) where no flag was given: class_label,
// guidance_scale, guidance_interval ([lo, hi], hi a number or "inf"), guidance_rescale. A value of the wrong type
// is refused naming the sidecar's key; the ranges are the run plan's.
void apply_config_guidance(SampleOptions& o, const nlohmann::json& flat) {
  const std::string at = "--config " + o.config + ": ";
  auto bad = [&](const char* key, const std::string& valid) {
    return InvalidInput(at + key + " = " + flat[key].dump() + " is not valid; valid: " + valid);
  };
  auto wanted = [&](const char* key, const char* flag) { return flat.contains(key) && !o.given(flag); };
  if (wanted("class_label", "--class")) {
    if (!flat["class_label"].is_number_integer()) throw bad("class_label", "an integer in [0, C-1]");
    o.guidance.class_label = flat["class_label"].get<int64_t>();
  }
  if (wanted("guidance_scale", "--guidance-scale")) {
    if (!flat["guidance_scale"].is_number()) throw bad("guidance_scale", "a number");
    o.guidance.scale = flat["guidance_scale"].get<double>();
  }
  if (wanted("guidance_rescale", "--guidance-rescale")) {
    if (!flat["guidance_rescale"].is_number()) throw bad("guidance_rescale", "a number in [0, 1]");
    o.guidance.rescale = flat["guidance_rescale"].get<double>();
  }
  if (wanted("guidance_interval", "--guidance-interval")) {
    const nlohmann::json& a = flat["guidance_interval"];
    const bool hi_inf = a.is_array() && a.size() == 2 && a[1].is_string() && a[1].get<std::string>() == "inf";
    if (!a.is_array() || a.size() != 2 || !a[0].is_number() || !(a[1].is_number() || hi_inf))
      throw bad("guidance_interval", "[LO, HI], HI a number or \"inf\"");
    o.guidance.interval = guidance_interval_text(a[0].get<double>(), hi_inf ? INFINITY : a[1].get<double>());
  }
}

// --config FILE (a sidecar, or a PNG carrying one): its values where no flag was given (explicit flags win).
// Fills `pic` with its view and export settings; `camera_given` when it holds a camera. Notes unknown keys.
void apply_config(SampleOptions& o, AppSettings* pic, bool* camera_given, bool* size_given, std::string* note) {
  const nlohmann::json j = read_sidecar(o.config, note, "--config");
  const nlohmann::json flat = sidecar_settings(j);
  if (o.model.empty() && j.contains("model") && j["model"].is_object()) {
#ifdef DIFFSCOPE_SAMPLE_PNG
    const RestorePlan plan = plan_restore(j);  // found by path, checked by SHA-256 (picture/restore.h)
    o.model = plan.model;
    *note += plan.note;
#else
    get_path(j["model"], "file", &o.model);
#endif
  }
  if (o.model.empty()) {
    std::string named;  // a sidecar whose model file is gone (and matches no bundled model) still names it
    if (j.contains("model") && j["model"].is_object()) get_path(j["model"], "file", &named);
    throw InvalidInput("--config " + o.config +
                       (named.empty() ? " names no model"
                                      : " names the model " + named + ", which is gone (no bundled model has its bytes)") +
                       "; valid: give --model");
  }
  // "backend" is the compute path's name in GUI sidecars ("cuda + interop", ...): read below, not as the setting.
  const std::vector<std::string> used = apply_settings_json(*pic, flat, "--config " + o.config + ": ", {"backend"}, note);
  auto has = [&](const char* key) {
    for (const std::string& u : used)
      if (const SettingField* f = find_setting(u); f && f->key == std::string(key)) return true;
    return false;
  };
  const SamplingSettings& c = pic->sampling;
  if (has("n") && !o.given("--n")) o.n = c.n_samples;
  if (has("sampler") && !o.given("--sampler")) o.sampler = sampler_name(c.sampler);
  if (has("spacing") && !o.given("--spacing")) o.spacing = spacing_name(c.spacing), o.spacing_from_config = true;
  if (has("eta") && !o.given("--eta")) o.eta = c.eta;
  if (has("t_start") && !o.given("--t-start")) o.t_start = c.t_start, o.t_start_from_config = true;
  if (has("steps") && !o.given("--steps")) o.steps = c.steps, o.steps_from_config = true;
  if (has("seed") && !o.given("--seed")) o.seed_text = std::to_string(c.seed);
  if (has("from_data") && !o.given("--from-data")) o.from_data = c.from_data;
  if (has("precision") && !o.given("--precision")) o.precision = precision_name(c.precision);
  auto num = [&](const char* k) { return flat.contains(k) && flat[k].is_number(); };
  if (num("steps_offset") && !o.given("--steps-offset"))
    o.steps_offset = flat["steps_offset"].get<int64_t>(), o.steps_offset_from_config = true;
  if (num("frame") && !o.given("--frame")) o.frame = flat["frame"].get<int64_t>(), o.frame_from_config = true;
  if (num("camera_aspect") && !o.given("--camera-aspect")) o.camera_aspect = flat["camera_aspect"].get<double>();
  if (num("ui_scale") && !o.given("--ui-scale")) o.ui_scale = flat["ui_scale"].get<double>();
  if (num("trajectory_stride") && !o.given("--trajectory-stride")) o.stride = flat["trajectory_stride"].get<int64_t>(), o.stride_from_config = true;
  if (flat.contains("noise") && !o.given("--noise")) get_path(flat, "noise", &o.noise);
  if (flat.contains("scheduler_config") && !o.given("--scheduler-config"))
    get_path(flat, "scheduler_config", &o.scheduler_config);
  apply_config_family(o, flat);
  apply_config_guidance(o, flat);
  if (flat.contains("backend") && flat["backend"].is_string() && !o.given("--backend")) {
    const std::string b = flat["backend"].get<std::string>();  // "cpu", or "cuda ..." from the GUI
    if (b.rfind("cuda", 0) == 0) o.backend = "cuda";
    else if (b == "cpu") o.backend = "cpu";
  }
  *camera_given = has("cam_x") || has("cam_y") || has("cam_half_h") || has("camera");
  *size_given = has("export_width") || has("export_height") || has("export_size");
  std::string unknown;
  for (auto it = flat.begin(); it != flat.end(); ++it)
    if (!is_sidecar_record(it.key()) && std::find(used.begin(), used.end(), it.key()) == used.end())
      unknown += (unknown.empty() ? "" : ", ") + it.key();
  if (!unknown.empty()) *note += "--config " + o.config + ": unknown keys ignored: " + unknown + "\n";
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
SampleVideo video_range(const SampleOptions& o, const std::vector<int>& frames) {
  SampleVideo v{o.video, o.fps, o.video_lossless, o.video_yuv420, 0, static_cast<int>(frames.size()) - 1};
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

#ifdef DIFFSCOPE_SAMPLE_PNG
// An image model's picture shows a grid of at most cols x cols samples beside the scatter of all of them; the app
// captions it ("samples 0-143 of 256"), a picture file has no caption, so `sample` says it on stderr. "" when the
// grid holds every sample.
std::string image_grid_note(const DiffusionModel& model, int n, int cols) {
  if (image_side(model) <= 0 || int64_t(cols) * cols >= n) return "";
  int need = 1;
  while (int64_t(need) * need < n && need < kGridColsRange.hi) ++need;
  return "note: the image grid shows samples 0-" + std::to_string(cols * cols - 1) + " of " + std::to_string(n) +
         " (" + std::to_string(cols) + " x " + std::to_string(cols) + "; the scatter beside it shows all)" +
         (int64_t(need) * need >= n ? "; --image-grid-cols " + std::to_string(need) + " shows every one"
                                    : "; at most " + std::to_string(need * need) + " fit (--image-grid-cols " +
                                          std::to_string(need) + ")") +
         "\n";
}
#endif

// Options that act only together with one of the outputs named after them (the picture's and the video's flags;
// the stride picks the frames of --trajectory, the video and the PNG's trails).
struct OutputDependentOption {
  const char* option;
  std::vector<const char*> outputs;
};
const std::vector<OutputDependentOption>& output_dependent_options() {
  static const std::vector<OutputDependentOption> k = {
      {"--trajectory-stride", {"--trajectory", "--video", "--png", "--svg", "--pdf"}},
      {"--fps", {"--video"}},
      {"--video-lossless", {"--video"}},
      {"--video-yuv420", {"--video"}},
      {"--video-frames", {"--video"}},
      {"--no-png-text", {"--png"}},
      {"--metrics-csv", {"--grid"}},
      {"--metrics-json", {"--grid"}},
      {"--grid-position", {"--grid"}},
      {"--grid-align", {"--grid"}},
      {"--size", {"--png", "--video", "--svg", "--pdf"}},
      {"--camera-aspect", {"--png", "--video", "--svg", "--pdf"}},
      {"--ui-scale", {"--png", "--video", "--svg", "--pdf"}},
  };
  return k;
}

// One line on stderr for each option given that this run does not use (SEMANTICS §3): the picture and video
// flags without their output (plan_run notes eta and steps_offset).
void note_ignored_options(const SampleOptions& o) {
  for (const OutputDependentOption& d : output_dependent_options()) {
    if (!o.given(d.option)) continue;
    std::string with;
    bool any = false;
    for (const char* out : d.outputs) {
      any = any || o.given(out);
      with += std::string(with.empty() ? "" : " or ") + out;
    }
    if (!any) std::fprintf(stderr, "note: %s has no effect without %s\n", d.option, with.c_str());
  }
}

// The spacing written by --write-scheduler-config. The default spacing has no diffusers name; diffusers' linspace
// differs from it only in the rounding of ties, so when this run's step list is linspace's (t_start, N) the config
// says linspace (with a note), else it is refused saying what to pass.
Spacing written_spacing(const SampleOptions& o, Sampler sampler, Spacing spacing, int t_start, int n_steps) {
  if (spacing != Spacing::Default) return spacing;
  const bool per_t = sampler == Sampler::Ddpm || sampler == Sampler::DdpmMean;  // t_start, t_start-1, ...
  if ((!per_t || n_steps == t_start + 1) &&
      spacing_timesteps(Spacing::Default, t_start, n_steps) == spacing_timesteps(Spacing::Linspace, t_start, n_steps)) {
    std::fprintf(stderr, "note: --write-scheduler-config %s: the default spacing has no diffusers name; written as "
                         "timestep_spacing linspace, which gives this run's %s from t_start %d exactly\n",
                 o.write_scheduler_config.c_str(), count_noun(n_steps, "step").c_str(), t_start);
    return Spacing::Linspace;
  }
  throw InvalidInput("--write-scheduler-config " + o.write_scheduler_config + ": the default spacing has no diffusers "
                     "timestep_spacing, and linspace (its nearest) rounds a tie differently for --steps " +
                     std::to_string(n_steps) + " from t_start " + std::to_string(t_start) +
                     "; valid: pass --spacing linspace, leading, trailing or karras");
}

#ifdef DIFFSCOPE_SAMPLE_PNG
// The options after `--out` in the sidecars' command_line (picture/command_line.h): every output and picture option
// of this run with its effective value (from the flags or --config), input files by absolute path, so that the
// line reproduces every file of the run from any folder.
std::string run_options(const SampleOptions& o, const AppSettings& pic, bool camera_given, int steps_offset,
                        Spacing spacing, int stride) {
  std::string c;
  auto add = [&](const std::string& flag, const std::string& value = "") {
    c += " " + flag + (value.empty() ? "" : " " + shell_quote(value));
  };
  auto num = [](double v) {
    char b[40];
    std::snprintf(b, sizeof b, "%.17g", v);
    return std::string(b);
  };
  if (!o.noise.empty()) add("--noise", absolute_path(o.noise));
  if (!o.scheduler_config.empty()) add("--scheduler-config", absolute_path(o.scheduler_config));
  if (spacing == Spacing::Leading && steps_offset != 0) add("--steps-offset", std::to_string(steps_offset));
  if (!o.family.prediction_type.empty()) add("--prediction-type", o.family.prediction_type);
  if (!o.family.sigmas.empty()) add("--sigmas", sigmas_text(parse_sigmas_flag(o.family.sigmas)));
  if (o.given("--flow-shift") || o.flow_shift_from_config) add("--flow-shift", num(o.family.flow_shift));
  if (o.given("--flow-mu") || o.flow_mu_from_config) add("--flow-mu", num(o.family.flow_mu));
  const Guidance g = parse_guidance_options(o.guidance);
  if (g.class_label >= 0) add("--class", std::to_string(g.class_label));
  if (g.scale != 1.0) add("--guidance-scale", num(g.scale));
  if (g.has_interval()) add("--guidance-interval", guidance_interval_text(g.sigma_lo, g.sigma_hi));
  if (g.rescale != 0.0) add("--guidance-rescale", num(g.rescale));
  if (!o.trajectory.empty()) add("--trajectory", o.trajectory);
  if (o.given("--trajectory-stride") || o.stride_from_config) add("--trajectory-stride", std::to_string(stride));
  if (!o.write_scheduler_config.empty()) add("--write-scheduler-config", o.write_scheduler_config);
  if (o.frame >= 0) add("--frame", std::to_string(o.frame));
  if (!o.png.empty()) add("--png", o.png);
  if (!o.png.empty() && o.no_png_text) add("--no-png-text");
  if (!o.svg.empty()) add("--svg", o.svg);
  if (!o.pdf.empty()) add("--pdf", o.pdf);
  if (!o.video.empty()) {
    add("--video", o.video);
    add("--fps", num(o.fps));
    if (o.video_lossless) add("--video-lossless");
    if (o.video_yuv420) add("--video-yuv420");
    if (!o.video_frames.empty()) add("--video-frames", o.video_frames);
  }
  c += picture_command_options(pic, camera_given, o.camera_aspect, o.ui_scale);
  return c;
}
#endif

// The CLI's spelling of a sampling argument: its flag; t_start taken from --config names the sidecar.
std::string cli_arg_name(const SampleOptions& o, Arg a) {
  if (a == Arg::TStart && o.t_start_from_config && !o.given("--t-start")) return "--config " + o.config + ": t_start";
  const bool sigmas_from_config = !o.family.sigmas.empty() && !o.given("--sigmas") && !o.config.empty();
  if ((a == Arg::PredictionType && o.prediction_type_from_config) || (a == Arg::Sigmas && sigmas_from_config) ||
      (a == Arg::FlowShift && o.flow_shift_from_config) || (a == Arg::FlowMu && o.flow_mu_from_config))
    return "--config " + o.config + ": " + arg_id(a);
  if (a == Arg::SchedulerConfig) return "--scheduler-config " + o.scheduler_config;
  if (a == Arg::Config) return "--config " + o.config;
  if (a == Arg::ClassLabel) return "--class";
  return cli_flag(a);
}

// The options (flags, then --config's values where no flag was given) as a sampling request; `budget_mb`: the
// picture's trajectory budget, whose trail stride a --png or --video without --trajectory keeps.
SampleRequest sample_request(const SampleOptions& o, int budget_mb) {
  SampleRequest r;
  r.sampler = parse_sampler(o.sampler);
  if (o.spacing_option->count() > 0 || o.spacing_from_config) r.spacing = parse_spacing(o.spacing);
  if (o.steps_offset_option->count() > 0 || o.steps_offset_from_config) r.steps_offset = o.steps_offset;
  r.steps_offset_named = o.given("--steps-offset");
  r.eta = o.eta;
  r.eta_named = o.given("--eta");
  if (o.given("--t-start") || o.t_start_from_config) r.t_start = o.t_start;
  if (o.steps_option->count() > 0 || o.steps_from_config) r.steps = o.steps;
  r.n = o.n;
  r.seed = parse_seed(o.seed_text);
  r.from_data = o.from_data;
  r.precision = parse_precision(o.precision);
  r.gpu = o.backend == "cuda";
  const bool picture = !o.png.empty() || !o.video.empty() || !o.svg.empty() || !o.pdf.empty();
  r.keep_frames = !o.trajectory.empty() || picture;
  if (o.given("--trajectory-stride") || o.stride_from_config || !picture || !o.trajectory.empty())
    r.trajectory_stride = o.stride;
  else
    r.memory_budget_mb = budget_mb;  // the GUI's trail sampling (SEMANTICS §3)
  if (o.given("--frame") || (o.frame_from_config && o.frame != -1)) r.frame = o.frame;
  r.frame_past_end_is_last = o.frame_from_config && !o.given("--frame");
  r.prediction_type = parse_prediction_type_flag(o.family.prediction_type);
  r.sigmas = parse_sigmas_flag(o.family.sigmas);
  if (o.given("--flow-shift") || o.flow_shift_from_config) r.flow_shift = o.family.flow_shift;
  if (o.given("--flow-mu") || o.flow_mu_from_config) r.flow_mu = o.family.flow_mu;
  r.guidance = parse_guidance_options(o.guidance);
  r.model_name = o.model;
  const SampleOptions* opts = &o;
  r.arg_name = [opts](Arg a) { return cli_arg_name(*opts, a); };
  return r;
}

// The picture's settings (the GUI's defaults, then --config, then the flags, which win) and every check that
// needs no model.
void prepare_options(SampleOptions& o, AppSettings& pic, bool* camera_given, bool* size_given) {
  if (!o.config.empty()) {
    std::string note;
    apply_config(o, &pic, camera_given, size_given, &note);
    if (!note.empty()) std::fprintf(stderr, "diffscope sample: %s", note.c_str());
  }
  for (const auto& [key, text] : o.view_flags) {
    if (!o.given(setting_flag(key))) continue;
    set_setting(pic, key, text, setting_flag(key));
    if (key == "cam_x" || key == "cam_y" || key == "cam_half_h" || key == "camera") *camera_given = text != "auto";
  }
  // The app's edited starts change the samples (SEMANTICS §6): `sample` does not run them, so it refuses them.
  if (!pic.view.start_edits.empty())
    throw InvalidInput((o.given("--start-edits") ? std::string("--start-edits") : "--config " + o.config + ": start_edits") +
                       " = '" + start_edits_text(pic.view.start_edits) +
                       "': sample does not run edited starts (the app does: diffscope --restore FILE); valid: none");
  check_real_range("--ui-scale", o.ui_scale, {0.25, 8.0});
  // 0 is a sidecar's "not set"; typed, the value is in range
  if (o.camera_aspect != 0 || o.given("--camera-aspect"))
    check_real_range("--camera-aspect", o.camera_aspect, {1e-3, 1e3});
  check_backend_precision(o.backend, parse_precision(o.precision));
  parse_sampler(o.sampler);
  parse_spacing(o.spacing);
  check_range("--steps-offset", o.steps_offset, {0, INT_MAX});
  if (!o.write_scheduler_config.empty()) check_output_path("--write-scheduler-config", o.write_scheduler_config);
  o.seed = parse_seed(o.seed_text);
  if (o.given("--sigmas") && o.family.sigmas.empty())
    throw InvalidInput("--sigmas is empty; valid: a list such as 14.6,5.2,0 or @FILE");
  check_sample_request(sample_request(o, 0));
  check_output_path("--out", o.out);
  if (!o.trajectory.empty()) check_output_path("--trajectory", o.trajectory);
  if (!o.noise.empty() && o.from_data)
    throw InvalidInput("--noise cannot be combined with --from-data: both set the start state; valid: one of them");
  if (o.model.empty()) throw InvalidInput("--model is required (or --config with a sidecar that names the model)");
}

// The model, with --scheduler-config's schedule by SEMANTICS §3's rule (its warnings on stderr).
DiffusionModel load_model(const SampleOptions& o, std::optional<SchedulerConfig>* config) {
  DiffusionModel model = load_diffusion_model(resolve_model_arg("--model", o.model));
  if (o.scheduler_config.empty()) return model;
  *config = load_scheduler_config(o.scheduler_config);
  const size_t old_warnings = model.warnings.size();
  apply_scheduler_config(model, **config);
  for (size_t i = old_warnings; i < model.warnings.size(); ++i)
    std::fprintf(stderr, "warning: %s\n", model.warnings[i].c_str());
  return model;
}

// One run of `sample`: its options, picture settings, model, plan and the buffers the run fills.
struct SampleRun {
  SampleOptions o;
  AppSettings pic;
  bool camera_given = false, size_given = false;
  std::optional<SchedulerConfig> config;
  DiffusionModel model;
  Matrix2D start_noise;
  RunPlan plan;
  std::vector<float> x, traj, prev_x0, x_frame;
  double sample_ms = 0;
#ifdef DIFFSCOPE_SAMPLE_PNG
  SampleVideo video;
#endif
};

// --write-scheduler-config's text (diffusion/scheduler_config.h): a VP family's run on the schedule as its diffusers
// config with the run's prediction_type; a flow or edm run's list as plan_run builds it: the --scheduler-config's,
// else FlowMatchEuler's (the run's shift) or EDM's (karras, the model's sigma_data). A typed --sigmas list has no
// scheduler config: refused.
std::string written_scheduler_config(const SampleRun& s) {
  const SampleOptions& o = s.o;
  const RunPlan& p = s.plan;
  if (!p.request.sigmas.empty())
    throw InvalidInput("--write-scheduler-config " + o.write_scheduler_config + ": a typed --sigmas list has no "
                       "diffusers scheduler config (diffusers takes it as set_timesteps(sigmas=...)); valid: leave "
                       "out --sigmas or --write-scheduler-config");
  if (!p.family_list)
    return scheduler_config_json(s.model.schedule, p.request.sampler,
                                 written_spacing(o, p.request.sampler, p.spacing, p.t_start, p.steps),
                                 p.table.steps_offset, p.family.family);
  SchedulerConfig list;
  if (s.config && has_family_list(*s.config)) {  // the config's list, as plan_run ran it (a --flow-shift given wins)
    list = *s.config;
    if (p.request.flow_shift && list.flow_match) list.flow_match->shift = *p.request.flow_shift;
    if (p.request.flow_shift && list.flow_sigmas_shift) list.flow_sigmas_shift = *p.request.flow_shift;
  } else if (p.family.family == Family::Flow) {
    FlowMatchEulerConfig c;
    c.T = p.family.T;
    c.shift = p.request.flow_shift.value_or(p.family.flow_shift);
    list.flow_match = c;
  } else {
    EdmConfig c;
    c.sigma_data = p.family.sigma_data;
    list.edm = c;
  }
  if (p.t_start > 0)
    std::fprintf(stderr, "note: --write-scheduler-config %s: the whole list of %d steps is written; this run starts at "
                         "its step %d (--t-start)\n", o.write_scheduler_config.c_str(), p.list_steps, p.t_start);
  return family_scheduler_config_json(p.family, p.request.sampler, list, p.request.flow_mu);
}

// Every output, derived names included, is distinct and fits on its file system (SEMANTICS §9); the scheduler
// config text to write ("" for none).
std::string check_outputs(const SampleRun& s) {
  const SampleOptions& o = s.o;
  const int64_t n = s.plan.n, dim = s.model.net.dim, n_frames = static_cast<int64_t>(s.plan.frames.size());
  std::vector<OutputFile> outputs{{"--out", o.out, npy_file_bytes({n, dim}, 4)}};
  if (!o.trajectory.empty()) outputs.push_back({"--trajectory", o.trajectory, npy_file_bytes({n_frames, n, dim}, 4)});
  if (!o.png.empty()) {
    outputs.push_back({"--png", o.png});
    outputs.push_back({"the sidecar of --png", png_sidecar_path(o.png)});
  }
  if (!o.svg.empty()) outputs.insert(outputs.end(), {{"--svg", o.svg}, {"the sidecar of --svg", video_sidecar_path(o.svg)}});
  if (!o.pdf.empty()) outputs.insert(outputs.end(), {{"--pdf", o.pdf}, {"the sidecar of --pdf", video_sidecar_path(o.pdf)}});
  if (!o.video.empty()) {
    outputs.push_back({"--video", o.video});
    outputs.push_back({"the sidecar of --video", video_sidecar_path(o.video)});
  }
  if (!o.write_scheduler_config.empty()) outputs.push_back({"--write-scheduler-config", o.write_scheduler_config});
  std::vector<OutputFile> named = outputs;  // --config is read, never written over (SEMANTICS §9)
  if (!o.config.empty()) named.push_back({"--config", o.config});
  check_distinct_outputs(named);
  const std::string config_text = o.write_scheduler_config.empty() ? "" : written_scheduler_config(s);
  if (!o.png.empty()) {  // after the collision check, which names both colliding arguments
    const std::string ext = o.png.size() >= 4 ? o.png.substr(o.png.size() - 4) : "";
    if (ext != ".png" && ext != ".PNG")
      throw InvalidInput("--png = " + o.png + ": the picture is written as PNG; valid: a name ending in .png");
  }
  check_output_space(outputs);
#ifdef DIFFSCOPE_SAMPLE_PNG
  if (!o.video.empty()) check_ffmpeg_available("--video", o.video);  // before any work: nothing written without it
  for (const auto& [arg, path] : {std::pair<const char*, std::string>{"--svg", o.svg}, {"--pdf", o.pdf}}) {
    if (path.empty()) continue;
    const FigureFormat want = std::string(arg) == "--svg" ? FigureFormat::Svg : FigureFormat::Pdf;
    if (figure_format_of(arg, path) != want)  // --svg names an SVG, --pdf a PDF: never the other format silently
      throw InvalidInput(std::string(arg) + " = " + path + ": the file is written as " + (arg + 2) +
                         "; valid: a name ending in ." + (arg + 2));
    require_figures(std::string(arg) + " " + path);
  }
#endif
  return config_text;
}

// The model, the plan and the picture's own checks, before any work.
void plan_sample(SampleRun& s) {
  SampleOptions& o = s.o;
  s.model = load_model(o, &s.config);
  s.start_noise = load_start_noise(o, s.model.net.dim);
  SampleRequest request = sample_request(o, s.pic.sampling.memory_budget_mb);
  request.scheduler_config = s.config ? &*s.config : nullptr;
  // A sidecar records the run's family: where the model runs as that family by itself, it is no override.
  if (o.prediction_type_from_config && request.prediction_type == s.model.family.family) {
    request.prediction_type.reset();
    o.family.prediction_type.clear();
  }
  note_ignored_options(o);
  s.plan = plan_run(request, s.model, [](const RunNote& note) { std::fprintf(stderr, "note: %s\n", note.text.c_str()); });
#ifdef DIFFSCOPE_SAMPLE_PNG
  const bool figure = !o.svg.empty() || !o.pdf.empty();
  if ((!o.png.empty() || !o.video.empty() || figure) && (o.given("--size") || !s.size_given))
    set_setting(s.pic, "export_size", o.size, "--size");
  if (!o.png.empty()) check_output_path("--png", o.png);
  if (!o.svg.empty()) check_output_path("--svg", o.svg);
  if (!o.pdf.empty()) check_output_path("--pdf", o.pdf);
  if (s.pic.figure && !o.png.empty()) require_figures("--figure");
  if (!o.video.empty()) {
    check_output_path("--video", o.video);
    video_format_of("--video", o.video);
    check_video_fps("--fps", o.fps);
  }
  s.video = video_range(o, s.plan.frames);
#endif
}

// Runs the plan on the backend: --out's state (at --frame when given) and the kept frames.
void run_steps_of(SampleRun& s, DenoiserBackend& backend) {
  const RunPlan& p = s.plan;
  const double frame_floats = static_cast<double>(p.n) * s.model.net.dim;
  s.x = allocate_floats("--n", frame_floats);
  if (p.table.uses_prev()) s.prev_x0 = allocate_floats("--n", frame_floats);
  if (p.request.keep_frames) s.traj = allocate_floats("--trajectory", static_cast<double>(p.frames.size()) * frame_floats);
  if (p.frame >= 0 && p.frame < p.steps) s.x_frame = allocate_floats("--n", frame_floats);
  const auto t0 = std::chrono::steady_clock::now();
  Progress progress("sample steps", p.steps);
  RunBuffers out{s.x.data(), s.traj.empty() ? nullptr : s.traj.data(), s.x_frame.empty() ? nullptr : s.x_frame.data(),
                 s.o.noise.empty() ? nullptr : s.start_noise.data.data(), s.prev_x0.empty() ? nullptr : s.prev_x0.data()};
  // SIGINT / SIGTERM between the chunks: nothing written (platform/stop_signal.h)
  run_plan(p, s.model, backend, out, [&](int k) { progress.update(k); }, [] { throw_if_stopped(); });
  s.sample_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  progress.clear();
}

#ifdef DIFFSCOPE_SAMPLE_PNG
// The picture and the video of the run (headless GL, picture/sample_png.h) into `files`; returns the video's encode
// time in seconds (-1: none).
double add_pictures(SampleRun& s, DenoiserBackend& backend, AtomicFileSet& files, std::string& wrote) {
  const SampleOptions& o = s.o;
  const RunPlan& p = s.plan;
  if (o.png.empty() && o.video.empty() && o.svg.empty() && o.pdf.empty()) return -1;
  const SampleVideo& video = s.video;
  SamplePng req;
  req.model = &s.model;
  req.B = p.n;
  req.frames = s.traj.data();
  req.n_frames = static_cast<int>(p.frames.size());
  req.png = o.png;
  req.settings = s.pic;
  SamplingSettings& rs = req.settings.sampling;
  rs.n_samples = p.n, rs.sampler = p.request.sampler, rs.spacing = p.spacing, rs.eta = p.request.eta;
  rs.steps = p.steps, rs.t_start = p.t_start, rs.seed = p.request.seed, rs.from_data = p.request.from_data;
  rs.precision = p.request.precision;
  rs.prediction_type = p.request.prediction_type, rs.flow_shift = p.request.flow_shift;
  req.camera_given = s.camera_given;
  req.camera_aspect = o.camera_aspect;
  req.ui_scale = static_cast<float>(o.ui_scale);
  req.frame = p.frame;
  req.trajectory_stride = p.stride;
  req.backend = o.backend;
  req.device = backend.device();
  req.command_line = sample_command_line(rs, s.model.path, o.backend, o.out,
                                         run_options(o, s.pic, s.camera_given, p.table.steps_offset, p.spacing, p.stride));
  req.step_t.assign(p.table.t.begin(), p.table.t.end());
  req.field = [&](const float* pts, int k, int t, bool x0, float* out) { backend.eps_field(s.model, pts, k, t, x0, out); };
  req.extra = {{"steps_offset", p.table.steps_offset}, {"evaluations", p.table.evaluations(0, p.steps)},
               {"timings", {{"sample_ms", s.sample_ms}}}};
  // Input files by absolute path, so that --config of the sidecar works from any folder.
  if (!o.noise.empty()) put_path(req.extra, "noise", absolute_path(o.noise));
  if (!o.scheduler_config.empty()) put_path(req.extra, "scheduler_config", absolute_path(o.scheduler_config));
  req.frame_numbers = p.frames;
  req.table = &p.table;
  // The request's own family values (the family and each frame's level come from the table): what --config reads.
  if (!p.request.sigmas.empty()) req.extra["sigmas"] = p.request.sigmas;
  if (p.request.flow_shift) req.extra["flow_shift"] = *p.request.flow_shift;
  if (p.request.flow_mu) req.extra["flow_mu"] = *p.request.flow_mu;
  req.png_text = !o.no_png_text;
  const std::string grid_note = image_grid_note(s.model, p.n, s.pic.view.image_grid_cols);
  if (!grid_note.empty()) std::fprintf(stderr, "%s", grid_note.c_str());
  if (!o.png.empty()) {
    SamplePngFiles png = render_sample_png(req);
    files.add(o.png, "--png", std::move(png.png));
    files.add(png_sidecar_path(o.png), "--png", std::move(png.sidecar));
    wrote += ", " + o.png + " (" + std::to_string(s.pic.export_width) + "x" + std::to_string(s.pic.export_height) + ")";
  }
  for (const auto& [arg, path] : {std::pair<const char*, std::string>{"--svg", o.svg}, {"--pdf", o.pdf}}) {
    if (path.empty()) continue;
    SampleFigureFiles figure = render_sample_figure(req, figure_format_of(arg, path), path, arg);
    files.add(path, arg, std::move(figure.figure));
    files.add(video_sidecar_path(path), arg, std::move(figure.sidecar));
    wrote += ", " + path;
  }
  if (o.video.empty()) return -1;
  // The video (ffmpeg writes it through its own temporary file) before the other outputs, so that a failed
  // encode leaves nothing written.
  const auto v0 = std::chrono::steady_clock::now();
  Progress frames_done("video frames", video.last - video.first + 1);
  SampleVideo v = video;
  v.on_frame = [&](int done) { frames_done.update(done); };
  render_sample_video(req, v);
  frames_done.clear();
  wrote += ", " + o.video;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - v0).count();
}
#endif

// --grid: the sample command's flags as the grid's base request (cli/grid_sample.h); the flags a grid cannot honour
// are refused there.
void run_grid_of(SampleOptions& o) {
  GridSampleArgs a;
  a.spec = o.grid, a.model = o.model, a.backend = o.backend, a.out = o.out, a.png = o.png, a.size = o.size;
  a.metrics_csv = o.metrics_csv, a.metrics_json = o.metrics_json, a.png_text = !o.no_png_text;
  a.video = o.video, a.fps = o.fps, a.video_lossless = o.video_lossless, a.video_yuv420 = o.video_yuv420;
  for (const char* f : {"--config", "--trajectory", "--trajectory-stride", "--video-frames", "--noise", "--frame",
                        "--scheduler-config", "--write-scheduler-config", "--sigmas", "--prediction-type",
                        "--flow-shift", "--flow-mu", "--camera-aspect", "--ui-scale", "--svg", "--pdf"})
    if (o.given(f)) a.refused.push_back(f);
  for (const auto& [key, text] : o.view_flags)
    if (o.given(setting_flag(key))) a.refused.push_back(setting_flag(key));
  note_ignored_options(o);
  if (o.given("--grid-position")) a.position = o.grid_position;
  a.align = o.grid_align;
  if (o.given("--grid-align") && !o.given("--grid-position"))
    std::fprintf(stderr, "note: --grid-align has no effect without --grid-position\n");
  a.base = sample_request(o, 0);
  run_grid_sample(a);
}

void run_sample(SampleOptions options) {
  if (options.given("--grid")) return run_grid_of(options);  // an empty spec too: the parser refuses it
  const StopSignalScope stop;  // SIGINT / SIGTERM stop the run cleanly: exit 130 / 143, nothing written
  // Everything is checked before any computation; outputs are written only at the end.
  SampleRun s;
  s.o = std::move(options);
  const SampleOptions& o = s.o;
  prepare_options(s.o, s.pic, &s.camera_given, &s.size_given);
  plan_sample(s);
  const std::string config_text = check_outputs(s);
  auto backend = make_backend(o.backend);
  const auto t0 = std::chrono::steady_clock::now();
  run_steps_of(s, *backend);
  const RunPlan& p = s.plan;
  const int64_t n = p.n, dim = s.model.net.dim, n_frames = static_cast<int64_t>(p.frames.size());
  // No output with a non-finite value, and all outputs or none (SEMANTICS §9).
  const std::vector<float>& x_out = s.x_frame.empty() ? s.x : s.x_frame;
  check_output_finite("--out", x_out.data(), 1, n, dim);
  if (!s.traj.empty())
    check_output_finite(o.trajectory.empty() ? "--png (its frames)" : "--trajectory", s.traj.data(), n_frames, n, dim);
  AtomicFileSet files;
  add_npy_float(files, o.out, {n, dim}, x_out.data(), "--out");
  std::string wrote = o.out + " " + shape_text({n, dim}) +
                      (p.frame >= 0 && p.frame < p.steps ? " at frame " + std::to_string(p.frame) : "");
  if (!o.trajectory.empty()) {
    add_npy_float(files, o.trajectory, {n_frames, n, dim}, s.traj.data(), "--trajectory");
    wrote += ", " + o.trajectory + " " + shape_text({n_frames, n, dim});
  }
  double video_s = -1;  // the encode's own time, for the final line
#ifdef DIFFSCOPE_SAMPLE_PNG
  video_s = add_pictures(s, *backend, files, wrote);
#endif
  if (!config_text.empty()) {
    files.add(o.write_scheduler_config, "--write-scheduler-config", config_text);
    wrote += ", " + o.write_scheduler_config;
  }
  throw_if_stopped();  // SIGINT / SIGTERM while the pictures were drawn: nothing written
  files.commit();
  // The whole time, pictures and the video's encode included; the parts when a video took some of it.
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string parts = video_s < 0 ? "" : "; sampling " + duration_text(s.sample_ms / 1e3) + ", video " +
                                                   duration_text(video_s);
  std::fprintf(stderr, "wrote %s in %s (%s, %s, %s%s)\n", wrote.c_str(), duration_text(total_s).c_str(),
               count_noun(p.steps, "step").c_str(), sampler_name(p.request.sampler), backend->name().c_str(),
               parts.c_str());
}

}  // namespace

namespace {
// The comparison grid's options of `sample` (cli/grid_sample.h, SEMANTICS §10).
void add_grid_options(CLI::App* sub, SampleOptions& o) {
  sub->add_option("--grid", o.grid, "a comparison grid: rows=AXIS:V1,V2,... cols=AXIS:V1,... (axes sampler, steps, "
                                    "spacing, eta, precision, model, t_start, guidance_scale; <= 8 values each) or @spec.json / "
                                    "@grid.png; --out holds (rows, cols, n, dim) (SEMANTICS §10)");
  sub->add_option("--grid-position", o.grid_position, "with --grid: --out and --png hold each cell's state at this "
                                                       "shared timeline position, in [0, 1] (default the final samples)");
  sub->add_option("--grid-align", o.grid_align, "with --grid-position: align cells of different step counts by "
                                                 "noise level (noise) or by step (step)")
      ->check(CLI::IsMember({"noise", "step"}))
      ->capture_default_str();
  sub->add_option("--metrics-csv", o.metrics_csv, "with --grid: every cell's metrics as CSV");
  sub->add_option("--metrics-json", o.metrics_json, "with --grid: the spec and every cell's metrics as JSON");
}

// `sample`'s subcommand and its options on `app`.
std::shared_ptr<SampleOptions> add_sample_command(CLI::App& app) {
  auto o = std::make_shared<SampleOptions>();
  CLI::App* sub = app.add_subcommand("sample", "sample from a model with any solver and spacing (SEMANTICS §3)");
  sub->add_option("--model", o->model, "bundled model name (moons, digits8x8, ...) or .safetensors path (required "
                                       "unless --config names one)");
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
  sub->add_option("--t-start", o->t_start, "start timestep, in [0, T-1] (default: T-1 of the model, or its last usable t); "
                                           "on a flow, edm or --sigmas list the index of the first step, in [0, N-1]");
  sub->add_option("--seed", o->seed_text, "Philox seed, an integer in [0, 2^64-1] (SEMANTICS §7)")
      ->capture_default_str();
  sub->add_flag("--from-data", o->from_data, "start from the model's data_samples noised to t_start");
  add_family_options(sub, o->family, true);
  add_guidance_options(sub, o->guidance);
  sub->add_option("--noise", o->noise, "start from this (n, dim) .npy instead of the seed's noise (frame 0 of a "
                                       "--trajectory is one); step noise still comes from --seed");
  sub->add_option("--out", o->out, "output samples: (n, dim) float32 .npy")->required();
  sub->add_option("--trajectory", o->trajectory, "optional trajectory: (frames, n, dim) float32 .npy");
  sub->add_option("--trajectory-stride", o->stride, "keep frames 0, s, 2s, ..., --frame's and the last")->capture_default_str();
  sub->add_option("--frame", o->frame, "the frame (step) whose state --out holds and --png draws (default the last)");
  sub->add_option("--backend", o->backend, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  sub->add_option("--precision", o->precision, "fp32 | tf32 | bf16 | fp16 (tf32/bf16/fp16 need --backend cuda)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16", "fp16"}))
      ->capture_default_str();
  add_grid_options(sub, *o);
  sub->add_option("--config", o->config, "run a sidecar (.json, or an exported .png carrying one): its settings and "
                                         "picture values; flags given as well win; unknown keys are named in a note");
#ifdef DIFFSCOPE_SAMPLE_PNG
  sub->add_option("--png", o->png, "also render the run headless into this PNG (with a .json sidecar)");
  sub->add_option("--size", o->size, "PNG and video size WxH (made even for .mp4); the settings key export_size")
      ->capture_default_str();
  sub->add_option("--camera-aspect", o->camera_aspect, "width/height of the pane the camera was set or fitted in (a "
                                                       "GUI sidecar's, e.g. the window's 2D pane; default: the "
                                                       "picture's own pane); the picture shows at least that pane");
  sub->add_option("--ui-scale", o->ui_scale, "UI content scale: points are point_size x this many pixels, in [0.25, 8]")
      ->capture_default_str();
  for (const SettingField& f : setting_fields())  // every view setting that changes a pixel (session/settings_schema.h)
    if (is_picture_setting(f))
      sub->add_option(setting_flag(f.key), o->view_flags[f.key],
                      std::string("setting '") + f.key + "'" + (f.lo < f.hi ? ", in [" + num_text(f.lo) + ", " + num_text(f.hi) + "]" : "") +
                          " (SEMANTICS §6 Settings keys; as --set " + f.key + "=... in the app)");
  sub->add_option("--video", o->video, "also render every kept frame into a video: .mp4 (H.264), .gif or .webp "
                                       "(needs ffmpeg: without it exit 3 at once, nothing written)");
  sub->add_option("--svg", o->svg, "also write the run as a vector figure: SVG with axes, legend and caption "
                                   "(SEMANTICS §6 Figures; above 20,000 samples or 60,000 discs and trail "
                                   "segments the plot is an embedded raster)");
  sub->add_option("--pdf", o->pdf, "also write the run as a vector figure: PDF, as --svg");
  sub->add_flag("--no-png-text", o->no_png_text, "do not put the sidecar JSON into the PNG (iTXt chunk 'diffscope')");
  sub->add_option("--fps", o->fps, "video frames per second, in [1, 240]")->capture_default_str();
  sub->add_flag("--video-lossless", o->video_lossless, "exact video: .mp4 as libx264rgb -qp 0, .webp lossless");
  sub->add_flag("--video-yuv420", o->video_yuv420, ".mp4 as yuv420p, which every player plays (the default yuv444p "
                                                  "keeps the colour of small points; browsers and QuickTime mostly lack it)");
  sub->add_option("--video-frames", o->video_frames, "video of the frames FIRST:LAST (steps, inclusive; default all)");
#endif
  o->sub = sub;
  return o;
}
}  // namespace

void register_sample(CLI::App& app, Action& action) {
  std::shared_ptr<SampleOptions> o = add_sample_command(app);
  o->sub->callback([o, &action] { action = [o] { run_sample(*o); }; });
}

SampleRequest sample_request_of(const std::vector<std::string>& args) {
  CLI::App app;
  std::shared_ptr<SampleOptions> o = add_sample_command(app);
  std::vector<const char*> argv{"diffscope", "sample"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  app.parse(static_cast<int>(argv.size()), argv.data());
  SampleRequest r = sample_request(*o, AppSettings{}.sampling.memory_budget_mb);
  r.arg_name = [o](Arg a) { return cli_arg_name(*o, a); };
  return r;
}

}  // namespace diffscope::cli
