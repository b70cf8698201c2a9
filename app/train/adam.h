// adam.h — Adam (Kingma & Ba 2015, Algorithm 1) with PyTorch's torch.optim.Adam arithmetic (no weight decay, no
// amsgrad), and the exponential moving average of the weights (tools/train_denoiser.py ema_update).
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace diffscope::train {

// One Adam step t (1-based) on n parameters p with gradients g and moments m, v (updated in place):
//   m = beta1 m + (1 - beta1) g,  v = beta2 v + (1 - beta2) g^2,
//   p -= lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)      (PyTorch's bias correction: eps added
// after dividing sqrt(v) by sqrt(1 - beta2^t), where Algorithm 1 adds it to sqrt(v_hat) — the same expression).
template <class Real>
void adam_step(Real* p, const Real* g, Real* m, Real* v, size_t n, int64_t t, double lr, double beta1, double beta2,
               double eps) {
  const double bias1 = 1.0 - std::pow(beta1, double(t)), bias2 = 1.0 - std::pow(beta2, double(t));
  const Real step_size = Real(lr / bias1), bias2_sqrt = Real(std::sqrt(bias2));
  const Real b1 = Real(beta1), b2 = Real(beta2), e = Real(eps);
  for (size_t i = 0; i < n; ++i) {
    m[i] = b1 * m[i] + (Real(1) - b1) * g[i];
    v[i] = b2 * v[i] + (Real(1) - b2) * g[i] * g[i];
    p[i] -= step_size * m[i] / (std::sqrt(v[i]) / bias2_sqrt + e);
  }
}

// The EMA's decay after step k (0-based): min(ema, (1 + k) / (10 + k)), a warm-up that lets early averages follow.
inline double ema_decay(double ema, int64_t k) {
  const double warm = double(1 + k) / double(10 + k);
  return ema < warm ? ema : warm;
}

// ema = decay ema + (1 - decay) p.
template <class Real>
void ema_update(Real* ema, const Real* p, size_t n, double decay) {
  const Real d = Real(decay);
  for (size_t i = 0; i < n; ++i) ema[i] += (Real(1) - d) * (p[i] - ema[i]);
}

}  // namespace diffscope::train
