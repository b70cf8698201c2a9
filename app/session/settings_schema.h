// settings_schema.h — the ONE table of the app's settings (SEMANTICS §6 "Settings keys").
// Each row names a setting once: its key is the same in settings.json, a script's `set`, `--set KEY=VALUE`,
// the sidecar and the CLI (`--key-name`, '_' written '-'). Older names are accepted as aliases (with a note).
// Loading, saving, comparing, `set`/`--set`, the kept-settings message and the sidecar all walk this table,
// so a new setting is its row, its widget and the code that uses it.
#pragma once
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "session/settings_io.h"

namespace diffscope {

enum class SettingSection { Sampling, View, Export };
const char* section_name(SettingSection s);  // "sampling" | "view" | "export": the settings file's objects

struct SettingField {
  const char* key;
  SettingSection section;
  std::vector<std::string> aliases;  // older names: accepted on load, by `set` and `--set`, with a note
  bool pixel = false;                // changes a picture's pixels: written into every sidecar (SEMANTICS §6)
  bool persisted = true;             // false: a shorthand that sets other rows (camera, export_size)
  double lo = 0, hi = 0;             // numbers: the range the settings file clamps into (lo < hi)
  // The value as JSON (settings file, sidecar). Empty for shorthands.
  std::function<nlohmann::json(const AppSettings&)> get;
  // Strict: the value from text (scripts, --set, the CLI, restore). Throws InvalidInput naming `arg`, the
  // value and the valid range. Empty for settings that cannot be set by name (model_path: `model` does it).
  std::function<void(AppSettings&, const std::string& text, const std::string& arg)> parse;
  // Tolerant: the value from JSON (settings file): numbers clamped into [lo, hi], ill-typed values keep the
  // default; each adds a line to `note`.
  std::function<void(AppSettings&, const nlohmann::json& v, std::string* note)> load;
  // File names (model_path, export_dir): written with put_path, read with get_path (formats/json_path.h), so any
  // bytes survive; get/load are empty for these.
  std::function<std::string&(AppSettings&)> path;
};

// The whole table, in the order values are applied (camera rows before cam_auto).
const std::vector<SettingField>& setting_fields();
// The row of `key` or of one of its aliases; nullptr when none. `*alias` is set when `key` is an alias.
const SettingField* find_setting(const std::string& key, bool* alias = nullptr);
// "steps, t_start, n, ..." (canonical keys, for messages).
std::string setting_key_list();

// Sets one value by key or alias (strict, see SettingField::parse). `arg` names the value in messages
// (the caller's spelling: the CLI's --set trail_frames or --steps; "" = the key). An alias adds "'spl' is the old name of 'steps_per_launch'"
// to `note` when given. Throws InvalidInput for an unknown key (listing the keys) or a bad value.
void set_setting(AppSettings& s, const std::string& key, const std::string& text, const std::string& arg = "",
                 std::string* note = nullptr);

// The double whose shortest text is the float's (0.3f -> 0.3, not 0.30000001192092896): JSON numbers are
// doubles, so a float setting written through this reads as typed and reads back as the same float.
double float_as_typed(float v);

// A JSON value as the text set_setting reads: strings as they are, booleans 1/0, numbers so that they read
// back exactly, arrays joined with ',' (camera [x, y, half_h] -> "x,y,half_h"). Throws InvalidInput for objects.
std::string setting_text(const nlohmann::json& v);

// "W x H" parsing for every size argument (--size, export_size, scripts): "WxH" or "W,H", each in [lo, hi].
// Throws InvalidInput naming `arg`, the value and the range.
void parse_size_wxh(const std::string& arg, const std::string& text, int* w, int* h, int lo = 16, int hi = 16384);

// Settings file form: {"sampling": {...}, "view": {...}, "export": {...}} with every persisted row.
nlohmann::json settings_to_json(const AppSettings& s);
// Tolerant reading of that form (aliases and the pre-schema names too; see SettingField::load).
AppSettings settings_from_json(const nlohmann::json& j, std::string* note);

// The settings found in `flat` (one JSON object; keys or aliases), in table order: (the name as written, its row).
std::vector<std::pair<std::string, const SettingField*>> settings_in_json(const nlohmann::json& flat);

// Applies every setting found in `flat` (keys or aliases; one JSON object) strictly, in table order, to `s`.
// Keys in `skip` are left alone (the CLI's explicit flags win). Returns the keys it used (as written in `flat`);
// `note` gets a line per alias.
std::vector<std::string> apply_settings_json(AppSettings& s, const nlohmann::json& flat, const std::string& arg_prefix,
                                             const std::vector<std::string>& skip = {}, std::string* note = nullptr);

// The sampling rows where `kept` differs from `asked`: "n 4096 (asked 1000000), steps_per_launch 5 (asked 20)".
std::string describe_sampling_differences(const SamplingSettings& kept, const SamplingSettings& asked);
// Whether two sampling settings are equal in every sampling row.
bool same_sampling(const SamplingSettings& a, const SamplingSettings& b);

}  // namespace diffscope
