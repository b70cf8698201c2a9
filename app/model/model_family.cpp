// model_family.cpp — the table of __metadata__ keys that change the maths of a model (see model_family.h).
// Supporting a new family means moving its values from `unsupported` to `understood` here (and implementing it).
#include "model/model_family.h"

#include <algorithm>
#include <cctype>

#include "base/errors.h"

namespace diffscope {
namespace {

std::string join(const std::vector<const char*>& values) {
  std::string s;
  for (const char* v : values) s += (s.empty() ? "" : ", ") + std::string(v);
  return s;
}

bool contains(const std::vector<const char*>& values, const std::string& v) {
  return std::any_of(values.begin(), values.end(), [&](const char* x) { return v == x; });
}

}  // namespace

const std::vector<ParameterizationKey>& parameterization_keys() {
  // Sources of the value names: diffusers' schedulers (prediction_type), CompVis latent diffusion and Stability's
  // generative-models (parameterization), lucidrains' denoising-diffusion-pytorch (objective), ComfyUI's
  // ModelType (model_type), Karras et al. 2022 / EDM (sigma_data, c_noise).
  static const std::vector<ParameterizationKey> kKeys = {
      {"prediction_type", "what the network predicts", {"epsilon"}, {"sample", "v_prediction", "flow_prediction", "flow"}},
      {"parameterization", "what the network predicts", {"eps"}, {"x0", "v"}},
      {"objective", "what the network was trained to predict", {"pred_noise"}, {"pred_x0", "pred_v"}},
      {"target", "what the network was trained to predict", {"eps", "epsilon", "noise"},
       {"x0", "sample", "v", "velocity", "v_prediction", "flow"}},
      {"model_type", "the model family", {"EPS", "eps", "epsilon"},
       {"V_PREDICTION", "V_PREDICTION_EDM", "V_PREDICTION_CONTINUOUS", "EDM", "FLOW", "FLUX", "STABLE_CASCADE"}},
      {"sigma_data", "EDM preconditioning: the network's input and output scaled by sigma_data", {}, {}},
      {"time_input", "what the network reads as time", {"t/T"}, {"t", "sigma", "log_sigma", "c_noise"}},
  };
  return kKeys;
}

void check_parameterization(const std::map<std::string, std::string>& metadata, const std::string& label) {
  // A key spelt another way (another case, '-' or no separator: "Prediction_Type", "predictionType") would be
  // ignored by the table below; it says the same, so it is refused naming the spelling read.
  const auto folded = [](const std::string& key) {
    std::string f;
    for (char c : key)
      if (c != '_' && c != '-' && c != ' ') f += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return f;
  };
  for (const auto& [key, value] : metadata)
    for (const ParameterizationKey& k : parameterization_keys())
      if (key != k.key && folded(key) == folded(k.key))
        throw InvalidInput(label + ": __metadata__ '" + key + "' = '" + value + "' reads as '" + k.key + "' (" +
                           k.meaning + ") spelt another way; valid: the key spelt '" + k.key + "'");
  for (const ParameterizationKey& k : parameterization_keys()) {
    const auto it = metadata.find(k.key);
    if (it == metadata.end() || contains(k.understood, it->second)) continue;
    const std::string head = label + ": __metadata__ '" + k.key + "' = '" + it->second + "' (" + k.meaning + ")";
    const std::string supported =
        k.understood.empty() ? std::string("supported: no ") + k.key + " (diffscope's network takes x and t / T as they are, "
                                                                        "SEMANTICS §2)"
                             : "supported: " + join(k.understood) + " (an eps-predicting network fed t / T, SEMANTICS §2)";
    if (contains(k.unsupported, it->second) || k.understood.empty())
      throw InvalidInput(head + " is not supported; " + supported);
    throw InvalidInput(head + " is not a known value (known: " + join(k.understood) +
                       (k.unsupported.empty() ? "" : ", " + join(k.unsupported)) + "); " + supported);
  }
}

}  // namespace diffscope
