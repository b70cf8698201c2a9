// train_kernels.cu — the CUDA trainer's kernels (train_kernels.h). The batch, Adam and the EMA repeat app/train's
// arithmetic operation by operation with the rounding intrinsics (__dmul_rn, __fadd_rn, ...), so that nvcc's
// multiply-add contraction does not change a rounding the CPU trainer makes.
#include "kernels/train/train_kernels.h"

#include <cuda_bf16.h>

#include <Random123/philox.h>

#include "base/philox_normal.h"
#include "kernels/shared/cuda_error.h"

namespace diffscope::kernels::train {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxDim = 64;  // train::kMaxDataDim

unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

void check_launch(const char* what) { check_cuda(cudaGetLastError(), what); }

__device__ __forceinline__ uint16_t bf16_bits(float v) { return __bfloat16_as_ushort(__float2bfloat16_rn(v)); }

__device__ __forceinline__ r123::Philox4x32::ctr_type philox(uint64_t seed, uint32_t c0, uint32_t c1, uint32_t c2,
                                                             uint32_t c3) {
  r123::Philox4x32 rng;
  r123::Philox4x32::key_type key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
  r123::Philox4x32::ctr_type ctr = {{c0, c1, c2, c3}};
  return rng(ctr, key);
}

struct Level {
  double alpha, sigma, time;
};

// train::draw_level.
__device__ Level draw_level(const BatchArgs& a, uint32_t w1, uint32_t w2) {
  double u = philox_uniform(w1);
  if (a.logit_normal) {
    const double z = sqrt(-2.0 * log(double(philox_uniform(w1)))) * cos(2 * 3.14159265358979323846 * philox_uniform(w2));
    u = 1.0 / (1.0 + exp(-(a.logit_mean + a.logit_std * z)));
  }
  if (a.objective == 3) return Level{1.0 - u, u, u};
  const int t = min(a.T - 1, int(floor(u * a.T)));
  return Level{a.sqrt_abar[t], a.sqrt_1m_abar[t], double(t) / double(a.T)};
}

// train::loss_weight.
__device__ double loss_weight(const BatchArgs& a, double alpha, double sigma) {
  if (!a.min_snr) return 1.0;
  const double snr = (alpha * alpha) / (sigma * sigma);
  double factor = 1.0;
  if (a.objective == 0) factor = sigma / alpha;
  else if (a.objective == 2 || a.objective == 3) factor = sigma;
  return fmin(snr, a.snr_gamma) * factor * factor;
}

// One thread per batch row (train::build_batch).
__global__ void kernel_batch(const BatchArgs a, const int64_t* __restrict__ step, float* __restrict__ u,
                             uint16_t* __restrict__ u16, float* __restrict__ y, float* __restrict__ w) {
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b >= a.B) return;
  const uint64_t k = static_cast<uint64_t>(*step);
  const uint32_t klo = static_cast<uint32_t>(k), khi = static_cast<uint32_t>(k >> 32);
  const auto words = philox(a.seed, uint32_t(b), klo, khi, 0u);
  const uint64_t row_index = (uint64_t(words[0]) * uint64_t(a.n_train)) >> 32;
  const float* row = a.data + row_index * size_t(a.dim);
  const Level lv = draw_level(a, words[1], words[2]);
  const int D = a.dim, K1 = D + 1;
  float eps[kMaxDim + 4];
  for (int j = 0; 4 * j < D; ++j) {
    const auto r = philox(a.seed, uint32_t(b), klo, khi, 1u + uint32_t(j));
    const float kTwoPi = 6.283185307179586f;
    const float r0 = sqrtf(-2.0f * logf(philox_uniform(r[0]))), a0 = kTwoPi * philox_uniform(r[1]);
    const float r1 = sqrtf(-2.0f * logf(philox_uniform(r[2]))), a1 = kTwoPi * philox_uniform(r[3]);
    eps[4 * j] = r0 * cosf(a0);
    eps[4 * j + 1] = r0 * sinf(a0);
    eps[4 * j + 2] = r1 * cosf(a1);
    eps[4 * j + 3] = r1 * sinf(a1);
  }
  for (int i = 0; i < D; ++i) {
    const float x0 = row[i], e = eps[i];
    const float v = float(__dadd_rn(__dmul_rn(lv.alpha, double(x0)), __dmul_rn(lv.sigma, double(e))));
    u[size_t(b) * K1 + i] = v;
    if (u16) u16[size_t(b) * K1 + i] = bf16_bits(v);
    float target = e;
    if (a.objective == 1) target = x0;
    else if (a.objective == 2) target = float(__dsub_rn(__dmul_rn(lv.alpha, double(e)), __dmul_rn(lv.sigma, double(x0))));
    else if (a.objective == 3) target = __fsub_rn(e, x0);
    y[size_t(b) * D + i] = target;
  }
  u[size_t(b) * K1 + D] = float(lv.time);
  if (u16) u16[size_t(b) * K1 + D] = bf16_bits(float(lv.time));
  w[b] = float(loss_weight(a, lv.alpha, lv.sigma));
}

