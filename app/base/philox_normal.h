// philox_normal.h — counter-based standard normal noise, identical on host and device (SEMANTICS §7).
// Philox4x32-10 from Random123; key = (seed low, seed high); counter = (row, step_key, j, 0) for dims 4j..4j+3.
#pragma once
#include <cstdint>
#include <Random123/philox.h>

#if defined(__CUDACC__)
#define DS_HD __host__ __device__ __forceinline__
#else
#define DS_HD inline
#endif

namespace diffscope {

// step_key: timestep t of the step that draws the noise, T for the starting noise, T+1 for "start from data".
constexpr uint32_t kStartNoiseKey(uint32_t T) { return T; }
constexpr uint32_t kFromDataNoiseKey(uint32_t T) { return T + 1; }

// Maps a 32-bit word to (0, 1): ((u >> 8) + 0.5) * 2^-24.
DS_HD float philox_uniform(uint32_t u) { return (static_cast<float>(u >> 8) + 0.5f) * (1.0f / 16777216.0f); }

// Four normals for dims 4j..4j+3 of `row` at `step_key`: Box-Muller on (v0, v1) and (v2, v3).
DS_HD void philox_normal4(uint64_t seed, uint32_t row, uint32_t step_key, uint32_t j, float out[4]) {
  r123::Philox4x32 rng;
  r123::Philox4x32::key_type key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  r123::Philox4x32::ctr_type ctr = {{row, step_key, j, 0u}};
  r123::Philox4x32::ctr_type u = rng(ctr, key);
  const float kTwoPi = 6.283185307179586f;
  float r0 = sqrtf(-2.0f * logf(philox_uniform(u[0])));
  float a0 = kTwoPi * philox_uniform(u[1]);
  float r1 = sqrtf(-2.0f * logf(philox_uniform(u[2])));
  float a1 = kTwoPi * philox_uniform(u[3]);
  out[0] = r0 * cosf(a0);
  out[1] = r0 * sinf(a0);
  out[2] = r1 * cosf(a1);
  out[3] = r1 * sinf(a1);
}

// Fills z[0..dim) for one row.
DS_HD void philox_normal_row(uint64_t seed, uint32_t row, uint32_t step_key, int dim, float* z) {
  for (int j = 0; 4 * j < dim; ++j) {
    float v[4];
    philox_normal4(seed, row, step_key, static_cast<uint32_t>(j), v);
    for (int q = 0; q < 4 && 4 * j + q < dim; ++q) z[4 * j + q] = v[q];
  }
}

}  // namespace diffscope
