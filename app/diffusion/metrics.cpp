// metrics.cpp — energy distance and nearest-point distance (see metrics.h); plain O(n m dim) double loops,
// parallel over rows of X; the per-row sums are added in row order, so the result does not depend on the
// thread count.
#include "diffusion/metrics.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "base/errors.h"
#include "platform/cpu_threads.h"

namespace diffscope {

namespace {
void check_sets(const float* X, int n, const float* Y, int m, int dim) {
  if (!X || !Y || n < 1 || m < 1 || dim < 1)
    throw InvalidInput("distance between point sets: need n >= 1, m >= 1, dim >= 1 and data (got n = " +
                       std::to_string(n) + ", m = " + std::to_string(m) + ", dim = " + std::to_string(dim) + ")");
}
// The sum over the rows i of X of row(i), computed in blocks over the CPU threads and added in row order.
template <class F>
double sum_over_rows(int n, F row) {
  constexpr int kRows = 64;
  std::vector<double> per_row(static_cast<size_t>(n));
  parallel_blocks((n + kRows - 1) / kRows, [&](int64_t blk) {
    const int end = static_cast<int>(std::min<int64_t>(n, (blk + 1) * kRows));
    for (int i = static_cast<int>(blk) * kRows; i < end; ++i) per_row[static_cast<size_t>(i)] = row(i);
  });
  double total = 0.0;
  for (double v : per_row) total += v;
  return total;
}
double squared_distance(const float* x, const float* y, int dim) {
  double s = 0.0;
  for (int k = 0; k < dim; ++k) {
    const double d = double(x[k]) - double(y[k]);
    s += d * d;
  }
  return s;
}
}  // namespace

double mean_pairwise_distance(const float* X, int n, const float* Y, int m, int dim) {
  check_sets(X, n, Y, m, dim);
  const double total = sum_over_rows(n, [&](int i) {
    const float* x = X + static_cast<long>(i) * dim;
    double row = 0.0;
    for (int j = 0; j < m; ++j) row += std::sqrt(squared_distance(x, Y + static_cast<long>(j) * dim, dim));
    return row;
  });
  return total / (double(n) * double(m));
}

double energy_distance(const float* X, int n, const float* Y, int m, int dim) {
  return 2.0 * mean_pairwise_distance(X, n, Y, m, dim) - mean_pairwise_distance(X, n, X, n, dim) -
         mean_pairwise_distance(Y, m, Y, m, dim);
}

double mean_nearest_distance(const float* X, int n, const float* A, int m, int dim) {
  check_sets(X, n, A, m, dim);
  const double total = sum_over_rows(n, [&](int i) {
    const float* x = X + static_cast<long>(i) * dim;
    double best = squared_distance(x, A, dim);
    for (int j = 1; j < m; ++j) best = std::min(best, squared_distance(x, A + static_cast<long>(j) * dim, dim));
    return std::sqrt(best);
  });
  return total / double(n);
}

}  // namespace diffscope
