// metrics.cpp — energy distance (see metrics.h); a plain O(n m dim) double loop, parallel over rows of X.
#include "core/metrics.h"

#include <cmath>
#include <string>

#include "core/errors.h"

namespace diffscope {

double mean_pairwise_distance(const float* X, int n, const float* Y, int m, int dim) {
  if (!X || !Y || n < 1 || m < 1 || dim < 1)
    throw InvalidInput("energy distance: need n >= 1, m >= 1, dim >= 1 and data (got n = " + std::to_string(n) +
                       ", m = " + std::to_string(m) + ", dim = " + std::to_string(dim) + ")");
  double total = 0.0;
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (int i = 0; i < n; ++i) {
    const float* x = X + static_cast<long>(i) * dim;
    double row = 0.0;
    for (int j = 0; j < m; ++j) {
      const float* y = Y + static_cast<long>(j) * dim;
      double s = 0.0;
      for (int k = 0; k < dim; ++k) {
        const double d = double(x[k]) - double(y[k]);
        s += d * d;
      }
      row += std::sqrt(s);
    }
    total += row;
  }
  return total / (double(n) * double(m));
}

double energy_distance(const float* X, int n, const float* Y, int m, int dim) {
  return 2.0 * mean_pairwise_distance(X, n, Y, m, dim) - mean_pairwise_distance(X, n, X, n, dim) -
         mean_pairwise_distance(Y, m, Y, m, dim);
}

}  // namespace diffscope
