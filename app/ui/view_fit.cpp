// view_fit.cpp — PCA projection and camera fitting.
#include "ui/view_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace diffscope::ui {

Projection fit_projection(const DiffusionModel& m, const float* fallback_rows, int n_fallback) {
  const int dim = m.net.dim;
  Projection p;
  if (dim == 2) {
    p.mean = {0, 0};
    p.axis0 = {1, 0};
    p.axis1 = {0, 1};
    return p;
  }
  const float* rows = m.n_data > 0 ? m.data_samples.data() : fallback_rows;
  const int n = m.n_data > 0 ? m.n_data : n_fallback;
  p.mean.assign(dim, 0.f);
  p.axis0.assign(dim, 0.f);
  p.axis1.assign(dim, 0.f);
  if (!rows || n < 2) {
    p.axis0[0] = 1;
    if (dim > 1) p.axis1[1] = 1;
    return p;
  }
  Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> X(rows, n, dim);
  const Eigen::MatrixXd Xd = X.cast<double>();
  const Eigen::RowVectorXd mean = Xd.colwise().mean();
  const Eigen::MatrixXd Xc = Xd.rowwise() - mean;
  const Eigen::MatrixXd C = Xc.transpose() * Xc / std::max(1, n - 1);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(C);  // eigenvalues ascending
  for (int d = 0; d < dim; ++d) {
    p.mean[d] = float(mean(d));
    p.axis0[d] = float(es.eigenvectors()(d, dim - 1));
    p.axis1[d] = float(es.eigenvectors()(d, dim - 2));
  }
  p.spread = std::sqrt(std::max(0.0, es.eigenvalues()(dim - 1)));
  return p;
}

CameraFit fit_camera(const DiffusionModel& m, const Projection& p) {
  CameraFit c;
  const int dim = m.net.dim;
  if (m.n_data == 0) return c;
  double lo[2] = {1e30, 1e30}, hi[2] = {-1e30, -1e30};
  for (int i = 0; i < m.n_data; ++i) {
    const float* r = m.data_samples.data() + size_t(i) * dim;
    double q[2] = {0, 0};
    for (int d = 0; d < dim; ++d) {
      const double v = r[d] - p.mean[d];
      q[0] += v * p.axis0[d];
      q[1] += v * p.axis1[d];
    }
    for (int k = 0; k < 2; ++k) lo[k] = std::min(lo[k], q[k]), hi[k] = std::max(hi[k], q[k]);
  }
  c.cx = 0.5 * (lo[0] + hi[0]);
  c.cy = 0.5 * (lo[1] + hi[1]);
  // Unit noise must fit as well: +-3.2 around the projected origin of the noise (the mean for PCA).
  c.half_h = std::max({0.6 * (hi[1] - lo[1]), 0.6 * (hi[0] - lo[0]) * 0.75, 3.2});
  if (dim != 2) c.cx = c.cy = 0;
  return c;
}

int image_side(const DiffusionModel& m) {
  const int dim = m.net.dim;
  auto it = m.metadata.find("image_shape");
  if (it != m.metadata.end()) {
    int a = 0, b = 0;
    if (std::sscanf(it->second.c_str(), "%dx%d", &a, &b) == 2 && a > 0 && a == b && a * b == dim) return a;
  }
  if (dim != 64) return 0;
  return 8;
}

}  // namespace diffscope::ui
