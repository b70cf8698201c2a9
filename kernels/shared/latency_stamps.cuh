// latency_stamps.cuh — device side of latency_stamps.h: stamp<ON>() writes clock64() from lane 0 of a warp.
#pragma once
#include "kernels/shared/latency_stamps.h"

namespace diffscope::kernels {

// Writes clock64() to buf[stamp_index(cta, step, warp, slot, steps)] from lane 0 (ON == false: nothing).
template <bool ON>
__device__ __forceinline__ void stamp(long long* buf, int cta, int step, int slot, int steps) {
  if constexpr (ON) {
    if ((threadIdx.x & 31) == 0) buf[stamp_index(cta, step, threadIdx.x >> 5, slot, steps)] = clock64();
  }
}
// The same after v has arrived (an mma result, a load): the clock is read only once v is in a register.
template <bool ON>
__device__ __forceinline__ void stamp_after(float v, long long* buf, int cta, int step, int slot, int steps) {
  if constexpr (ON) {
    long long t;
    asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.f32 p, %1, %1;\n\tmov.u64 %0, %%clock64;\n\t@p add.s64 %0, %0, 1;\n\t}"
                 : "=l"(t)
                 : "f"(v)
                 : "memory");
    if ((threadIdx.x & 31) == 0) buf[stamp_index(cta, step, threadIdx.x >> 5, slot, steps)] = t;
  }
}

}  // namespace diffscope::kernels
