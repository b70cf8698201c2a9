// info_command.cpp — `diffscope info --model M`: what a model file holds (dims, hidden, T, schedule source,
// metadata, data samples, ignored tensors, warnings), as text or JSON.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "core/finite_checks.h"
#include "core/json_path.h"
#include "core/model.h"
#include "core/model_paths.h"

namespace diffscope::cli {
namespace {

struct InfoOptions {
  std::string model;
  bool json = false;
};

void print_text(const DiffusionModel& m, std::ostream& os) {
  const Schedule& s = m.schedule;
  os << "model:           " << m.path << "\n";
  os << "dim:             " << m.net.dim << "\n";
  os << "hidden:          " << m.net.hidden << "\n";
  if (m.mixture) os << "kind:            gaussian_mixture, K = " << m.mixture->K << " (exact eps, SEMANTICS §6)\n";
  os << "T:               " << s.T << "\n";
  os << "schedule:        " << s.source << "\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "betas[0] = %.6g, betas[T-1] = %.6g, alphas_cumprod[T-1] = %.6g", s.betas.front(),
                s.betas.back(), s.alphas_cumprod.back());
  os << "                 " << buf << "\n";
  if (const int zero = first_zero_alphas_cumprod(s); zero >= 0)
    os << "                 alphas_cumprod underflows to 0 in float64 from t = " << zero << "\n";
  if (const int bad = first_unusable_t(s); bad >= 0 && s.alphas_cumprod[bad] > 0.0)
    os << "                 sigma = sqrt((1 - alphas_cumprod) / alphas_cumprod) overflows float32 from t = " << bad
       << "\n";
  if (const int bad = first_unusable_t(s); bad >= 0)
    os << "                 runs that visit t >= " << bad << " are refused (SEMANTICS §3)\n";
  os << "data_samples:    " << m.n_data << "\n";
  os << "metadata:        " << (m.metadata.empty() ? "(none)" : "") << "\n";
  for (const auto& [k, v] : m.metadata) os << "  " << k << " = " << v << "\n";
  os << "ignored tensors: " << (m.ignored_tensors.empty() ? "(none)" : "") << "\n";
  for (const auto& t : m.ignored_tensors) os << "  " << t << "\n";
  os << "warnings:        " << (m.warnings.empty() ? "(none)" : "") << "\n";
  for (const auto& w : m.warnings) os << "  " << w << "\n";
}

void print_json(const DiffusionModel& m, std::ostream& os) {
  nlohmann::json j;
  put_path(j, "model", m.path);  // any file name, losslessly (SEMANTICS §6)
  j["dim"] = m.net.dim;
  j["hidden"] = m.net.hidden;
  if (m.mixture) j["kind"] = "gaussian_mixture", j["components"] = m.mixture->K;
  j["T"] = m.schedule.T;
  j["schedule"] = m.schedule.source;
  j["alphas_cumprod_last"] = m.schedule.alphas_cumprod.back();
  const int bad = first_unusable_t(m.schedule);  // runs must stay below it (SEMANTICS §3)
  j["t_start_max_usable"] = bad >= 0 ? bad - 1 : m.schedule.T - 1;
  j["data_samples"] = m.n_data;
  j["metadata"] = m.metadata;
  j["ignored_tensors"] = m.ignored_tensors;
  j["warnings"] = m.warnings;
  os << j.dump(2) << "\n";
}

}  // namespace

void register_info(CLI::App& app, Action& action) {
  auto opts = std::make_shared<InfoOptions>();
  CLI::App* sub = app.add_subcommand("info", "Describe a model file: dims, hidden, T, schedule, metadata, warnings");
  sub->add_option("--model", opts->model, "bundled model name (moons, digits8x8, ...) or .safetensors path")->required();
  sub->add_flag("--json", opts->json, "Print JSON instead of text");
  sub->callback([opts, &action]() {
    action = [opts]() {
      const DiffusionModel m = load_diffusion_model(resolve_model_arg("--model", opts->model));
      if (opts->json)
        print_json(m, std::cout);
      else
        print_text(m, std::cout);
    };
  });
}

}  // namespace diffscope::cli
