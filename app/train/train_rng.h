// train_rng.h — the training run's random numbers: Philox4x32-10 (Random123, as base/philox_normal.h) keyed by the
// seed, counter-based, so the state of the stream is the step alone (a checkpoint stores the seed and the step).
//   batch row b of step k:  counter (b, k low, k high, 0): word 0 the data row, words 1, 2 the level
//                           counter (b, k low, k high, 1 + j): the noise of dims 4j..4j+3 (Box-Muller)
//   initial weight i:       counter (i / 4, ~0, ~0, ~0): word i % 4
#pragma once
#include <cmath>
#include <cstdint>

#include <Random123/philox.h>

#include "base/philox_normal.h"

namespace diffscope::train {

inline r123::Philox4x32::ctr_type train_philox(uint64_t seed, uint32_t c0, uint32_t c1, uint32_t c2, uint32_t c3) {
  r123::Philox4x32 rng;
  r123::Philox4x32::key_type key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  r123::Philox4x32::ctr_type ctr = {{c0, c1, c2, c3}};
  return rng(ctr, key);
}

// The four words that pick batch row b's data row and level at step k.
inline r123::Philox4x32::ctr_type batch_row_words(uint64_t seed, uint64_t k, uint32_t b) {
  return train_philox(seed, b, static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32), 0u);
}

// An index in [0, n) from a 32-bit word (multiply-shift: floor(word n / 2^32)).
inline uint64_t index_of(uint32_t word, uint64_t n) { return (uint64_t(word) * n) >> 32; }

// The standard normal noise of batch row b at step k, dims [0, dim).
inline void batch_row_noise(uint64_t seed, uint64_t k, uint32_t b, int dim, float* z) {
  for (int j = 0; 4 * j < dim; ++j) {
    const auto u = train_philox(seed, b, static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32), 1u + uint32_t(j));
    const float kTwoPi = 6.283185307179586f;
    const float r0 = std::sqrt(-2.0f * std::log(philox_uniform(u[0]))), a0 = kTwoPi * philox_uniform(u[1]);
    const float r1 = std::sqrt(-2.0f * std::log(philox_uniform(u[2]))), a1 = kTwoPi * philox_uniform(u[3]);
    const float v[4] = {r0 * std::cos(a0), r0 * std::sin(a0), r1 * std::cos(a1), r1 * std::sin(a1)};
    for (int q = 0; q < 4 && 4 * j + q < dim; ++q) z[4 * j + q] = v[q];
  }
}

// A uniform in (-1, 1) for initial weight i.
inline double init_uniform(uint64_t seed, uint64_t i) {
  const uint32_t hi = static_cast<uint32_t>(i >> 34) ^ 0xFFFFFFFFu;
  const auto u = train_philox(seed, static_cast<uint32_t>(i >> 2), hi, 0xFFFFFFFFu, 0xFFFFFFFFu);
  return 2.0 * double(philox_uniform(u[i & 3u])) - 1.0;
}

}  // namespace diffscope::train
