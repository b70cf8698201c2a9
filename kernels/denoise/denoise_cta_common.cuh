// denoise_cta_common.cuh — what the two single-CTA bf16 / fp16 denoisers share (denoise_cta.cu: B <= 16 as the mma M;
// denoise_cta8.cu: B <= 8 as the mma N): the bias / time-weight loads, x in and out of shared memory, the launch.
#pragma once
#include <cuda_runtime.h>

#include <type_traits>

#include "kernels/shared/cuda_error.h"
#include "kernels/shared/mma.cuh"
#include "kernels/kernels.h"
#include "kernels/shared/latency_stamps.h"
#include "kernels/shared/pdl.cuh"

namespace diffscope::kernels::cta {

// b1, the time column of W1 (w1t_g), b2 (hidden 256 each) and b3 (KX, zero past dim) into shared memory.
template <int KX, int kThreads>
__device__ __forceinline__ void load_biases(const DenoiseArgs& a, const float* __restrict__ w1t_g, float* sb1,
                                            float* sw1t, float* sb2, float* sb3) {
  for (int i = threadIdx.x; i < 256; i += kThreads) {
    sb1[i] = __ldg(a.net.b1 + i);
    sw1t[i] = __ldg(w1t_g + i);
    sb2[i] = __ldg(a.net.b2 + i);
  }
  for (int i = threadIdx.x; i < KX; i += kThreads) sb3[i] = i < a.net.dim ? __ldg(a.net.b3 + i) : 0.f;
}

// x (B, dim) -> xs (rows x XS, zero outside B x dim).
template <int kThreads>
__device__ __forceinline__ void load_x(const DenoiseArgs& a, float* xs, int rows, int XS) {
  const int dim = a.net.dim;
  for (int i = threadIdx.x; i < rows * XS; i += kThreads) {
    const int r = i / XS, c = i % XS;
    xs[i] = (r < a.B && c < dim) ? a.x[static_cast<size_t>(r) * dim + c] : 0.f;
  }
}

// xs (rows of stride XS) -> dst (B, dim).
template <int kThreads>
__device__ __forceinline__ void store_x(const DenoiseArgs& a, const float* xs, int XS, float* dst) {
  const int dim = a.net.dim;
  for (int i = threadIdx.x; i < a.B * dim; i += kThreads) dst[i] = xs[(i / dim) * XS + i % dim];
}

// The fragments of W1, W2, W3 in Op's 16 bits (Bf16Tag or F16Tag, frag_pack.h).
struct Fragments {
  const uint2 *f1, *f2, *f3;
};
template <class Op>
Fragments fragments(const DeviceNet& n) {
  if constexpr (std::is_same_v<Op, F16Tag>)
    return {static_cast<const uint2*>(n.f1_f16), static_cast<const uint2*>(n.f2_f16), static_cast<const uint2*>(n.f3_f16)};
  else
    return {static_cast<const uint2*>(n.f1_bf16), static_cast<const uint2*>(n.f2_bf16), static_cast<const uint2*>(n.f3_bf16)};
}

// Launches one CTA of `threads` threads of `kernel` (plain or stamp build, latency_stamps.h) with `smem` bytes of
// dynamic shared memory through launch_pdl (with PDL when `pdl`) on the fragments `f`; throws naming `what` on failure.
template <class Kernel>
void launch(Kernel* kernel, int threads, size_t smem, const DenoiseArgs& a, const Fragments& f, long long* stp, bool pdl,
            cudaStream_t s, const char* what) {
  set_max_dynamic_smem(kernel, smem);
  const float* w1t = a.net.W1T + static_cast<size_t>(a.net.dim) * a.net.hidden;
  const cudaError_t e = launch_pdl(kernel, dim3(1), dim3(threads), smem, s, 0, pdl, a, f.f1, f.f2, f.f3, w1t, stp);
  if (e != cudaSuccess) throw_cuda_error(e, what);
}

}  // namespace diffscope::kernels::cta
