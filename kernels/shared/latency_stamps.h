// latency_stamps.h — clock64() stamps inside the latency kernels (where the time goes inside a step).
// While a device buffer is set (LaunchContext::stamps, set through gpu::CudaBackend::set_latency_stamps), the single-CTA bf16 denoiser, the cluster fp32 denoiser and the tiny fp32 MLP
// launch their stamp build (a template instance of the same kernel; the normal build has no stamp code), in which
// lane 0 of every warp writes clock64() (SM cycles; comparable only inside one CTA) at fixed points ("slots").
// Layout: slot s of warp w of CTA (cluster rank) c at step k (k = -1: prologue / end of the call) is
//   buf[stamp_index(c, k, w, s, steps)], steps = the call's step count (0 for the MLP); unwritten slots keep
// what the caller put there. The slots of each kernel are listed beside its code (denoise_cta.cu,
// denoise_cluster.cu, mlp3.cu) and named by the `bench --diag` stamp rows (app/gpu/bench/bench_stamps.cpp).
#pragma once
#include <cstddef>

namespace diffscope::kernels {

constexpr int kStampWarps = 8;   // every stamped kernel runs 256 threads
constexpr int kStampSlots = 20;  // slots per warp and step

#if defined(__CUDACC__)
__host__ __device__
#endif
inline size_t stamp_index(int cta, int step, int warp, int slot, int steps) {
  return ((static_cast<size_t>(cta) * (steps + 1) + (step + 1)) * kStampWarps + warp) * kStampSlots + slot;
}
// Elements a call of `steps` steps over `ctas` CTAs needs.
inline size_t stamp_capacity(int ctas, int steps) { return static_cast<size_t>(ctas) * (steps + 1) * kStampWarps * kStampSlots; }


}  // namespace diffscope::kernels

namespace diffscope::kernels {
// The SM clock while busy, in MHz: one CTA spins for about `us` microseconds reading clock64() and %globaltimer
// (ns) at both ends (on stream s; waits for it). Converts the stamps' cycles to time.
double measure_sm_clock_mhz(void* stream, double us = 200.0);
}  // namespace diffscope::kernels
