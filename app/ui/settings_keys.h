// settings_keys.h — settings by name ("steps", "t_start", "precision", ...), for scripts and `--set k=v`.
// Named values refuse what is out of range (core/ranges.h, SEMANTICS §3); the settings file clamps
// (core/settings_io.h, persisted_ranges).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/model.h"
#include "core/settings_io.h"

namespace diffscope::ui {

// The keys apply_setting knows, as "steps, t_start, n, ..." (for messages).
std::string setting_keys();

// Sets one value: steps, t_start, n, sampler, eta, seed, spl (steps per launch), precision, from_data,
// budget_mb, trail, field, field_x0, data, follow, speed, loop, steps_per_frame, grid_cols, point_size,
// point_alpha, vsync, show_ui, export_dir, export_size (WxH). `arg` names the value in messages ("--set trail",
// "--steps"; "" = the key). Throws InvalidInput for an unknown key (listing the keys), an unparsable value, or a
// value outside its fixed range (core/ranges.h). steps, t_start and n depend on the model and the backend:
// check_model_ranges checks them once both are known.
void apply_setting(AppSettings& s, const std::string& key, const std::string& value, const std::string& arg = "");

// Refuses (InvalidInput, naming `arg` and the range) each of the given (key, arg) pairs among steps, t_start
// and n whose value in `s` is outside its range for this schedule and backend (SEMANTICS §3).
void check_model_ranges(const SamplingSettings& s, const Schedule& schedule, bool gpu,
                        const std::vector<std::pair<std::string, std::string>>& given);

}  // namespace diffscope::ui
