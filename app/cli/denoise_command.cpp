// denoise_command.cpp — `diffscope denoise`: the fused multi-step ddpm-mean call with per-row t_start
// (SEMANTICS §4) on .npy inputs.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <memory>
#include <string>

#include "base/errors.h"
#include "base/ranges.h"
#include "cli/cli.h"
#include "cli/cli_util.h"
#include "cli/family_options.h"
#include "diffusion/input_checks.h"
#include "diffusion/step_table.h"
#include "formats/npy.h"
#include "model/model.h"
#include "platform/atomic_write.h"
#include "platform/model_paths.h"
#include "platform/output_files.h"
#include "run/finite_checks.h"
#include "run/guidance_checks.h"

namespace diffscope::cli {
namespace {

struct DenoiseOptions {
  std::string model, x, t_start, out, trajectory;
  int steps = 0;
  std::string backend = "cpu", precision = "fp32";
  FamilyOptions family;  // --prediction-type
};

void run_denoise(const DenoiseOptions& o) {
  // Everything is checked before any computation; outputs are written only at the end.
  const Precision precision = parse_precision(o.precision);
  check_backend_precision(o.backend, precision);
  check_output_path("--out", o.out);
  if (!o.trajectory.empty()) check_output_path("--trajectory", o.trajectory);
  const std::optional<Family> prediction_type = parse_prediction_type_flag(o.family.prediction_type);
  DiffusionModel model = load_diffusion_model(resolve_model_arg("--model", o.model));
  check_backend_classes(model, o.backend == "cuda");
  if (prediction_type) {  // the family of a file that names none (SEMANTICS §2): x is that family's state
    std::string note;
    try {
      model.family = family_with_prediction_type(model, *prediction_type, &note);
    } catch (const ArgumentError& e) {
      throw InvalidInput(e.message(cli_flag));
    }
    if (!note.empty()) std::fprintf(stderr, "note: %s", note.c_str());
  }
  Matrix2D x = load_matrix(o.x, "--x");
  const std::vector<int64_t> t_start = load_int_vector(o.t_start, "--t-start");
  validate_denoise_inputs(model, x.data.data(), x.rows, x.cols, t_start.data(),
                          static_cast<int64_t>(t_start.size()), o.steps);
  if (x.rows > INT32_MAX) throw InvalidInput("--x has " + std::to_string(x.rows) + " rows; valid: at most 2^31-1");
  const int B = static_cast<int>(x.rows), dim = model.net.dim, S = o.steps;
  // SEMANTICS §3 "Finite coefficients": the t-indexed table is read at t = 0 .. max(t_start).
  const int64_t t_max = *std::max_element(t_start.begin(), t_start.end());
  check_run_coefficients(model.schedule, build_t_indexed_ddpm_mean(model.schedule, model.family), static_cast<int>(t_max) + 1);
  // Sizes in 64 bits: S + 1 frames overflow int at S = 2^31 - 1 (SEMANTICS §9: refuse before any work what
  // cannot be allocated or written).
  const std::vector<int64_t> out_shape{B, dim}, traj_shape{static_cast<int64_t>(S) + 1, B, dim};
  std::vector<OutputFile> outputs{{"--out", o.out, npy_file_bytes(out_shape, 4)}};
  if (!o.trajectory.empty()) outputs.push_back({"--trajectory", o.trajectory, npy_file_bytes(traj_shape, 4)});
  check_distinct_outputs(outputs);
  check_output_space(outputs);

  std::vector<float> traj;
  if (!o.trajectory.empty()) traj = allocate_floats("--trajectory", (static_cast<double>(S) + 1) * B * dim);
  auto backend = make_backend(o.backend);

  Progress progress("denoise rows", B);
  if (!progress.terminal() || !traj.empty()) {
    backend->denoise(model, x.data.data(), t_start.data(), B, S, traj.empty() ? nullptr : traj.data(), precision);
  } else {
    // Rows are independent: on a terminal, run them in chunks to show progress.
    const int chunk = std::max(4096, B / 50);
    for (int r0 = 0; r0 < B; r0 += chunk) {
      const int n = std::min(chunk, B - r0);
      backend->denoise(model, x.data.data() + static_cast<int64_t>(r0) * dim, t_start.data() + r0, n, S, nullptr,
                       precision);
      progress.update(r0 + n);
    }
  }

  // No output with a non-finite value, and both outputs or none (SEMANTICS §9).
  check_output_finite("--out", x.data.data(), 1, B, dim);
  if (!traj.empty()) check_output_finite("--trajectory", traj.data(), traj_shape[0], B, dim);
  AtomicFileSet files;
  add_npy_float(files, o.out, out_shape, x.data.data(), "--out");
  if (!traj.empty()) add_npy_float(files, o.trajectory, traj_shape, traj.data(), "--trajectory");
  files.commit();
}

}  // namespace

void register_denoise(CLI::App& app, Action& action) {
  auto o = std::make_shared<DenoiseOptions>();
  CLI::App* sub = app.add_subcommand(
      "denoise", "S ddpm-mean steps from per-row t_start, the fused reference call (SEMANTICS §4)");
  sub->add_option("--model", o->model, "bundled model name (moons, digits8x8, ...) or .safetensors path")->required();
  sub->add_option("--x", o->x, "input states x: (B, dim) float32/float64 .npy")->required();
  sub->add_option("--t-start", o->t_start, "per-row start timesteps: (B,) int64/int32 .npy, each in [0, T-1]")
      ->required();
  sub->add_option("--steps", o->steps, "number of steps S >= 1 (rows reaching t = 0 early freeze)")->required();
  sub->add_option("--out", o->out, "output x: (B, dim) float32 .npy")->required();
  sub->add_option("--trajectory", o->trajectory, "optional trajectory: (S+1, B, dim) float32 .npy");
  add_family_options(sub, o->family, false);
  sub->add_option("--backend", o->backend, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  sub->add_option("--precision", o->precision, "fp32 | tf32 | bf16 | fp16 (tf32/bf16/fp16 need --backend cuda)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16", "fp16"}))
      ->capture_default_str();
  sub->callback([o, &action] { action = [o] { run_denoise(*o); }; });
}

}  // namespace diffscope::cli
