// info_command.cpp — `diffscope info --model M`: what a model file holds (dims, hidden, T, schedule source,
// metadata, data samples, ignored tensors, warnings), as text or JSON.
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "cli/cli.h"
#include "formats/json_path.h"
#include "formats/safetensors.h"
#include "model/model.h"
#include "model/model_load.h"
#include "platform/model_paths.h"
#include "run/finite_checks.h"

namespace diffscope::cli {
namespace {

struct InfoOptions {
  std::string model;
  bool json = false;
};

// A number read off the file, or "?" where the file did not give it (0: see inspect_diffusion_model).
std::string known(int v) { return v > 0 ? std::to_string(v) : "?"; }

// The file names a prediction_type that was not read (its value is one of the problems): no convention to show.
bool family_unread(const DiffusionModel& m) { return !m.family_in_file && m.metadata.count("prediction_type") > 0; }

void print_schedule_text(const Schedule& s, std::ostream& os) {
  if (s.T == 0) return;
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
}

void print_text(const DiffusionModel& m, const SafetensorsFile& f, const std::vector<std::string>& problems,
                std::ostream& os) {
  const Schedule& s = m.schedule;
  os << "model:           " << m.path << "\n";
  os << "dim:             " << known(m.net.dim) << "\n";
  os << "hidden:          " << (m.mixture ? "0" : known(m.net.hidden)) << "\n";
  if (m.mixture) os << "kind:            gaussian_mixture, K = " << m.mixture->K << " (exact eps, SEMANTICS §6)\n";
  if (family_unread(m))
    os << "convention:      (not read: see problems)\n";
  else
    os << "convention:      " << convention_line(m.family)
       << (m.family_in_file ? "" : " (the file names no prediction_type: --prediction-type may set it)") << "\n";
  os << "T:               " << known(s.T) << "\n";
  os << "schedule:        " << (s.T > 0 ? s.source : "(unreadable)") << "\n";
  print_schedule_text(s, os);
  os << "data_samples:    " << m.n_data << "\n";
  os << "metadata:        " << (m.metadata.empty() ? "(none)" : "") << "\n";
  for (const auto& [k, v] : m.metadata) os << "  " << k << " = " << v << "\n";
  os << "ignored tensors: " << (m.ignored_tensors.empty() ? "(none)" : "") << "\n";
  for (const auto& t : m.ignored_tensors)
    os << "  " << t << ": " << f.find(t)->dtype << " " << format_shape(f.find(t)->shape) << "\n";
  os << "warnings:        " << (m.warnings.empty() ? "(none)" : "") << "\n";
  for (const auto& w : m.warnings) os << "  " << w << "\n";
  if (!problems.empty()) {
    os << "problems:        cannot be sampled\n";
    for (const auto& p : problems) os << "  " << p << "\n";
  }
}

// The model family's keys (SEMANTICS §2 "How a file says it"): prediction_type, prediction_type_in_file,
// time_input, convention, and sigma_data (edm) / flow_shift and flow_velocity (flow) where they apply; null where
// the family keys could not be read.
void put_family(const DiffusionModel& m, nlohmann::json& j) {
  if (family_unread(m)) {
    j["prediction_type"] = j["time_input"] = j["convention"] = nullptr;
    j["prediction_type_in_file"] = true;
    return;
  }
  const FamilyParams& f = m.family;
  j["prediction_type"] = family_name(f.family);
  j["prediction_type_in_file"] = m.family_in_file;
  j["time_input"] = time_input_name(f.time_input);
  j["convention"] = convention_line(f);
  if (f.family == Family::Edm) j["sigma_data"] = f.sigma_data, j["edm_prediction_type"] = f.edm_v ? "v_prediction" : "epsilon";
  if (f.family == Family::Flow) {
    j["flow_shift"] = f.flow_shift;
    j["flow_velocity"] = f.flow_velocity == FlowVelocity::EpsMinusX0 ? "eps_minus_x0" : "x0_minus_eps";
  }
}

void print_json(const DiffusionModel& m, const SafetensorsFile& f, const std::vector<std::string>& problems,
                std::ostream& os) {
  nlohmann::json j;
  put_path(j, "model", m.path);  // any file name, losslessly (SEMANTICS §6)
  j["dim"] = m.net.dim > 0 ? nlohmann::json(m.net.dim) : nlohmann::json(nullptr);
  j["hidden"] = m.net.hidden > 0 || m.mixture ? nlohmann::json(m.net.hidden) : nlohmann::json(nullptr);
  if (m.mixture) j["kind"] = "gaussian_mixture", j["components"] = m.mixture->K;
  if (m.schedule.T > 0) {
    j["T"] = m.schedule.T;
    j["schedule"] = m.schedule.source;
    j["alphas_cumprod_last"] = m.schedule.alphas_cumprod.back();
    j["t_start_max_usable"] = t_start_max_usable(m.schedule);  // runs must stay at or below it (SEMANTICS §3)
  } else {
    j["T"] = j["schedule"] = j["alphas_cumprod_last"] = j["t_start_max_usable"] = nullptr;
  }
  put_family(m, j);
  j["data_samples"] = m.n_data;
  j["metadata"] = m.metadata;
  j["ignored_tensors"] = m.ignored_tensors;
  j["ignored_tensor_info"] = nlohmann::json::array();  // their dtypes (any safetensors dtype, SEMANTICS §6) and shapes
  for (const auto& t : m.ignored_tensors)
    j["ignored_tensor_info"].push_back({{"name", t}, {"dtype", f.find(t)->dtype}, {"shape", f.find(t)->shape}});
  j["warnings"] = m.warnings;
  j["problems"] = problems;  // non-empty: the file cannot be sampled (exit 2)
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
      // What the file holds is shown even when it cannot be sampled; the problems then end in exit 2.
      const SafetensorsFile f = SafetensorsFile::open(resolve_model_arg("--model", opts->model));
      std::vector<std::string> problems;
      const DiffusionModel m = inspect_diffusion_model(f, problems);
      if (opts->json)
        print_json(m, f, problems, std::cout);
      else
        print_text(m, f, problems, std::cout);
      std::cout.flush();
      if (!problems.empty())
        throw InvalidInput(m.path + " cannot be sampled: " + problems.front() +
                           (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more problem(s) above)" : ""));
    };
  });
}

}  // namespace diffscope::cli
