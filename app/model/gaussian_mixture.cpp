// gaussian_mixture.cpp — reading the analytic Gaussian-mixture model from a .safetensors file (SEMANTICS §6).
#include "model/gaussian_mixture.h"

#include <algorithm>
#include <cmath>

#include "base/errors.h"
#include "formats/safetensors.h"

namespace diffscope {
namespace {

std::vector<double> read_positive(const SafetensorsFile& f, const std::string& name, bool positive) {
  std::vector<double> v = f.read_double_schedule(name);
  for (size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]) || (positive && !(v[i] > 0.0)))
      throw InvalidInput(f.label() + ": tensor '" + name + "' element " + std::to_string(i) + " is " +
                         std::to_string(v[i]) + (positive ? " (valid: finite and > 0)" : " (valid: finite)"));
  return v;
}

// The optional classes (K,) (F64/F32 holding integers; SEMANTICS §6): each in [0, kMaxMixtureClasses - 1], every
// class below the largest owning a component. A covs tensor (full covariances) is refused, not ignored.
void read_classes(const SafetensorsFile& f, GaussianMixture& m) {
  const std::string& L = f.label();
  if (f.find("covs"))
    throw InvalidInput(L + ": tensor 'covs' (full covariances) is not supported yet; valid: stds (K,), isotropic");
  const TensorInfo* t = f.find("classes");
  if (!t) return;
  if (t->shape != std::vector<int64_t>{m.K})
    throw InvalidInput(L + ": tensor 'classes' has shape " + format_shape(t->shape) + ", expected (" +
                       std::to_string(m.K) + ",) = (K,)");
  const std::vector<double> c = read_positive(f, "classes", false);
  const std::string valid = " (valid: integers in [0, " + std::to_string(kMaxMixtureClasses - 1) + "])";
  for (size_t k = 0; k < c.size(); ++k) {
    if (!(c[k] >= 0 && c[k] < kMaxMixtureClasses && c[k] == std::floor(c[k])))
      throw InvalidInput(L + ": tensor 'classes' element " + std::to_string(k) + " is " + std::to_string(c[k]) + valid);
    m.classes.push_back(static_cast<int>(c[k]));
    m.n_classes = std::max(m.n_classes, m.classes.back() + 1);
  }
  std::vector<bool> owned(static_cast<size_t>(m.n_classes), false);
  for (int k : m.classes) owned[static_cast<size_t>(k)] = true;
  for (int c2 = 0; c2 < m.n_classes; ++c2)
    if (!owned[static_cast<size_t>(c2)])
      throw InvalidInput(L + ": tensor 'classes' has no component of class " + std::to_string(c2) +
                         " (valid: every class 0 .. C-1 owns a component)");
}

}  // namespace

GaussianMixture read_gaussian_mixture(const SafetensorsFile& f) {
  const std::string& L = f.label();
  const TensorInfo* mt = f.find("means");
  if (!mt || mt->shape.size() != 2 || mt->shape[0] < 1 || mt->shape[1] < 1 || mt->shape[0] > kMaxMixtureComponents ||
      mt->shape[1] > kMaxMixtureDim)
    throw InvalidInput(L + ": a gaussian_mixture file needs tensor 'means' of shape (K, dim) with K, dim >= 1" +
                       (mt ? ", got " + format_shape(mt->shape) : std::string(", it is missing")));
  GaussianMixture m;
  m.K = static_cast<int>(mt->shape[0]);
  m.dim = static_cast<int>(mt->shape[1]);
  for (const char* name : {"stds", "weights"}) {
    const TensorInfo* t = f.find(name);
    if (!t || t->shape != std::vector<int64_t>{m.K})
      throw InvalidInput(L + ": a gaussian_mixture file needs tensor '" + name + "' of shape (" + std::to_string(m.K) +
                         ",) = (K,)" + (t ? ", got " + format_shape(t->shape) : std::string(", it is missing")));
  }
  m.means = read_positive(f, "means", false);
  m.stds = read_positive(f, "stds", true);
  m.weights = read_positive(f, "weights", true);
  double total = 0;
  for (double w : m.weights) total += w;
  for (double& w : m.weights) w /= total;
  read_classes(f, m);
  return m;
}

}  // namespace diffscope
