// settings_keys.h — settings by name for scripts and `--set k=v`: the settings schema's keys and aliases
// (session/settings_schema.h). Named values refuse what is out of range (base/ranges.h, SEMANTICS §3); the
// settings file clamps.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "diffusion/scheduler_config.h"
#include "model/model.h"
#include "session/settings_io.h"

namespace diffscope {

// The keys apply_setting knows, as "steps, t_start, n, ..." (for messages).
std::string setting_keys();
// The schema's key for `key` or one of its aliases ("trail" -> "trail_frames"); `key` itself when unknown.
std::string canonical_setting_key(const std::string& key);

// Sets one value by its schema key or an older alias (session/settings_schema.h set_setting). `arg` names the
// value in messages (the front end's spelling: the CLI's --set trail_frames, --steps; "" = the key); an alias
// adds a line to `note` when given.
// Throws InvalidInput for an unknown key (listing the keys), an unparsable value, or a value outside its fixed
// range (base/ranges.h). steps, t_start and n depend on the model and the backend: check_model_ranges checks
// them once both are known.
void apply_setting(AppSettings& s, const std::string& key, const std::string& value, const std::string& arg = "",
                   std::string* note = nullptr);

// Refuses (InvalidInput, naming `arg` and the range) each of the given (key, arg) pairs among steps, t_start
// and n whose value in `s` is outside its range for this schedule and backend (SEMANTICS §3). Keys may be aliases.
void check_model_ranges(const SamplingSettings& s, const Schedule& schedule, bool gpu,
                        const std::vector<std::pair<std::string, std::string>>& given);

// The same for a run of `model`: on a list of levels (flow, edm:
// session/field_view.h) steps in [1, T] and t_start, an index, in [0, steps - 1]; else the schedule's ranges.
void check_model_ranges(const SamplingSettings& s, const DiffusionModel& model, bool gpu,
                        const std::vector<std::pair<std::string, std::string>>& given);

}  // namespace diffscope
