// backend_defaults.cpp — see backend_defaults.h.
#include "session/backend_defaults.h"

namespace diffscope {

void apply_cpu_defaults(AppSettings& s, bool n_given, bool trail_given) {
  if (!n_given && (s.sampling.n_samples > 20000 || s.sampling.n_samples == SamplingSettings{}.n_samples))
    s.sampling.n_samples = kCpuSamples;
  if (!trail_given && s.view.trail_frames == ViewSettings{}.trail_frames) s.view.trail_frames = kCpuTrailFrames;
}

}  // namespace diffscope
