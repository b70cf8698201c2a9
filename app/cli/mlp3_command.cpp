// mlp3_command.cpp — `diffscope mlp3`: the fused bias-free 3-layer MLP (SEMANTICS §5) on a .npy input.
#include <CLI/CLI.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "base/errors.h"
#include "cli/cli.h"
#include "cli/cli_util.h"
#include "formats/npy.h"
#include "model/model.h"
#include "platform/output_files.h"
#include "run/finite_checks.h"

namespace diffscope::cli {
namespace {

struct Mlp3Options {
  std::string weights, x, out;
  std::string backend = "cpu", precision = "fp32";
};

void run_mlp3(const Mlp3Options& o) {
  const Precision precision = parse_precision(o.precision);
  check_backend_precision(o.backend, precision);
  check_output_path("--out", o.out);
  const Mlp3Weights w = load_mlp3(o.weights);
  const Matrix2D x = load_matrix(o.x, "--x");
  if (x.cols != w.d0)
    throw InvalidInput("--x has width " + std::to_string(x.cols) + " but '" + o.weights + "' takes " +
                       std::to_string(w.d0) + " inputs; valid: x of shape (B, " + std::to_string(w.d0) + ")");
  if (x.rows > INT32_MAX) throw InvalidInput("--x has " + std::to_string(x.rows) + " rows; valid: at most 2^31-1");
  check_finite("--x", x);
  const int B = static_cast<int>(x.rows);
  check_output_space({{"--out", o.out, npy_file_bytes({B, w.d3}, 4)}});
  std::vector<float> y = allocate_floats("--out", static_cast<double>(B) * w.d3);
  auto backend = make_backend(o.backend);
  backend->mlp3(w, x.data.data(), B, y.data(), precision);
  check_output_finite("--out", y.data(), 1, B, w.d3);  // SEMANTICS §9: no non-finite output
  write_npy_float(o.out, {B, w.d3}, y.data(), "--out");
}

}  // namespace

void register_mlp3(CLI::App& app, Action& action) {
  auto o = std::make_shared<Mlp3Options>();
  CLI::App* sub = app.add_subcommand("mlp3", "the fused bias-free 3-layer MLP y = relu(relu(x W1) W2) W3 (SEMANTICS §5)");
  sub->add_option("--weights", o->weights, "weights file (.safetensors with fc1/fc2/fc3.weight, no bias)")->required();
  sub->add_option("--x", o->x, "input: (B, d0) float32/float64 .npy")->required();
  sub->add_option("--out", o->out, "output: (B, d3) float32 .npy")->required();
  sub->add_option("--backend", o->backend, "cpu | cuda")->check(CLI::IsMember({"cpu", "cuda"}))->capture_default_str();
  sub->add_option("--precision", o->precision, "fp32 | tf32 | bf16 | fp16 (tf32/bf16/fp16 need --backend cuda)")
      ->check(CLI::IsMember({"fp32", "tf32", "bf16", "fp16"}))
      ->capture_default_str();
  sub->callback([o, &action] { action = [o] { run_mlp3(*o); }; });
}

}  // namespace diffscope::cli
