// run_only.cpp — see run_only.h. Leaves are compared in nlohmann's flattened form (JSON pointer -> value).
#include "session/run_only.h"

namespace diffscope {

RunOnlyValues::RunOnlyValues(const nlohmann::json& saved, const nlohmann::json& applied, bool model_given) {
  const nlohmann::json s = saved.flatten(), a = applied.flatten();
  m_saved = nlohmann::json::object();
  m_applied = nlohmann::json::object();
  for (auto it = a.begin(); it != a.end(); ++it) {
    const auto old = s.find(it.key());
    const bool model = model_given && it.key() == "/sampling/model_path";
    if (old != s.end() && (*old != *it || model)) {
      m_saved[it.key()] = *old;
      m_applied[it.key()] = *it;
    }
  }
}

nlohmann::json RunOnlyValues::to_persist(const nlohmann::json& now) const {
  if (m_applied.empty()) return now;
  nlohmann::json flat = now.flatten();
  for (auto it = m_applied.begin(); it != m_applied.end(); ++it) {
    const auto cur = flat.find(it.key());
    if (cur != flat.end() && *cur == *it) *cur = m_saved.at(it.key());
  }
  return flat.unflatten();
}

}  // namespace diffscope
