// command_line.h — the `diffscope sample ...` line that reproduces a run's settings: what the
// Export section's "Copy command line" puts on the clipboard and every sidecar holds as `command_line`.
#pragma once
#include <string>

#include "session/settings_io.h"
#include "session/settings_schema.h"

namespace diffscope {

// A POSIX-shell word: `text` as is when it holds only [A-Za-z0-9_./:=+-], else single-quoted ('\'' for ').
std::string shell_quote(const std::string& text);

// `diffscope sample --model M --n N --sampler S --eta E --steps K --t-start T --seed X [--from-data]
// --backend B --precision P --out OUT` followed by `more` (further options, already quoted, each with a leading
// space: the picture and output options of a CLI run), numbers written so that they read back exactly (eta with 17
// significant digits). `model` is the model file (the session's resolved path), written by its bundled name
// (`--model moons`) when it is a bundled model, so that the line runs in any checkout or install, else by its
// absolute path, so that it runs from any folder; `backend` cpu or cuda.
std::string sample_command_line(const SamplingSettings& s, const std::string& model, const std::string& backend,
                                const std::string& out = "x.npy", const std::string& more = "");

// The option of a settings-schema key: trail_frames -> --trail-frames.
std::string setting_flag(const std::string& key);
// The picture's settings rows that `sample` takes as options (the sampling ones have their own).
bool is_picture_setting(const SettingField& f);

// The picture options of `sample` that draw `pic` as the app does, each with a leading space: --size WxH (the
// export size), every picture setting that differs from the app's default by its option, --camera X,Y,HALF_HEIGHT
// when `camera_given`, --camera-aspect A when `camera_aspect` is not 0, --ui-scale S when `ui_scale` is not 1.
// Numbers read back exactly (17 significant digits).
std::string picture_command_options(const AppSettings& pic, bool camera_given, double camera_aspect, double ui_scale);

}  // namespace diffscope
