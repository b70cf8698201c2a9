// unfused.cu — the unfused baselines kept in the product for comparison (ARCHITECTURE.md): per step, cuBLAS GEMMs
// for the three layers and small elementwise kernels for bias + SiLU and the affine update. Same contract as
// the fused kernels (kernels.h); fp32 (plain SGEMM), tf32 (CUBLAS_COMPUTE_32F_FAST_TF32), bf16 / fp16 (16-bit
// operands, fp32 accumulation and output).
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "base/errors.h"
#include "base/philox_normal.h"
#include "kernels/kernels.h"
#include "kernels/shared/denoise_common.cuh"

namespace diffscope::kernels {

namespace {

void cublas_check(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = std::string("cuBLAS ") + what + " failed: status " + std::to_string(st);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw ResourceUnavailable("out of GPU memory (" + msg + ")");  // exit 3
  throw std::runtime_error(msg);
}

// A 16-bit copy of v: fp16 bits when f16, else bf16 bits (round to nearest even).
__device__ __forceinline__ void store16(uint16_t* p, float v, bool f16) {
  *p = f16 ? __half_as_ushort(__float2half_rn(v)) : __bfloat16_as_ushort(__float2bfloat16_rn(v));
}

// u = [x, t/T] (fp32 and optionally a 16-bit copy).
__global__ void kernel_build_u(const DenoiseArgs a, int k, float* __restrict__ u, uint16_t* __restrict__ u16, bool f16) {
  const int dim = a.net.dim, K1 = dim + 1;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<int64_t>(a.B) * K1) return;
  const int r = static_cast<int>(i / K1), c = static_cast<int>(i % K1);
  float v;
  if (c < dim) {
    v = a.x[static_cast<size_t>(r) * dim + c];
  } else {
    const RowStep s = row_step(a, r, k);
    v = s.tt;
  }
  u[i] = v;
  if (u16) store16(u16 + i, v, f16);
}

// h = SiLU(h + b) in place (+ a 16-bit copy).
__global__ void kernel_bias_silu(int64_t n, int N, float* __restrict__ h, const float* __restrict__ b,
                                 uint16_t* __restrict__ h16, bool f16) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float z = h[i] + b[i % N];
  const float v = z / (1.0f + expf(-z));
  h[i] = v;
  if (h16) store16(h16 + i, v, f16);
}

// x <- A x + B (e + b3) + S z; frame write.
__global__ void kernel_update(const DenoiseArgs a, int k, const float* __restrict__ e) {
  const int dim = a.net.dim;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= static_cast<int64_t>(a.B) * dim) return;
  const int r = static_cast<int>(i / dim), c = static_cast<int>(i % dim);
  const RowStep s = row_step(a, r, k);
  float xv = a.x[i];
  if (s.active) {
    xv = s.A * xv + s.C * (e[i] + a.net.b3[c]);
    if (s.S != 0.f) {
      float z[4];
      philox_normal4(a.seed, a.row_offset + r, static_cast<uint32_t>(s.t), c / 4, z);
      xv += s.S * z[c % 4];
    }
    a.x[i] = xv;
  }
  if (a.frames) a.frames[(k - a.k_begin) * static_cast<size_t>(a.B) * dim + i] = xv;
}

__global__ void kernel_relu(int64_t n, float* __restrict__ h, uint16_t* __restrict__ h16, bool f16) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float v = fmaxf(h[i], 0.f);
  h[i] = v;
  if (h16) store16(h16 + i, v, f16);
}
__global__ void kernel_to_16(int64_t n, const float* __restrict__ x, uint16_t* __restrict__ y, bool f16) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) store16(y + i, x[i], f16);
}

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + 255) / 256); }

