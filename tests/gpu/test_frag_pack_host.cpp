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

using kernels::pack_fragments;

float bf16_to_float(uint32_t bits16) {
  const uint32_t u = bits16 << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
float bits_to_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Y (16 x N) = X (16 x K) W^T through emulated mma: the A operand of each 16-wide k-block is built from X laid out
// as accumulator fragments of two n8 blocks (what the kernels do with the previous layer's output), B comes from
// pack_fragments. Returns Y computed from the operands as the hardware interprets them.
std::vector<double> emulate(const std::vector<float>& X, const std::vector<float>& W, int N, int K, bool bf16) {
  const int Np = kernels::round_up(N, 16), Kp = kernels::round_up(K, 16), KB = Kp / 16;
  const std::vector<uint32_t> F = pack_fragments(W.data(), N, K, K, bf16);
  const int words = bf16 ? 2 : 4;
  auto x = [&](int r, int c) -> float { return c < K ? X[r * K + c] : 0.f; };
  auto rnd = [&](float v) { return bf16 ? bf16_to_float(kernels::float_to_bf16_bits(v)) : bits_to_float(kernels::float_to_tf32_bits(v)); };
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
          B[2 * q][g] = bf16_to_float(b[0] & 0xffff), B[2 * q + 1][g] = bf16_to_float(b[0] >> 16);
          B[2 * q + 8][g] = bf16_to_float(b[1] & 0xffff), B[2 * q + 9][g] = bf16_to_float(b[1] >> 16);
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

void check(int N, int K, bool bf16, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> X(16 * size_t(K)), W(size_t(N) * K);
  for (float& v : X) v = u(rng);
  for (float& v : W) v = u(rng);
  const std::vector<double> Y = emulate(X, W, N, K, bf16);
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
  // Operand rounding only: bf16 ~2^-8, tf32 ~2^-11 relative per product; a permuted index gives O(1).
  EXPECT_LT(std::sqrt(num / den), bf16 ? 1e-2 : 2e-3) << "N=" << N << " K=" << K << (bf16 ? " bf16" : " tf32");
}

TEST(FragPackHost, Bf16AndTf32MatchTheProduct) {
  for (bool bf16 : {true, false}) {
    check(256, 256, bf16, 1);
    check(256, 64, bf16, 2);
    check(24, 40, bf16, 3);  // padded N and K
    check(8, 3, bf16, 4);
  }
}

TEST(FragPackHost, RoundingHelpers) {
  EXPECT_EQ(kernels::float_to_bf16_bits(1.0f), 0x3f80);
  EXPECT_EQ(kernels::float_to_bf16_bits(-2.0f), 0xc000);
  EXPECT_EQ(bf16_to_float(kernels::float_to_bf16_bits(1.00390625f)), 1.0f);  // tie rounds to even
  EXPECT_EQ(bits_to_float(kernels::float_to_tf32_bits(1.0f)), 1.0f);
  EXPECT_EQ(kernels::float_to_tf32_bits(1.0f + 0x1p-11f) & 0x1fffu, 0u);  // low 13 bits cleared
}

}  // namespace
}  // namespace diffscope