__global__ void kernel_bias_silu(int64_t n, int N, float* __restrict__ h, float* __restrict__ zs,
                                 const float* __restrict__ bias, uint16_t* __restrict__ h16) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float z = h[i] + bias[i % N];
  const float s = 1.0f / (1.0f + expf(-z));
  const float v = z * s;
  zs[i] = z;
  h[i] = v;
  if (h16) h16[i] = bf16_bits(v);
}

__global__ void kernel_silu_backward(int64_t n, const float* __restrict__ zs, float* __restrict__ d,
                                     uint16_t* __restrict__ d16) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const float z = zs[i], s = 1.0f / (1.0f + expf(-z));
  const float v = d[i] * (s * (1.0f + z * (1.0f - s)));
  d[i] = v;
  if (d16) d16[i] = bf16_bits(v);
}

// One thread per row; the block's rows' losses summed in shared memory (a fixed tree: deterministic).
__global__ void kernel_loss_grad(int B, int D, float* __restrict__ o, const float* __restrict__ b3,
                                 const float* __restrict__ y, const float* __restrict__ w, bool weighted,
                                 float* __restrict__ partials, uint16_t* __restrict__ d16) {
  __shared__ float sums[kThreads];
  const int b = blockIdx.x * blockDim.x + threadIdx.x;
  float row_loss = 0.f;
  if (b < B) {
    const float scale = 2.0f / (float(B) * float(D));
    const float wb = weighted ? w[b] : 1.0f;
    float sq = 0.f;
    for (int i = 0; i < D; ++i) {
      const size_t idx = size_t(b) * D + i;
      const float d = (o[idx] + b3[i]) - y[idx];
      sq += d * d;
      const float g = d * (scale * wb);
      o[idx] = g;
      if (d16) d16[idx] = bf16_bits(g);
    }
    row_loss = wb * sq;
  }
  sums[threadIdx.x] = row_loss;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) partials[blockIdx.x] = sums[0] / (float(B) * float(D));
}

// train::learning_rate.
__device__ double learning_rate(const AdamArgs& a, int64_t k) {
  if (k < a.warmup) return a.lr * double(k + 1) / double(a.warmup);
  const int64_t span = a.steps - a.warmup > 1 ? a.steps - a.warmup : 1;
  double p = double(k - a.warmup) / double(span);
  if (p > 1) p = 1;
  return a.lr * (a.final_lr_frac + (1 - a.final_lr_frac) * 0.5 * (1 + cos(3.14159265358979323846 * p)));
}

