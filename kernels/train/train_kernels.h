// train_kernels.h — the CUDA trainer's elementwise and reduction kernels (app/gpu/cuda_trainer.cpp runs the GEMMs
// between them with cuBLAS). Plain C++: included by app/gpu and by train_kernels.cu. All pointers are device
// pointers; every launch is asynchronous on the given stream. The step counter k lives in device memory
// (`step`), so one captured CUDA graph runs every step. The maths is app/train's (SEMANTICS §11): the batch of
// train/trainer.h build_batch (Philox counters of train/train_rng.h), SiLU and its derivative of train/mlp.h,
// Adam and the EMA of train/adam.h, the learning rate of train/train_config.h.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

namespace diffscope::kernels::train {

// What the batch kernel needs of a run: the data rows, the levels' table (float64, as train::LevelTable; null for
// flow), the objective, the time sampling and the loss weighting.
struct BatchArgs {
  const float* data = nullptr;  // (n_train, dim), normalised
  int64_t n_train = 0;
  int dim = 0, B = 0;
  const double *sqrt_abar = nullptr, *sqrt_1m_abar = nullptr;
  int T = 1000;
  int objective = 0;  // train::Objective: 0 epsilon, 1 sample, 2 v_prediction, 3 flow
  bool logit_normal = false, min_snr = false;
  double logit_mean = 0, logit_std = 1, snr_gamma = 5;
  uint64_t seed = 0;
};

// The schedule and Adam's constants of train::TrainConfig (learning_rate and adam_step's arithmetic).
struct AdamArgs {
  double lr = 1e-3, final_lr_frac = 0.01, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, ema = 0.9995;
  int64_t warmup = 0, steps = 1;
};

// The batch of step *step: u (B, dim+1) = [alpha x0 + sigma eps, time], y (B, dim) the targets, w (B) the loss
// weights (1 without weighting); u16 (optional) a bf16 copy of u.
void launch_train_batch(const BatchArgs& a, const int64_t* step, float* u, uint16_t* u16, float* y, float* w,
                        cudaStream_t s);

// z = h + b (bias of N columns) kept, and h = SiLU(z) in place, for n = rows N values; h16 (optional) a bf16 copy.
void launch_bias_silu(int64_t n, int N, float* h, float* z, const float* b, uint16_t* h16, cudaStream_t s);

// d *= SiLU'(z) = s (1 + z (1 - s)), s = sigmoid(z), for n values; d16 (optional) a bf16 copy.
void launch_silu_backward(int64_t n, const float* z, float* d, uint16_t* d16, cudaStream_t s);

// The loss's gradient: d_out = (o + b3 - y) 2 w / (B dim) in place of o (B, dim), and per-block partial sums of
// w |o + b3 - y|^2 / (B dim) in `partials` (loss_partial_count(B) values, in row order); d16 optional bf16 copy.
int loss_partial_count(int B);
void launch_loss_grad(int B, int dim, float* o, const float* b3, const float* y, const float* w, bool weighted,
                      float* partials, uint16_t* d16, cudaStream_t s);

// One Adam step t = *step + 1 at learning_rate(*step) on n parameters, then the EMA with its decay at *step
// (train/adam.h's float arithmetic, the same roundings); p16 (optional) a bf16 copy of the new parameters.
void launch_adam_ema(const AdamArgs& a, const int64_t* step, int64_t n, float* p, const float* g, float* m, float* v,
                     float* ema, uint16_t* p16, cudaStream_t s);

// Ends the step: losses[*step % ring] = the sum of the loss partials (in order, float64), then *step += 1.
void launch_finish_step(const float* partials, int n_partials, double* losses, int ring, int64_t* step,
                        cudaStream_t s);

// y (n) = x as bf16 (round to nearest even).
void launch_to_bf16(int64_t n, const float* x, uint16_t* y, cudaStream_t s);

// x (n) = value.
void launch_fill(int64_t n, float value, float* x, cudaStream_t s);

}  // namespace diffscope::kernels::train
