// mma.cuh — warp-level tensor-core helpers (mma.sync m16n8k16 bf16 / f16, m16n8k8 tf32; fp32 accumulation) and
// the fast SiLU. The f16 operands share bf16's fragment layout (8 exponent bits traded for 3 more mantissa bits). Fragment conventions (PTX ISA, "Matrix fragments for mma.m16n8k*"), g = lane/4, q = lane%4:
//   accumulator C (16x8): c0 (g, 2q), c1 (g, 2q+1), c2 (g+8, 2q), c3 (g+8, 2q+1)
//   bf16 A (16x16): r0 (g, 2q..2q+1), r1 (g+8, 2q..), r2 (g, 2q+8..), r3 (g+8, 2q+8..)  == C of n-blocks 2j, 2j+1
//   tf32 A (16x8) with the k permutation of frag_pack.h: r0 (g, 2q) r1 (g+8, 2q) r2 (g, 2q+1) r3 (g+8, 2q+1)
#pragma once
#include <cuda_bf16.h>
#include <cstdint>
#include <type_traits>

namespace diffscope::kernels {

struct Bf16Tag {};
struct F16Tag {};
struct Tf32Tag {};

template <class P> struct AFrag;                       // A operand: 16 rows x 16 k
template <> struct AFrag<Bf16Tag> { uint32_t r[4]; };
template <> struct AFrag<F16Tag> { uint32_t r[4]; };
template <> struct AFrag<Tf32Tag> { uint32_t r[8]; };  // two k8 blocks
template <class P> struct BFragT;                      // B operand: 16 k x 8 n, one lane's share
template <> struct BFragT<Bf16Tag> { using type = uint2; };
template <> struct BFragT<F16Tag> { using type = uint2; };
template <> struct BFragT<Tf32Tag> { using type = uint4; };
template <class P> using BFrag = typename BFragT<P>::type;

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
__device__ __forceinline__ uint32_t pack_f16x2(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
// Two fp32 values as the 16-bit operand type of Op (Bf16Tag or F16Tag), lo in the low half.
template <class Op>
__device__ __forceinline__ uint32_t pack_op2(float lo, float hi) {
  if constexpr (std::is_same_v<Op, F16Tag>) return pack_f16x2(lo, hi);
  else return pack_bf16x2(lo, hi);
}
// One fp32 value as the 16-bit bits of Op (round to nearest even), for operands staged in shared memory.
template <class Op>
__device__ __forceinline__ uint16_t bits_op(float v) {
  return static_cast<uint16_t>(pack_op2<Op>(v, 0.f) & 0xffffu);
}
__device__ __forceinline__ uint32_t to_tf32(float f) {
  uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(f));
  return r;
}

// A operand (16 x 16 k) from the accumulators of n-blocks 2j (c0) and 2j+1 (c1).
template <class Op, class = std::enable_if_t<std::is_same_v<Op, Bf16Tag> || std::is_same_v<Op, F16Tag>>>
__device__ __forceinline__ void make_afrag(AFrag<Op>& a, const float* c0, const float* c1) {
  a.r[0] = pack_op2<Op>(c0[0], c0[1]);
  a.r[1] = pack_op2<Op>(c0[2], c0[3]);
  a.r[2] = pack_op2<Op>(c1[0], c1[1]);
  a.r[3] = pack_op2<Op>(c1[2], c1[3]);
}
__device__ __forceinline__ void make_afrag(AFrag<Tf32Tag>& a, const float* c0, const float* c1) {
  a.r[0] = to_tf32(c0[0]); a.r[1] = to_tf32(c0[2]); a.r[2] = to_tf32(c0[1]); a.r[3] = to_tf32(c0[3]);
  a.r[4] = to_tf32(c1[0]); a.r[5] = to_tf32(c1[2]); a.r[6] = to_tf32(c1[1]); a.r[7] = to_tf32(c1[3]);
}

__device__ __forceinline__ void mma16(float* c, const AFrag<Bf16Tag>& a, uint2 b) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.x), "r"(b.y));
}
__device__ __forceinline__ void mma16(float* c, const AFrag<F16Tag>& a, uint2 b) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.x), "r"(b.y));
}
__device__ __forceinline__ void mma16(float* c, const AFrag<Tf32Tag>& a, uint4 b) {
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.x), "r"(b.y));
  asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a.r[4]), "r"(a.r[5]), "r"(a.r[6]), "r"(a.r[7]), "r"(b.z), "r"(b.w));
}

__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// SiLU for the tensor-core modes: z sigmoid(z) with sigmoid(z) = 0.5 tanh(0.5 z) + 0.5 (one MUFU op).
__device__ __forceinline__ float silu_fast(float z) {
  const float h = 0.5f * z;
  return fmaf(h, tanh_approx(h), h);
}
// SiLU for fp32 mode: accurate expf (matches the float64 reference to ~1 ulp).
__device__ __forceinline__ float silu_exact(float z) { return z / (1.0f + expf(-z)); }

}  // namespace diffscope::kernels
