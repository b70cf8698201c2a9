// settings_keys.h — settings by name ("steps", "t_start", "precision", ...), for scripts and `--set k=v`.
#pragma once
#include <string>

#include "core/settings_io.h"

namespace diffscope::ui {

// Sets one value: steps, t_start, n, sampler, eta, seed, spl (steps per launch), precision, from_data,
// budget_mb, trail, field, field_x0, data, follow, speed, loop, steps_per_frame, grid_cols, point_size,
// point_alpha, vsync, show_ui, camera (X,Y,HALF_HEIGHT: fixed; or auto), export_dir, export_size (WxH). Out-of-range numbers are clamped later by the
// session like typed ones. Throws InvalidInput for an unknown key or an unparsable value.
void apply_setting(AppSettings& s, const std::string& key, const std::string& value);

}  // namespace diffscope::ui
