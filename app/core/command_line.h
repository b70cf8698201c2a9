// command_line.h — the `diffscope sample ...` line that reproduces a run's settings: what the
// Export section's "Copy command line" puts on the clipboard and every sidecar holds as `command_line`.
#pragma once
#include <string>

#include "core/settings_io.h"

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

}  // namespace diffscope
