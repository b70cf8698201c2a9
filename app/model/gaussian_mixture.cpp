// gaussian_mixture.cpp — reading the analytic Gaussian-mixture model from a .safetensors file (SEMANTICS §6).
#include "model/gaussian_mixture.h"

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

}  // namespace

GaussianMixture read_gaussian_mixture(const SafetensorsFile& f) {
  const std::string& L = f.label();
  const TensorInfo* mt = f.find("means");
  if (!mt || mt->shape.size() != 2 || mt->shape[0] < 1 || mt->shape[1] < 1 || mt->shape[0] > 1'000'000 ||
      mt->shape[1] > 1'000'000)
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
  return m;
}

}  // namespace diffscope
