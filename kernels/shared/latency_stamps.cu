// latency_stamps.cu — the SM clock measurement that converts the stamps' cycles to time (latency_stamps.h).
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/shared/cuda_error.h"
#include "kernels/shared/latency_stamps.h"

namespace diffscope::kernels {

namespace {
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// out[0] = cycles, out[1] = ns over a spin of about spin_ns nanoseconds.
__global__ void kernel_clock_probe(long long spin_ns, long long* out) {
  const unsigned long long g0 = global_ns();
  const long long c0 = clock64();
  unsigned long long g = g0;
  while (static_cast<long long>(g - g0) < spin_ns) g = global_ns();
  const long long c1 = clock64();
  const unsigned long long g1 = global_ns();
  if (threadIdx.x == 0) {
    out[0] = c1 - c0;
    out[1] = static_cast<long long>(g1 - g0);
  }
}
}  // namespace

double measure_sm_clock_mhz(void* stream, double us) {
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  long long* d = nullptr;
  long long h[2] = {0, 1};
  if (cudaMalloc(&d, sizeof h) != cudaSuccess) return 0.0;
  kernel_clock_probe<<<1, 32, 0, s>>>(static_cast<long long>(us * 1e3), d);
  const cudaError_t e = cudaMemcpyAsync(h, d, sizeof h, cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s);
  cudaFree(d);
  if (e != cudaSuccess || h[1] <= 0) return 0.0;
  return static_cast<double>(h[0]) / static_cast<double>(h[1]) * 1e3;
}

}  // namespace diffscope::kernels
