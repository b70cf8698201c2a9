// persisted_ranges.h — the range of every persisted numeric setting (settings.json), read from the settings
// schema (session/settings_schema.h).
#pragma once
#include <string>
#include <vector>

namespace diffscope {

// The range of every persisted numeric setting (settings.json, session/settings_io.h), by "section.key" as the
// file names it. Loading clamps each value into its range (a value that is not a finite number keeps the
// default), so a file edited by hand or written by another version always renders and never stalls a loop
// over view geometry. Sampling values are clamped again against the model on use (diffusion/input_checks.h:
// t_start_range, ...).
struct PersistedRange {
  const char* name;  // "view.cam_x"
  double lo, hi;
};
// The whole table; every numeric field that to_json(AppSettings) writes has exactly one entry (tested).
const std::vector<PersistedRange>& persisted_ranges();
// The entry for `name`, or nullptr.
const PersistedRange* find_persisted_range(const std::string& name);

}  // namespace diffscope
