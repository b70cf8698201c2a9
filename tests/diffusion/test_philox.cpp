// test_philox.cpp — Philox4x32-10 known answers (Random123's tests/kat_vectors, the three "philox4x32 10"
// lines) and the normal mapping of SEMANTICS §7 against the same formulas in float64.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "base/philox_normal.h"

namespace diffscope {
namespace {

TEST(Philox, KnownAnswerVectors) {
  struct Kat {
    uint32_t ctr[4], key[2], out[4];
  };
  const Kat kats[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
       {0xffffffff, 0xffffffff},
       {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
       {0xa4093822, 0x299f31d0},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  r123::Philox4x32 rng;
  for (const Kat& k : kats) {
    r123::Philox4x32::ctr_type c = {{k.ctr[0], k.ctr[1], k.ctr[2], k.ctr[3]}};
    r123::Philox4x32::key_type key = {{k.key[0], k.key[1]}};
    const auto u = rng(c, key);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(u[i], k.out[i]) << i;
  }
}

// SEMANTICS §7 in float64: v = ((u >> 8) + 0.5) 2^-24, Box-Muller on (v0, v1) and (v2, v3).
void normal4_double(uint64_t seed, uint32_t row, uint32_t step_key, uint32_t j, double out[4], uint32_t words[4]) {
  r123::Philox4x32 rng;
  r123::Philox4x32::key_type key = {{uint32_t(seed & 0xffffffffu), uint32_t(seed >> 32)}};
  r123::Philox4x32::ctr_type ctr = {{row, step_key, j, 0u}};
  const auto u = rng(ctr, key);
  double v[4];
  for (int i = 0; i < 4; ++i) {
    words[i] = u[i];
    v[i] = ((u[i] >> 8) + 0.5) / 16777216.0;
  }
  const double pi2 = 2 * M_PI;
  out[0] = std::sqrt(-2 * std::log(v[0])) * std::cos(pi2 * v[1]);
  out[1] = std::sqrt(-2 * std::log(v[0])) * std::sin(pi2 * v[1]);
  out[2] = std::sqrt(-2 * std::log(v[2])) * std::cos(pi2 * v[3]);
  out[3] = std::sqrt(-2 * std::log(v[2])) * std::sin(pi2 * v[3]);
}

TEST(Philox, NormalRowMatchesFloat64Formula) {
  // dim = 6: block j = 0 gives dims 0..3, block j = 1 dims 4, 5. Seeds above 2^32 exercise the key's high word.
  const int dim = 6;
  double worst = 0;
  for (uint64_t seed : {uint64_t(0), uint64_t(12345), uint64_t(0x123456789abcdefULL)}) {
    for (uint32_t row = 0; row < 2000; ++row) {
      for (uint32_t step_key : {0u, 1u, 999u, 1000u, 1001u}) {
        float z[dim];
        philox_normal_row(seed, row, step_key, dim, z);
        for (uint32_t j = 0; j < 2; ++j) {
          double ref[4];
          uint32_t w[4];
          normal4_double(seed, row, step_key, j, ref, w);
          for (int q = 0; q < 4 && 4 * int(j) + q < dim; ++q) {
            // float32 rounds (u >> 8) + 0.5 to 24 bits: v within 2^-25 of the exact value, which moves r by
            // about 2^-25 / r (largest as v -> 1, where r -> 0: at most sqrt(2^-24) = 2.4e-4 absolute).
            const uint32_t ua = w[q < 2 ? 0 : 2] >> 8;
            const double tol = ua >= (1u << 24) - 16 ? 3e-4 : 2e-5 * (1 + std::abs(ref[q]));
            const double err = std::abs(double(z[4 * j + q]) - ref[q]);
            EXPECT_LE(err, tol) << "seed " << seed << " row " << row << " key " << step_key << " dim " << 4 * j + q;
            if (ua < (1u << 24) - 16) worst = std::max(worst, err / (1 + std::abs(ref[q])));
          }
        }
      }
    }
  }
  EXPECT_LT(worst, 2e-5);
}

TEST(Philox, MomentsAreThoseOfAStandardNormal) {
  // 400,000 draws: mean within 5 standard errors of 0 (5 / sqrt(n) = 0.0079), variance within 0.01 of 1.
  double sum = 0, sum2 = 0;
  const int rows = 100000;
  for (uint32_t r = 0; r < uint32_t(rows); ++r) {
    float z[4];
    philox_normal4(42, r, 1000, 0, z);
    for (float v : z) sum += v, sum2 += double(v) * v;
  }
  const double n = 4.0 * rows, mean = sum / n, var = sum2 / n - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.0079);
  EXPECT_NEAR(var, 1.0, 0.01);
}

}  // namespace
}  // namespace diffscope