// C (rows, N) row-major = A (rows, K) row-major x W^T, W (N, K) row-major: column-major C^T = W^T' ... i.e.
// cublas(op_T on W stored (K x N) col-major, op_N on A^T (K x rows) col-major).
void gemm(cublasHandle_t h, Precision p, int rows, int N, int K, const void* W, const void* A, float* C) {
  const float one = 1.f, zero = 0.f;
  if (precision_16bit(p)) {
    const cudaDataType_t t = p == Precision::F16 ? CUDA_R_16F : CUDA_R_16BF;
    cublas_check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, rows, K, &one, W, t, K, A, t, K, &zero, C, CUDA_R_32F, N,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                 "GemmEx 16-bit");
  } else {
    const cublasComputeType_t ct = p == Precision::Tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    cublas_check(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, N, rows, K, &one, W, CUDA_R_32F, K, A, CUDA_R_32F, K, &zero,
                              C, CUDA_R_32F, N, ct, CUBLAS_GEMM_DEFAULT),
                 "GemmEx fp32");
  }
}

}  // namespace

void run_denoise_unfused(cublasHandle_t h, const DenoiseArgs& a, Precision p, const UnfusedWorkspace& ws, cudaStream_t s) {
  cublas_check(cublasSetStream(h, s), "SetStream");
  const int dim = a.net.dim, H = a.net.hidden, K1 = dim + 1, B = a.B;
  const bool half = precision_16bit(p), f16 = p == Precision::F16;
  const void* W[3] = {a.net.W1, a.net.W2, a.net.W3};
  if (half) {
    W[0] = f16 ? a.net.W1_f16 : a.net.W1_bf16;
    W[1] = f16 ? a.net.W2_f16 : a.net.W2_bf16;
    W[2] = f16 ? a.net.W3_f16 : a.net.W3_bf16;
  }
  const int64_t nh = static_cast<int64_t>(B) * H;
  for (int k = a.k_begin; k < a.k_end; ++k) {
    kernel_build_u<<<blocks(static_cast<int64_t>(B) * K1), 256, 0, s>>>(a, k, ws.u, half ? ws.u16 : nullptr, f16);
    gemm(h, p, B, H, K1, W[0], half ? static_cast<const void*>(ws.u16) : ws.u, ws.h1);
    kernel_bias_silu<<<blocks(nh), 256, 0, s>>>(nh, H, ws.h1, a.net.b1, half ? ws.h1_16 : nullptr, f16);
    gemm(h, p, B, H, H, W[1], half ? static_cast<const void*>(ws.h1_16) : ws.h1, ws.h2);
    kernel_bias_silu<<<blocks(nh), 256, 0, s>>>(nh, H, ws.h2, a.net.b2, half ? ws.h2_16 : nullptr, f16);
    gemm(h, p, B, dim, H, W[2], half ? static_cast<const void*>(ws.h2_16) : ws.h2, ws.e);
    kernel_update<<<blocks(static_cast<int64_t>(B) * dim), 256, 0, s>>>(a, k, ws.e);
  }
}

void run_mlp3_unfused(cublasHandle_t h, const DeviceMlp3& w, const float* x, int B, float* y, Precision p,
                      const Mlp3Workspace& ws, cudaStream_t s) {
  cublas_check(cublasSetStream(h, s), "SetStream");
  const bool half = precision_16bit(p), f16 = p == Precision::F16;
  const void* W[3] = {w.W1, w.W2, w.W3};
  if (half)
    for (int l = 0; l < 3; ++l) W[l] = f16 ? w.W_f16[l] : w.W_bf16[l];
  const int64_t n0 = static_cast<int64_t>(B) * w.d0, n1 = static_cast<int64_t>(B) * w.d1,
                n2 = static_cast<int64_t>(B) * w.d2;
  if (half) kernel_to_16<<<blocks(n0), 256, 0, s>>>(n0, x, ws.x16, f16);
  gemm(h, p, B, w.d1, w.d0, W[0], half ? static_cast<const void*>(ws.x16) : x, ws.h1);
  kernel_relu<<<blocks(n1), 256, 0, s>>>(n1, ws.h1, half ? ws.h1_16 : nullptr, f16);
  gemm(h, p, B, w.d2, w.d1, W[1], half ? static_cast<const void*>(ws.h1_16) : ws.h1, ws.h2);
  kernel_relu<<<blocks(n2), 256, 0, s>>>(n2, ws.h2, half ? ws.h2_16 : nullptr, f16);
  gemm(h, p, B, w.d3, w.d2, W[2], half ? static_cast<const void*>(ws.h2_16) : ws.h2, y);
}

}  // namespace diffscope::kernels
