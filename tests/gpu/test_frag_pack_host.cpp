// test_frag_pack_host.cpp — host-only (runs without a GPU, in CI): the fragment packing of kernels/shared/frag_pack.h
// and the accumulator -> A-operand reuse of kernels/shared/mma.cuh, checked by emulating how mma.sync reads its operands
// (PTX ISA "Matrix fragments for mma.m16n8k16 / m16n8k8"). A wrong index here would make the tensor-core kernels
// compute a different function; the GPU tests catch that on a device, this catches it everywhere.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/shared/frag_pack.h"

namespace diffscope {
namespace {

using kernels::FragType;
using kernels::pack_fragments;

float bf16_to_float(uint32_t bits16) {
  const uint32_t u = bits16 << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
// IEEE binary16 bits -> float, decoded field by field (sign, 5-bit exponent with bias 15, 10-bit mantissa).
float f16_to_float(uint32_t h) {
  const int e = (h >> 10) & 31, m = h & 1023;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (e == 31) return m ? NAN : static_cast<float>(sign * INFINITY);
  return static_cast<float>(sign * (e ? std::ldexp(1024.0 + m, e - 25) : std::ldexp(double(m), -24)));
}
float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Y (16 x N) = X (16 x K) W^T through emulated mma: the A operand of each 16-wide k-block is built from X laid out
// as accumulator fragments of two n8 blocks (what the kernels do with the previous layer's output), B comes from
// pack_fragments. Returns Y computed from the operands as the hardware interprets them.
std::vector<double> emulate(const std::vector<float>& X, const std::vector<float>& W, int N, int K, FragType type) {
  const int Np = kernels::round_up(N, 16), Kp = kernels::round_up(K, 16), KB = Kp / 16;
  const std::vector<uint32_t> F = pack_fragments(W.data(), N, K, K, type);
  const bool bf16 = type != FragType::Tf32;  // the 16-bit layout (bf16 and f16 share it)
  const int words = bf16 ? 2 : 4;
  auto x = [&](int r, int c) -> float { return c < K ? X[r * K + c] : 0.f; };
  auto half = [&](uint32_t bits) { return type == FragType::F16 ? f16_to_float(bits) : bf16_to_float(bits); };
  auto rnd = [&](float v) {
    if (type == FragType::F16) return f16_to_float(kernels::float_to_f16_bits(v));
    return bf16 ? bf16_to_float(kernels::float_to_bf16_bits(v)) : bits_to_float(kernels::float_to_tf32_bits(v));
  };
  std::vector<double> Y(16 * size_t(Np), 0.0);
  for (int nb = 0; nb < Np / 8; ++nb)
    for (int kb = 0; kb < KB; ++kb) {
      // Logical operands as the hardware sees them, assembled lane by lane.
      double A[16][16] = {}, B[16][8] = {};
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane / 4, q = lane % 4, k0 = kb * 16;
        // accumulator layout of the two n8 blocks covering columns k0..k0+15 of X
        const float c0[4] = {x(g, k0 + 2 * q), x(g, k0 + 2 * q + 1), x(g + 8, k0 + 2 * q), x(g + 8, k0 + 2 * q + 1)};
        const float c1[4] = {x(g, k0 + 8 + 2 * q), x(g, k0 + 8 + 2 * q + 1), x(g + 8, k0 + 8 + 2 * q), x(g + 8, k0 + 8 + 2 * q + 1)};
        const uint32_t* b = &F[((size_t(nb) * KB + kb) * 32 + lane) * words];
        if (bf16) {  // make_afrag(Bf16): r0 = (c0[0], c0[1]), r1 = (c0[2], c0[3]), r2 = (c1[0], c1[1]), r3 = (c1[2], c1[3])
          A[g][2 * q] = rnd(c0[0]), A[g][2 * q + 1] = rnd(c0[1]);
          A[g + 8][2 * q] = rnd(c0[2]), A[g + 8][2 * q + 1] = rnd(c0[3]);
          A[g][2 * q + 8] = rnd(c1[0]), A[g][2 * q + 9] = rnd(c1[1]);
          A[g + 8][2 * q + 8] = rnd(c1[2]), A[g + 8][2 * q + 9] = rnd(c1[3]);
          // B (16 x 8): b0b1 = rows 2q, 2q+1 of column g; b2b3 = rows 2q+8, 2q+9
          B[2 * q][g] = half(b[0] & 0xffff), B[2 * q + 1][g] = half(b[0] >> 16);
          B[2 * q + 8][g] = half(b[1] & 0xffff), B[2 * q + 9][g] = half(b[1] >> 16);
        } else {  // two m16n8k8: A (16 x 8) a0 = (g, q), a1 = (g+8, q), a2 = (g, q+4), a3 = (g+8, q+4); B b0 = (q, g), b1 = (q+4, g)
          // make_afrag(Tf32): r0 = c0[0], r1 = c0[2], r2 = c0[1], r3 = c0[3]; r4.. the same from c1
          for (int h = 0; h < 2; ++h) {
            const float* c = h ? c1 : c0;
            A[g][8 * h + q] = rnd(c[0]), A[g + 8][8 * h + q] = rnd(c[2]);
            A[g][8 * h + q + 4] = rnd(c[1]), A[g + 8][8 * h + q + 4] = rnd(c[3]);
            B[8 * h + q][g] = bits_to_float(b[2 * h]), B[8 * h + q + 4][g] = bits_to_float(b[2 * h + 1]);
          }
        }
      }
      for (int r = 0; r < 16; ++r)
        for (int n = 0; n < 8; ++n) {
          double s = 0;
          for (int k = 0; k < 16; ++k) s += A[r][k] * B[k][n];
          Y[r * size_t(Np) + nb * 8 + n] += s;
        }
    }
  return Y;
}

void check(int N, int K, FragType type, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> X(16 * size_t(K)), W(size_t(N) * K);
  for (float& v : X) v = u(rng);
  for (float& v : W) v = u(rng);
  const std::vector<double> Y = emulate(X, W, N, K, type);
  const int Np = kernels::round_up(N, 16);
  double num = 0, den = 0;
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < Np; ++n) {
      double ref = 0;
      if (n < N)
        for (int k = 0; k < K; ++k) ref += double(X[r * K + k]) * W[size_t(n) * K + k];
      const double d = Y[r * size_t(Np) + n] - ref;
      num += d * d;
      den += ref * ref;
      if (n >= N) EXPECT_EQ(Y[r * size_t(Np) + n], 0.0) << "padding output column " << n;
    }
  // Operand rounding only: bf16 ~2^-8, tf32 and f16 ~2^-11 relative per product; a permuted index gives O(1).
  EXPECT_LT(std::sqrt(num / den), type == FragType::Bf16 ? 1e-2 : 2e-3) << "N=" << N << " K=" << K << " type "
                                                                         << static_cast<int>(type);
}

TEST(FragPackHost, Bf16F16AndTf32MatchTheProduct) {
  for (FragType type : {FragType::Bf16, FragType::F16, FragType::Tf32}) {
    check(256, 256, type, 1);
    check(256, 64, type, 2);
    check(24, 40, type, 3);  // padded N and K
    check(8, 3, type, 4);
  }
}

TEST(FragPackHost, RoundingHelpers) {
  EXPECT_EQ(kernels::float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(kernels::float_to_bf16_bits(-2.0f), 0xc000);
  EXPECT_EQ(bf16_to_float(kernels::float_to_bf16_bits(1.00390625f)), 1.0f);  // tie rounds to even
  EXPECT_EQ(bits_to_float(kernels::float_to_tf32_bits(1.0f)), 1.0f);
  EXPECT_EQ(kernels::float_to_tf32_bits(1.0f + 0x1p-11f) & 0x1fffu, 0u);  // low 13 bits cleared
}

// IEEE binary16's encodings (IEEE 754-2008 §3.4) and round to nearest even: the values the fp16 weights take.
TEST(FragPackHost, F16RoundingFollowsIeeeBinary16) {
  using kernels::float_to_f16_bits;
  EXPECT_EQ(float_to_f16_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_f16_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_f16_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_f16_bits(-0.0f), 0x8000);
  EXPECT_EQ(float_to_f16_bits(65504.0f), 0x7bff);                 // the largest finite value
  EXPECT_EQ(float_to_f16_bits(65519.99f), 0x7bff);                // below the halfway point: rounds down
  EXPECT_EQ(float_to_f16_bits(65520.0f), 0x7c00);                 // the tie goes to the even neighbour, Inf
  EXPECT_EQ(float_to_f16_bits(1.0e6f), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(-1.0e6f), 0xfc00);
  EXPECT_EQ(float_to_f16_bits(INFINITY), 0x7c00);
  EXPECT_EQ(float_to_f16_bits(NAN) & 0x7c00, 0x7c00);
  EXPECT_NE(float_to_f16_bits(NAN) & 0x03ff, 0);                  // NaN stays NaN
  EXPECT_EQ(float_to_f16_bits(1.0f + 0x1p-11f), 0x3c00);          // tie between 1 and 1 + 2^-10: even (1)
  EXPECT_EQ(float_to_f16_bits(1.0f + 3 * 0x1p-11f), 0x3c02);      // tie between 1 + 2^-10 and 1 + 2^-9: even
  EXPECT_EQ(float_to_f16_bits(0x1p-14f), 0x0400);                 // the smallest normal
  EXPECT_EQ(float_to_f16_bits(0x1p-24f), 0x0001);                 // the smallest subnormal
  EXPECT_EQ(float_to_f16_bits(0x1p-25f), 0x0000);                 // half of it: ties to even (0)
  EXPECT_EQ(float_to_f16_bits(3 * 0x1p-25f), 0x0002);             // 1.5 units: ties to even (2)
  EXPECT_EQ(float_to_f16_bits(0x1p-14f - 0x1p-25f), 0x0400);      // 1023.5 units rounds up to the smallest normal
  for (float v : {0.1f, -3.14159f, 1234.5f, 6.1e-5f, 3.0e-7f}) {  // within half a unit in the last place
    const float back = f16_to_float(float_to_f16_bits(v));
    const float ulp = std::fabs(v) >= 0x1p-14f ? std::ldexp(1.0f, std::ilogb(v) - 10) : 0x1p-24f;
    EXPECT_LE(std::fabs(back - v), 0.5f * ulp) << v;
  }
}

}  // namespace
}  // namespace diffscope
