// sampling.h — starting states for a sampling run (SEMANTICS §3 "Start from data", §7 step keys).
#pragma once
#include <cstdint>
#include <vector>

#include "diffusion/step_table.h"
#include "model/model.h"

namespace diffscope {

// Pure noise: x[i] = z(row = row_offset + i, step_key = T). x: (n, dim).
void fill_start_noise(const DiffusionModel& model, uint64_t seed, int n, float* x, uint32_t row_offset = 0);

// Pure noise as the start state of `tab`'s first level: x *= sqrt(alpha^2 + sigma^2) for the flow and edm
// families (diffusers' init_noise_sigma: 1 at s = 1, sqrt(sigma_max^2 + 1) for EDM); the VP states keep x as it is.
// x: count values.
void scale_start_noise(const StepTable& tab, size_t count, float* x);

// The start-from-data scales of SEMANTICS §3 in float32: x = data * d + noise * z with data = sqrt(abar[t_start]),
// noise = sqrt(1 - abar[t_start]). t_start must be in [0, T-1].
struct StartScales {
  float data = 0, noise = 0;
};
StartScales start_from_data_scales(const Schedule& sched, int t_start);

// Start from data: x[i] = sqrt(abar[t_start]) d + sqrt(1 - abar[t_start]) z, d = data_samples[i mod n_data],
// z with step_key T + 1. Throws InvalidInput if the model has no data_samples.
void fill_start_from_data(const DiffusionModel& model, int t_start, uint64_t seed, int n, float* x,
                          uint32_t row_offset = 0);
// The same at any level: x[i] = sc.data d + sc.noise z (a family's level: alpha, sigma; SEMANTICS §2).
void fill_start_from_data(const DiffusionModel& model, StartScales sc, uint64_t seed, int n, float* x,
                          uint32_t row_offset = 0);

}  // namespace diffscope
