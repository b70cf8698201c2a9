// settings_keys.cpp — named settings for scripts and the command line: the settings schema's rows
// (session/settings_schema.h); the model-dependent ranges are base/ranges.h's.
#include "session/settings_keys.h"

#include "base/ranges.h"
#include "diffusion/input_checks.h"
#include "session/field_view.h"
#include "session/settings_schema.h"

namespace diffscope {

std::string setting_keys() { return setting_key_list(); }

std::string canonical_setting_key(const std::string& key) {
  const SettingField* f = find_setting(key);
  return f ? f->key : key;
}

void apply_setting(AppSettings& st, const std::string& key, const std::string& val, const std::string& arg,
                   std::string* note) {
  set_setting(st, key, val, arg, note);
}

void check_model_ranges(const SamplingSettings& s, const Schedule& schedule, bool gpu,
                        const std::vector<std::pair<std::string, std::string>>& given) {
  for (const auto& [key, arg] : given) {
    const std::string k = canonical_setting_key(key);
    if (k == "t_start") check_range(arg, s.t_start, t_start_range(schedule));
    if (k == "n") check_range(arg, s.n_samples, sample_count_range(gpu));
  }
  for (const auto& [key, arg] : given)  // after t_start: the steps' range depends on it
    if (canonical_setting_key(key) == "steps") check_range(arg, s.steps, sample_steps_range(s.t_start));
}

void check_model_ranges(const SamplingSettings& s, const DiffusionModel& model, bool gpu,
                        const std::vector<std::pair<std::string, std::string>>& given) {
  const Family family = gui_family(model, s.prediction_type);
  if (!t_start_is_index(family)) return check_model_ranges(s, model.schedule, gpu, given);
  for (const auto& [key, arg] : given) {  // a list of levels: steps first, t_start an index into it
    const std::string k = canonical_setting_key(key);
    if (k == "steps") check_range(arg, s.steps, family_steps_range(model, family, 0));
    if (k == "n") check_range(arg, s.n_samples, sample_count_range(gpu));
  }
  for (const auto& [key, arg] : given)
    if (canonical_setting_key(key) == "t_start") check_range(arg, s.t_start, family_t_start_range(model, family, s.steps));
}

}  // namespace diffscope
