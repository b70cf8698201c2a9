// mlp.h — the eps-network of SEMANTICS §2 as a trainable function: forward and backward of a batch, for one
// scalar type (float: the CPU trainer; double: the gradient checks' reference). Eigen, row-major.
//
//   u  = [x, time]          (B, dim+1)
//   z1 = u W1^T + b1        a1 = SiLU(z1)      (B, hidden)
//   z2 = a1 W2^T + b2       a2 = SiLU(z2)      (B, hidden)
//   o  = a2 W3^T + b3                          (B, dim)
//   loss = sum_b w_b |o_b - y_b|^2 / (B dim)   (PyTorch's mean squared error when every w_b = 1)
//
// The parameters are one flat vector in the reference module's order (W1, b1, W2, b2, W3, b3; matrices (out, in)
// row-major, as nn.Linear stores them), so Adam, the EMA and the files treat them as one array.
#pragma once
#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <vector>

namespace diffscope::train {

// Where each parameter tensor sits in the flat vector.
struct MlpLayout {
  int dim = 0, hidden = 0;
  size_t W1 = 0, b1 = 0, W2 = 0, b2 = 0, W3 = 0, b3 = 0, size = 0;
  MlpLayout() = default;
  MlpLayout(int d, int h) : dim(d), hidden(h) {
    const size_t H = size_t(h), D = size_t(d);
    W1 = 0;
    b1 = W1 + H * (D + 1);
    W2 = b1 + H;
    b2 = W2 + H * H;
    W3 = b2 + H;
    b3 = W3 + D * H;
    size = b3 + D;
  }
};

// The activations of one batch kept for the backward pass, and the gradient buffers (reused across steps).
template <class Real>
struct MlpWorkspace {
  using Mat = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Mat z1, s1, a1, z2, s2, a2, out, d_out, d1, d2;  // s = sigmoid(z), kept for SiLU's derivative
};

template <class Real>
using MlpMat = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

namespace detail {
template <class Real>
using CMap = Eigen::Map<const MlpMat<Real>>;
template <class Real>
using VMap = Eigen::Map<MlpMat<Real>>;
// s = sigmoid(z) and a = z s = SiLU(z), elementwise with Eigen's vectorised exp.
template <class Real>
void silu_into(const MlpMat<Real>& z, MlpMat<Real>& s, MlpMat<Real>& a) {
  s = ((-z.array()).exp() + Real(1)).inverse().matrix();
  a = (z.array() * s.array()).matrix();
}
}  // namespace detail

// o = net(u) for a batch: u (B, dim+1) row-major; fills ws.z1, a1, z2, a2, out (B, dim).
template <class Real>
void mlp_forward(const MlpLayout& L, const Real* params, const MlpMat<Real>& u, MlpWorkspace<Real>& ws) {
  using detail::CMap;
  const int D = L.dim, H = L.hidden;
  CMap<Real> W1(params + L.W1, H, D + 1), W2(params + L.W2, H, H), W3(params + L.W3, D, H);
  Eigen::Map<const Eigen::Matrix<Real, 1, Eigen::Dynamic>> b1(params + L.b1, H), b2(params + L.b2, H),
      b3(params + L.b3, D);
  ws.z1.noalias() = u * W1.transpose();
  ws.z1.rowwise() += b1;
  detail::silu_into(ws.z1, ws.s1, ws.a1);
  ws.z2.noalias() = ws.a1 * W2.transpose();
  ws.z2.rowwise() += b2;
  detail::silu_into(ws.z2, ws.s2, ws.a2);
  ws.out.noalias() = ws.a2 * W3.transpose();
  ws.out.rowwise() += b3;
}

// The weighted loss of the last forward against y (B, dim) with row weights w (B) (nullptr: all 1), and its
// gradient with respect to every parameter into grad (L.size values, overwritten). Call after mlp_forward on u.
// batch_rows: the B of the mean (u.rows() for a whole batch; the whole batch's rows when u is one block of it, so
// that the blocks' losses and gradients add up to the batch's).
template <class Real>
Real mlp_backward(const MlpLayout& L, const Real* params, const MlpMat<Real>& u, const MlpMat<Real>& y,
                  const Real* w, MlpWorkspace<Real>& ws, Real* grad, Eigen::Index batch_rows = 0) {
  using detail::CMap;
  using detail::VMap;
  const int D = L.dim, H = L.hidden;
  const Eigen::Index B = batch_rows > 0 ? batch_rows : u.rows();
  CMap<Real> W2(params + L.W2, H, H), W3(params + L.W3, D, H);
  ws.d_out = ws.out - y;
  Real loss = 0;
  const Real scale = Real(2) / (Real(B) * Real(D));
  for (Eigen::Index b = 0; b < u.rows(); ++b) {
    const Real wb = w ? w[b] : Real(1);
    loss += wb * ws.d_out.row(b).squaredNorm();
    ws.d_out.row(b) *= scale * wb;
  }
  VMap<Real>(grad + L.W3, D, H).noalias() = ws.d_out.transpose() * ws.a2;
  VMap<Real>(grad + L.b3, 1, D) = ws.d_out.colwise().sum();
  ws.d2.noalias() = ws.d_out * W3;
  ws.d2.array() *= ws.s2.array() * (Real(1) + ws.z2.array() * (Real(1) - ws.s2.array()));  // SiLU'(z2)
  VMap<Real>(grad + L.W2, H, H).noalias() = ws.d2.transpose() * ws.a1;
  VMap<Real>(grad + L.b2, 1, H) = ws.d2.colwise().sum();
  ws.d1.noalias() = ws.d2 * W2;
  ws.d1.array() *= ws.s1.array() * (Real(1) + ws.z1.array() * (Real(1) - ws.s1.array()));  // SiLU'(z1)
  VMap<Real>(grad + L.W1, H, D + 1).noalias() = ws.d1.transpose() * u;
  VMap<Real>(grad + L.b1, 1, H) = ws.d1.colwise().sum();
  return loss / (Real(B) * Real(D));
}

}  // namespace diffscope::train
