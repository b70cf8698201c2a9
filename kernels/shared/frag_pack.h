// frag_pack.h — host-side packing of weight matrices into the register-fragment order that the tensor-core
// kernels load with one 8-byte (bf16 / f16) or 16-byte (tf32) shared-memory access per lane.
//
// W is (N, K) row-major (nn.Linear's (out, in)); N is padded to a multiple of 16 and K to a multiple of 16
// with zeros. For n-block nb (8 output rows) and k-block kb (16 inputs), lane = 4 g + q holds, for output
// n = 8 nb + g and k0 = 16 kb:
//   bf16 / f16 (mma m16n8k16 B operand): uint2 {bf16(W[n][k0+2q]) | bf16(W[n][k0+2q+1]) << 16,
//                                         bf16(W[n][k0+2q+8]) | bf16(W[n][k0+2q+9]) << 16}
//   tf32 (two mma m16n8k8):        uint4 {W[n][k0+2q], W[n][k0+2q+1], W[n][k0+8+2q], W[n][k0+8+2q+1]} rounded to tf32
// at index (nb * (Kp/16) + kb) * 32 + lane. For tf32 the k order inside each 8-block is permuted (logical k
// = q <-> physical 2q, q+4 <-> 2q+1) identically in A and B, so an accumulator fragment of one layer is the
// A operand of the next without shuffles (see mma.cuh).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

namespace diffscope::kernels {

inline int round_up(int v, int m) { return (v + m - 1) / m * m; }

inline uint16_t float_to_bf16_bits(float f) {  // round to nearest even (NaN kept quiet)
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}
// IEEE binary16, round to nearest even (cvt.rn.f16.f32): overflow (|f| >= 65520) to +-Inf, subnormals kept.
inline uint16_t float_to_f16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // 65520 ties to even: Inf
  if (a < 0x38800000u) {  // below 2^-14: a multiple of 2^-24 (1024 of them is the smallest normal's encoding)
    float v;
    std::memcpy(&v, &a, 4);
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(v * 16777216.0f)));
  }
  const uint32_t r = a - 0x38000000u;  // exponent 127 -> 15 bias
  return static_cast<uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
}
inline uint32_t float_to_tf32_bits(float f) {  // cvt.rna.tf32.f32: round half away from zero to 10 mantissa bits
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return u;
  u += 0x1000u;
  return u & 0xffffe000u;
}

// The operand type of a fragment set.
enum class FragType { Bf16, F16, Tf32 };

// Packs W (N x K, row stride ld) into fragments; returns 32-bit words (2 per lane-entry for bf16 / f16, 4 for tf32).
inline std::vector<uint32_t> pack_fragments(const float* W, int N, int K, int ld, FragType type) {
  const bool half = type != FragType::Tf32;
  auto bits16 = [type](float f) -> uint32_t {
    return type == FragType::F16 ? float_to_f16_bits(f) : float_to_bf16_bits(f);
  };
  const int Np = round_up(N, 16), Kp = round_up(K, 16), NB = Np / 8, KB = Kp / 16;
  auto w = [&](int n, int k) -> float { return (n < N && k < K) ? W[static_cast<size_t>(n) * ld + k] : 0.0f; };
  const int words = half ? 2 : 4;
  std::vector<uint32_t> out(static_cast<size_t>(NB) * KB * 32 * words);
  for (int nb = 0; nb < NB; ++nb)
    for (int kb = 0; kb < KB; ++kb)
      for (int lane = 0; lane < 32; ++lane) {
        const int g = lane / 4, q = lane % 4, n = nb * 8 + g, k0 = kb * 16;
        uint32_t* o = &out[((static_cast<size_t>(nb) * KB + kb) * 32 + lane) * words];
        if (half) {
          o[0] = bits16(w(n, k0 + 2 * q)) | (bits16(w(n, k0 + 2 * q + 1)) << 16);
          o[1] = bits16(w(n, k0 + 2 * q + 8)) | (bits16(w(n, k0 + 2 * q + 9)) << 16);
        } else {
          o[0] = float_to_tf32_bits(w(n, k0 + 2 * q));
          o[1] = float_to_tf32_bits(w(n, k0 + 2 * q + 1));
          o[2] = float_to_tf32_bits(w(n, k0 + 8 + 2 * q));
          o[3] = float_to_tf32_bits(w(n, k0 + 8 + 2 * q + 1));
        }
      }
  return out;
}

}  // namespace diffscope::kernels
