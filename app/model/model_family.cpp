// model_family.cpp — the table of __metadata__ keys that change the maths of a model (see model_family.h).
// Supporting a new family means moving its values from `unsupported` to `understood` here (and implementing it).
#include "model/model_family.h"

#include <algorithm>
#include <cctype>

#include "base/errors.h"
#include "model/family.h"

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
  // prediction_type, time_input, sigma_data and the other family keys are read by family_from_metadata
  // (model/family.h); the keys below are other codebases' names for the same thing: their eps value is understood,
  // any other is refused, naming prediction_type, the one key diffscope reads.
  static const std::vector<ParameterizationKey> kKeys = {
      {"parameterization", "what the network predicts", {"eps"}, {"x0", "v"}},
      {"objective", "what the network was trained to predict", {"pred_noise"}, {"pred_x0", "pred_v"}},
      {"target", "what the network was trained to predict", {"eps", "epsilon", "noise"},
       {"x0", "sample", "v", "velocity", "v_prediction", "flow"}},
      {"model_type", "the model family", {"EPS", "eps", "epsilon"},
       {"V_PREDICTION", "V_PREDICTION_EDM", "V_PREDICTION_CONTINUOUS", "EDM", "FLOW", "FLUX", "STABLE_CASCADE"}},
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
  std::vector<std::pair<const char*, const char*>> spelt;  // (key, meaning) of every key that changes the maths
  for (const ParameterizationKey& k : parameterization_keys()) spelt.emplace_back(k.key, k.meaning);
  for (const char* k : {"prediction_type", "time_input", "sigma_data", "edm_prediction_type", "flow_velocity"})
    spelt.emplace_back(k, "a model family key, SEMANTICS §2");
  for (const auto& [key, value] : metadata)
    for (const auto& [k, meaning] : spelt)
      if (key != k && folded(key) == folded(k))
        throw InvalidInput(label + ": __metadata__ '" + key + "' = '" + value + "' reads as '" + k + "' (" + meaning +
                           ") spelt another way; valid: the key spelt '" + k + "'");
  for (const ParameterizationKey& k : parameterization_keys()) {
    const auto it = metadata.find(k.key);
    if (it == metadata.end() || contains(k.understood, it->second)) continue;
    const std::string head = label + ": __metadata__ '" + k.key + "' = '" + it->second + "' (" + k.meaning + ")";
    const std::string supported =
        k.understood.empty() ? std::string("supported: no ") + k.key + " (diffscope's network takes x and t / T as they are, "
                                                                        "SEMANTICS §2)"
                             : "supported: " + join(k.understood) + " (an eps-predicting network fed t / T, SEMANTICS §2)";
    if (contains(k.unsupported, it->second) || k.understood.empty())
      throw InvalidInput(head + " is not read; say the family as prediction_type (" + family_choices() +
                         ", SEMANTICS §2); " + supported);
    throw InvalidInput(head + " is not a known value (known: " + join(k.understood) +
                       (k.unsupported.empty() ? "" : ", " + join(k.unsupported)) + "); " + supported);
  }
}

}  // namespace diffscope
