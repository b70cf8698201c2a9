// gaussian_mixture.h — the analytic Gaussian-mixture model (SEMANTICS §6): data x0 ~ sum_k w_k N(mu_k, s_k^2 I),
// whose eps is exact, so every solver can be checked against the exact probability-flow ODE.
#pragma once
#include <cmath>
#include <string>
#include <vector>

namespace diffscope {

class SafetensorsFile;

// K components in dim dimensions, float64 as stored (F64 or F32 tensors).
//   means (K, dim) row-major, stds (K) > 0, weights (K) > 0 (normalised to sum 1 on load); optional classes (K),
//   the class of each component in 0 .. n_classes - 1, every class owning one at least (SEMANTICS §6).
struct GaussianMixture {
  int K = 0, dim = 0;
  std::vector<double> means, stds, weights;
  std::vector<int> classes;  // empty: no classes
  int n_classes = 0;
  // Whether component k is in the mixture of class cls (-1: every component, the unconditional mixture).
  bool in_class(int k, int cls) const { return cls < 0 || classes.empty() || classes[k] == cls; }
};

// Limits of a mixture file (SEMANTICS §6): K components, dim dimensions, classes.
inline constexpr int kMaxMixtureComponents = 1'000'000, kMaxMixtureDim = 1'000'000, kMaxMixtureClasses = 1000;

// The metadata kind that marks a mixture file: __metadata__ "kind" = "gaussian_mixture".
inline constexpr const char* kGaussianMixtureKind = "gaussian_mixture";

// Reads tensors means/stds/weights from a file whose metadata kind is gaussian_mixture; throws InvalidInput
// naming the file, the tensor and the numbers on a missing tensor, a bad shape or a non-positive/non-finite value.
GaussianMixture read_gaussian_mixture(const SafetensorsFile& f);

// Exact eps of the mixture at noise level abar for one row x (dim) (SEMANTICS §6):
// p_t = sum_k w_k N(sqrt(abar) mu_k, v_k I), v_k = abar s_k^2 + 1 - abar;
// eps*(x) = -sqrt(1 - abar) grad log p_t(x) = sqrt(1 - abar) sum_k g_k(x) (x - sqrt(abar) mu_k) / v_k,
// g_k the posterior weights (computed with log-sum-exp). logg: scratch of K values. cls >= 0: the mixture of that
// class's components alone (its weights renormalised), the class-conditional eps.
template <class Real>
void mixture_eps_row(const GaussianMixture& m, const Real* x, double abar, Real* eps, Real* logg, int cls = -1) {
  const Real sa = static_cast<Real>(std::sqrt(abar)), s1 = static_cast<Real>(std::sqrt(1.0 - abar));
  Real best = -INFINITY;
  for (int k = 0; k < m.K; ++k) {
    if (!m.in_class(k, cls)) {
      logg[k] = -INFINITY;
      continue;
    }
    const Real v = static_cast<Real>(abar * m.stds[k] * m.stds[k] + (1.0 - abar));
    Real d2 = 0;
    for (int j = 0; j < m.dim; ++j) {
      const Real r = x[j] - sa * static_cast<Real>(m.means[k * m.dim + j]);
      d2 += r * r;
    }
    logg[k] = static_cast<Real>(std::log(m.weights[k])) - Real(0.5) * m.dim * std::log(v) - d2 / (2 * v);
    best = std::max(best, logg[k]);
  }
  Real total = 0;
  for (int k = 0; k < m.K; ++k) total += (logg[k] = std::exp(logg[k] - best));
  for (int j = 0; j < m.dim; ++j) eps[j] = 0;
  for (int k = 0; k < m.K; ++k) {
    if (!m.in_class(k, cls)) continue;
    const Real v = static_cast<Real>(abar * m.stds[k] * m.stds[k] + (1.0 - abar));
    const Real g = logg[k] / total;
    for (int j = 0; j < m.dim; ++j) eps[j] += g * (x[j] - sa * static_cast<Real>(m.means[k * m.dim + j])) / v;
  }
  for (int j = 0; j < m.dim; ++j) eps[j] *= s1;
}

}  // namespace diffscope
