// cp_async.cuh — global -> shared copies with cp.async (sm_80+), for the single-CTA latency kernels.
#pragma once

namespace diffscope::kernels::cta {

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(sa), "l"(gmem));
}
// Copies n 16-byte pieces asynchronously over a CTA of kThreads threads (every piece in flight at once);
// completes with cp_async_wait_all.
template <int kThreads>
__device__ __forceinline__ void copy_async(void* dst, const void* __restrict__ src, int n) {
  for (int i = threadIdx.x; i < n; i += kThreads)
    cp_async16(static_cast<uint4*>(dst) + i, static_cast<const uint4*>(src) + i);
}
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

}  // namespace diffscope::kernels::cta