// train::adam_step then train::ema_update, one thread per parameter, float arithmetic in adam.h's order.
__global__ void kernel_adam_ema(const AdamArgs a, const int64_t* __restrict__ step, int64_t n, float* __restrict__ p,
                                const float* __restrict__ g, float* __restrict__ m, float* __restrict__ v,
                                float* __restrict__ ema, uint16_t* __restrict__ p16) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int64_t k = *step, t = k + 1;
  const double bias1 = 1.0 - pow(a.beta1, double(t)), bias2 = 1.0 - pow(a.beta2, double(t));
  const float step_size = float(learning_rate(a, k) / bias1), bias2_sqrt = float(sqrt(bias2));
  const float b1 = float(a.beta1), b2 = float(a.beta2), e = float(a.eps);
  const float gi = g[i];
  const float mi = __fadd_rn(__fmul_rn(b1, m[i]), __fmul_rn(__fsub_rn(1.0f, b1), gi));
  const float vi = __fadd_rn(__fmul_rn(b2, v[i]), __fmul_rn(__fmul_rn(__fsub_rn(1.0f, b2), gi), gi));
  const float denom = __fadd_rn(__fdiv_rn(__fsqrt_rn(vi), bias2_sqrt), e);
  const float pi = __fsub_rn(p[i], __fdiv_rn(__fmul_rn(step_size, mi), denom));
  m[i] = mi;
  v[i] = vi;
  p[i] = pi;
  if (p16) p16[i] = bf16_bits(pi);
  const double warm = double(1 + k) / double(10 + k);
  const float d = float(a.ema < warm ? a.ema : warm);
  ema[i] = __fadd_rn(ema[i], __fmul_rn(__fsub_rn(1.0f, d), __fsub_rn(pi, ema[i])));
}

// One block: a strided float64 sum per thread and a fixed tree (deterministic); then the counter.
__global__ void kernel_finish_step(const float* __restrict__ partials, int n, double* __restrict__ losses, int ring,
                                   int64_t* __restrict__ step) {
  __shared__ double sums[kThreads];
  double s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += double(partials[i]);
  sums[threadIdx.x] = s;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const int64_t k = *step;
    losses[k % ring] = sums[0];
    *step = k + 1;
  }
}

__global__ void kernel_to_bf16(int64_t n, const float* __restrict__ x, uint16_t* __restrict__ y) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = bf16_bits(x[i]);
}

__global__ void kernel_fill(int64_t n, float value, float* __restrict__ x) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) x[i] = value;
}

}  // namespace

void launch_train_batch(const BatchArgs& a, const int64_t* step, float* u, uint16_t* u16, float* y, float* w,
                        cudaStream_t s) {
  kernel_batch<<<blocks(a.B), kThreads, 0, s>>>(a, step, u, u16, y, w);
  check_launch("train batch kernel");
}

void launch_bias_silu(int64_t n, int N, float* h, float* z, const float* b, uint16_t* h16, cudaStream_t s) {
  kernel_bias_silu<<<blocks(n), kThreads, 0, s>>>(n, N, h, z, b, h16);
  check_launch("train bias + SiLU kernel");
}

void launch_silu_backward(int64_t n, const float* z, float* d, uint16_t* d16, cudaStream_t s) {
  kernel_silu_backward<<<blocks(n), kThreads, 0, s>>>(n, z, d, d16);
  check_launch("train SiLU backward kernel");
}

int loss_partial_count(int B) { return static_cast<int>(blocks(B)); }

void launch_loss_grad(int B, int dim, float* o, const float* b3, const float* y, const float* w, bool weighted,
                      float* partials, uint16_t* d16, cudaStream_t s) {
  kernel_loss_grad<<<blocks(B), kThreads, 0, s>>>(B, dim, o, b3, y, w, weighted, partials, d16);
  check_launch("train loss kernel");
}

void launch_adam_ema(const AdamArgs& a, const int64_t* step, int64_t n, float* p, const float* g, float* m, float* v,
                     float* ema, uint16_t* p16, cudaStream_t s) {
  kernel_adam_ema<<<blocks(n), kThreads, 0, s>>>(a, step, n, p, g, m, v, ema, p16);
  check_launch("train Adam + EMA kernel");
}

void launch_finish_step(const float* partials, int n_partials, double* losses, int ring, int64_t* step,
                        cudaStream_t s) {
  kernel_finish_step<<<1, kThreads, 0, s>>>(partials, n_partials, losses, ring, step);
  check_launch("train finish-step kernel");
}

void launch_to_bf16(int64_t n, const float* x, uint16_t* y, cudaStream_t s) {
  kernel_to_bf16<<<blocks(n), kThreads, 0, s>>>(n, x, y);
  check_launch("train bf16 copy kernel");
}

void launch_fill(int64_t n, float value, float* x, cudaStream_t s) {
  kernel_fill<<<blocks(n), kThreads, 0, s>>>(n, value, x);
  check_launch("train fill kernel");
}

}  // namespace diffscope::kernels::train
