// run_only.h — command-line values apply to one run: the settings file gets back what it held before, unless
// the user changed that value in the UI during the run.
#pragma once
#include <nlohmann/json.hpp>

namespace diffscope {

class RunOnlyValues {
 public:
  RunOnlyValues() = default;
  // `saved`: the settings as read (to_json form); `applied`: after the command line's values (and what they
  // caused, e.g. the loaded model's path). Every leaf that differs between them is run-only. With
  // `model_given`, /sampling/model_path is run-only too (a --model that names the saved model changes nothing).
  RunOnlyValues(const nlohmann::json& saved, const nlohmann::json& applied, bool model_given);
  // `now` with each run-only leaf that still has its applied value set back to its saved value.
  nlohmann::json to_persist(const nlohmann::json& now) const;

 private:
  nlohmann::json m_saved, m_applied;  // flattened ("/sampling/steps": 40): the run-only leaves only
};

}  // namespace diffscope
