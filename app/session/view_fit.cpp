// view_fit.cpp — PCA projection and camera fitting.
#include "session/view_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>

namespace diffscope {

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

CameraFit fit_camera(const DiffusionModel& m, const Projection& p, double pane_aspect, const float* rows,
                     int n_rows) {
  const int dim = m.net.dim;
  auto project = [&](const float* r, double q[2]) {  // r = nullptr: the origin
    q[0] = q[1] = 0;
    for (int d = 0; d < dim; ++d) {
      const double v = (r ? r[d] : 0.0) - p.mean[d];
      q[0] += v * p.axis0[d];
      q[1] += v * p.axis1[d];
    }
  };
  constexpr double kNoise = 3.2;  // unit noise: +-3.2 holds all but ~1e-3 of it per axis
  double o[2];
  project(nullptr, o);
  double lo[2] = {o[0] - kNoise, o[1] - kNoise}, hi[2] = {o[0] + kNoise, o[1] + kNoise};
  auto include = [&](const double q[2]) {
    for (int k = 0; k < 2; ++k) lo[k] = std::min(lo[k], q[k]), hi[k] = std::max(hi[k], q[k]);
  };
  for (int i = 0; i < m.n_data; ++i) {
    double q[2];
    project(m.data_samples.data() + size_t(i) * dim, q);
    include(q);
  }
  if (rows && n_rows > 0) {  // every finite point, but for far outliers (> 3x the 99th percentile radius)
    std::vector<double> qx, qy;
    for (int i = 0; i < n_rows; ++i) {
      double q[2];
      project(rows + size_t(i) * dim, q);
      if (std::isfinite(q[0]) && std::isfinite(q[1])) qx.push_back(q[0]), qy.push_back(q[1]);
    }
    if (!qx.empty()) {
      auto median = [](std::vector<double> a) {
        std::nth_element(a.begin(), a.begin() + a.size() / 2, a.end());
        return a[a.size() / 2];
      };
      const double mx = median(qx), my = median(qy);
      std::vector<double> r(qx.size());
      for (size_t i = 0; i < qx.size(); ++i) r[i] = std::hypot(qx[i] - mx, qy[i] - my);
      std::vector<double> sorted = r;
      const size_t i99 = std::min(sorted.size() - 1, static_cast<size_t>(0.99 * (sorted.size() - 1) + 0.5));
      std::nth_element(sorted.begin(), sorted.begin() + i99, sorted.end());
      const double r_max = 3.0 * sorted[i99];
      for (size_t i = 0; i < qx.size(); ++i)
        if (r[i] <= r_max) {
          const double q[2] = {qx[i], qy[i]};
          include(q);
        }
    }
  }
  // The pane's real aspect, however tall or wide (a 16x16384 PNG is 1/1024); only a degenerate pane
  // (zero, negative or not finite) falls back to square.
  const double aspect = pane_aspect > 0 && std::isfinite(pane_aspect) ? pane_aspect : 1.0;
  CameraFit c;
  c.cx = 0.5 * (lo[0] + hi[0]);
  c.cy = 0.5 * (lo[1] + hi[1]);
  c.half_h = 0.55 * std::max(hi[1] - lo[1], (hi[0] - lo[0]) / aspect);
  return c;
}

CameraFit fit_view_to_aspect(const CameraFit& c, double from_aspect, double to_aspect) {
  auto real = [](double a) { return a > 0 && std::isfinite(a) ? a : 1.0; };
  CameraFit out = c;
  out.half_h = std::max(c.half_h, c.half_h * real(from_aspect) / real(to_aspect));
  return out;
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

}  // namespace diffscope
