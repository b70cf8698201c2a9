// backend_defaults.h — lighter starting values on the CPU backend, so a first launch there stays smooth
// (>= 30 frames/s with 2 cores and Mesa; numbers in docs/PERFORMANCE.md, "CPU first launch").
#pragma once
#include "session/settings_io.h"

namespace diffscope {

// On the CPU backend: the sample count, when still at its default or above 20,000 (a GPU-sized setting), drops to
// kCpuSamples, and trails still at their default drop to kCpuTrailFrames. Values given on the command line
// (`n_given`, `trail_given`) or chosen by the user are kept. These are run-only: the settings file keeps the
// user's values (run_only.h), so a later GPU launch gets the GPU defaults back.
void apply_cpu_defaults(AppSettings& s, bool n_given, bool trail_given);

constexpr int kCpuSamples = 1024;   // one step of the reference MLP (hidden 256) for 1024 rows: ~14 ms on one core
constexpr int kCpuTrailFrames = 4;

}  // namespace diffscope
