// cpu_reference.h — the CPU reference of every computation (SEMANTICS §2-§5) as Eigen templates over
// Real = float (the CPU backend) or double (the judge of every CPU and GPU test). Simple on purpose: each
// function is the formula it cites, applied to blocks of rows so that the products are Eigen GEMMs.
// All arrays are host memory, row-major. Nothing here validates user input (base/ranges.h does).
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "base/philox_normal.h"
#include "diffusion/guidance.h"
#include "diffusion/step_table.h"
#include "model/gaussian_mixture.h"
#include "model/model.h"
#include "platform/cpu_threads.h"

namespace diffscope::cpu_ref {

template <class Real>
using Matrix = Eigen::Matrix<Real, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
template <class Real>
using RowVector = Eigen::Matrix<Real, 1, Eigen::Dynamic>;
template <class Real>
using MatrixMap = Eigen::Map<Matrix<Real>>;

// Rows per block: big enough for efficient GEMMs, small enough that a batch splits over the cores. The blocks do
// not depend on the thread count, so neither do the results; a call of one block runs on the calling thread
// (platform/cpu_threads.h): handing it to another costs more than the work and makes small timings jump on a loaded
// machine.
constexpr int kBlockRows = 256;

// The eps-network (SEMANTICS §2) with weights converted to Real. Shapes as nn.Linear stores them (out, in).
template <class Real>
struct NetT {
  int dim = 0, hidden = 0, classes = 0;
  Matrix<Real> W1, W2, W3;   // (hidden, dim+1), (hidden, hidden), (dim, hidden)
  RowVector<Real> b1, b2, b3;  // (hidden), (hidden), (dim)
  Matrix<Real> class_emb;      // (classes + 1, hidden), row classes the null class; empty without classes

  explicit NetT(const EpsNet& net) : dim(net.dim), hidden(net.hidden), classes(net.classes) {
    auto mat = [](const std::vector<float>& v, int rows, int cols) {
      return Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(v.data(), rows, cols)
          .template cast<Real>()
          .eval();
    };
    auto vec = [](const std::vector<float>& v) {
      return Eigen::Map<const Eigen::Matrix<float, 1, Eigen::Dynamic>>(v.data(), static_cast<Eigen::Index>(v.size()))
          .template cast<Real>()
          .eval();
    };
    W1 = mat(net.W1, hidden, dim + 1);
    W2 = mat(net.W2, hidden, hidden);
    W3 = mat(net.W3, dim, hidden);
    b1 = vec(net.b1);
    b2 = vec(net.b2);
    b3 = vec(net.b3);
    if (classes > 0) class_emb = mat(net.class_emb, classes + 1, hidden);
  }
};

// Scratch matrices for one block of rows (one per thread). abar: per-row noise level of U's rows (read by
// analytic models only; the network reads t/T from U's last column). cls: the class a class-conditional network
// reads (SEMANTICS §2), -1 the null class.
template <class Real>
struct Scratch {
  int cls = -1;
  Matrix<Real> U, H1, H2, E, Eu;
  std::vector<double> abar;
  std::vector<Real> logg;
};

template <class Real>
Real silu(Real z) {
  return z / (Real(1) + std::exp(-z));  // z * sigmoid(z)
}

// eps for the rows of s.U = [x, t/T] (n, dim+1); result in s.E (n, dim) (SEMANTICS §2).
template <class Real>
void eps_rows(const NetT<Real>& net, Scratch<Real>& s) {
  s.H1.noalias() = s.U * net.W1.transpose();
  s.H1.rowwise() += net.b1;
  if (net.classes > 0) s.H1.rowwise() += net.class_emb.row(s.cls < 0 ? net.classes : s.cls);
  s.H1 = s.H1.unaryExpr([](Real z) { return silu(z); });
  s.H2.noalias() = s.H1 * net.W2.transpose();
  s.H2.rowwise() += net.b2;
  s.H2 = s.H2.unaryExpr([](Real z) { return silu(z); });
  s.E.noalias() = s.H2 * net.W3.transpose();
  s.E.rowwise() += net.b3;
}

// eps for n rows x (n, dim) all at timestep t: out (n, dim). Convenience for tests and the GUI's field view.
template <class Real>
void eps_batch(const NetT<Real>& net, const Real* x, int n, int t, int T, Real* out) {
  Scratch<Real> s;
  s.U.resize(n, net.dim + 1);
  s.U.leftCols(net.dim) = Eigen::Map<const Matrix<Real>>(x, n, net.dim);
  s.U.col(net.dim).setConstant(static_cast<Real>(t) / static_cast<Real>(T));
  eps_rows(net, s);
  MatrixMap<Real>(out, n, net.dim) = s.E;
}

// The eps model of a DiffusionModel: its network (SEMANTICS §2) or its analytic Gaussian mixture (§6).
template <class Real>
struct EpsModelT {
  int dim = 0;
  std::optional<NetT<Real>> net;
  const GaussianMixture* mixture = nullptr;  // points into the DiffusionModel, which must outlive this

  explicit EpsModelT(const DiffusionModel& m) : dim(m.net.dim) {
    if (m.mixture)
      mixture = &*m.mixture;
    else
      net.emplace(m.net);
  }
};

// eps for the rows of s.U = [x, t/T] at noise levels s.abar (one per row): result in s.E (n, dim).
template <class Real>
void eps_rows(const EpsModelT<Real>& model, Scratch<Real>& s) {
  if (model.net) return eps_rows(*model.net, s);
  const int dim = model.dim;
  const Eigen::Index n = s.U.rows();
  s.E.resize(n, dim);
  s.logg.resize(model.mixture->K);
  for (Eigen::Index i = 0; i < n; ++i)
    mixture_eps_row<Real>(*model.mixture, s.U.row(i).data(), s.abar[i], s.E.row(i).data(), s.logg.data(), s.cls);
}

// Guidance rescale (SEMANTICS §12) of the guided rows s.E against the conditional rows cond: per row, o_r = o_w
// std(o_c) / std(o_w), then phi o_r + (1 - phi) o_w; a row with std(o_w) = 0 is kept.
template <class Real>
void rescale_guided(const Matrix<Real>& cond, Real phi, Scratch<Real>& s) {
  auto std_of = [](const auto& row) {
    const Real mean = row.mean();
    return std::sqrt((row.array() - mean).square().sum());  // the common 1 / dim cancels in the ratio
  };
  for (Eigen::Index i = 0; i < s.E.rows(); ++i) {
    const Real sw = std_of(s.E.row(i));
    if (sw == Real(0)) continue;
    const Real ratio = std_of(cond.row(i)) / sw;
    s.E.row(i) = phi * (s.E.row(i) * ratio) + (Real(1) - phi) * s.E.row(i);
  }
}

// The output the solver reads at one evaluation whose rows all sit at VP level abar (SEMANTICS §12): w = 1 the
// class c alone, w = 0 the null class alone (one evaluation each, used as is), else o_u + w (o_c - o_u) and the
// rescale. Result in s.E; a model without classes and no guidance is eps_rows itself.
template <class Real>
void guided_rows(const EpsModelT<Real>& model, const Guidance& g, double abar, Scratch<Real>& s) {
  const double w = g.weight_at(abar);
  s.cls = w == 0.0 ? -1 : g.class_label;
  eps_rows(model, s);
  if (w == 0.0 || w == 1.0) return;
  std::swap(s.E, s.Eu);  // Eu: the conditional rows for now
  s.cls = -1;
  eps_rows(model, s);
  std::swap(s.E, s.Eu);  // E: conditional, Eu: unconditional
  const Real wr = static_cast<Real>(w);
  if (g.rescale == 0.0) {
    s.E = s.Eu + wr * (s.E - s.Eu);
    return;
  }
  const Matrix<Real> cond = s.E;
  s.E = s.Eu + wr * (cond - s.Eu);
  rescale_guided(cond, static_cast<Real>(g.rescale), s);
}

// eps for n rows x (n, dim) at timestep t (an integer in [0, T-1]): out (n, dim), in blocks of kBlockRows rows
// over the CPU threads. For the GUI's field view.
template <class Real>
void eps_batch(const EpsModelT<Real>& model, const Schedule& sched, const Real* x, int n, int t, Real* out) {
  const int dim = model.dim;
  parallel_blocks((n + kBlockRows - 1) / kBlockRows, [&](int64_t blk) {
    const int r0 = static_cast<int>(blk) * kBlockRows, rows = std::min(kBlockRows, n - r0);
    Scratch<Real> s;
    s.U.resize(rows, dim + 1);
    s.U.leftCols(dim) = Eigen::Map<const Matrix<Real>>(x + static_cast<int64_t>(r0) * dim, rows, dim);
    s.U.col(dim).setConstant(static_cast<Real>(t) / static_cast<Real>(sched.T));
    s.abar.assign(rows, sched.alphas_cumprod[t]);
    eps_rows(model, s);
    MatrixMap<Real>(out + static_cast<int64_t>(r0) * dim, rows, dim) = s.E;
  });
}

// A step table's per-step arrays in Real (the float path's A, C, S equal the table's A32, C32, S32).
// A family table (StepTable::has_family_rows) adds the network's input scale and time value per step and heun's map.
template <class Real>
struct TableCoefficients {
  std::vector<Real> A, C, S, P, Dx, De, H;
  std::vector<Real> c_in, time, c_in2, time2, Gx, Go, Gx2, Go2;
  explicit TableCoefficients(const StepTable& tab)
      : A(cast(tab.A)), C(cast(tab.C)), S(cast(tab.S)), P(cast(tab.P)), Dx(cast(tab.Dx)), De(cast(tab.De)),
        H(cast(tab.H)), c_in(cast(tab.c_in)), time(cast(tab.time)), c_in2(cast(tab.c_in2)), time2(cast(tab.time2)),
        Gx(cast(tab.Gx)), Go(cast(tab.Go)), Gx2(cast(tab.Gx2)), Go2(cast(tab.Go2)) {}
  static std::vector<Real> cast(const std::vector<double>& v) { return std::vector<Real>(v.begin(), v.end()); }
};

// Normals for one row (SEMANTICS §7). Real = float: philox_normal_row, the code the GPU runs. Real = double:
// the same Philox words with the mapping v = ((u >> 8) + 0.5) 2^-24 and Box-Muller evaluated in float64
// (float32 cannot hold (u >> 8) + 0.5 exactly), so the double path is the exact formula.
template <class Real>
void normal_row(uint64_t seed, uint32_t row, uint32_t step_key, int dim, Real* z) {
  if constexpr (std::is_same_v<Real, float>) {
    philox_normal_row(seed, row, step_key, dim, z);
  } else {
    r123::Philox4x32 rng;
    const r123::Philox4x32::key_type key = {{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)}};
    const double kTwoPi = 6.283185307179586476925;
    for (int j = 0; 4 * j < dim; ++j) {
      const r123::Philox4x32::ctr_type ctr = {{row, step_key, static_cast<uint32_t>(j), 0u}};
      const r123::Philox4x32::ctr_type u = rng(ctr, key);
      double v[4], out[4];
      for (int q = 0; q < 4; ++q) v[q] = (static_cast<double>(u[q] >> 8) + 0.5) / 16777216.0;
      const double r0 = std::sqrt(-2.0 * std::log(v[0])), r1 = std::sqrt(-2.0 * std::log(v[2]));
      out[0] = r0 * std::cos(kTwoPi * v[1]);
      out[1] = r0 * std::sin(kTwoPi * v[1]);
      out[2] = r1 * std::cos(kTwoPi * v[3]);
      out[3] = r1 * std::sin(kTwoPi * v[3]);
      for (int q = 0; q < 4 && 4 * j + q < dim; ++q) z[4 * j + q] = static_cast<Real>(out[q]);
    }
  }
}

// Starting noise for n rows (SEMANTICS §3, §7: step_key T), x (n, dim); diffusion/sampling.h's
// fill_start_noise is the float instance of this.
template <class Real>
void start_noise(int T, int dim, uint64_t seed, int n, Real* x, uint32_t row_offset = 0) {
  for (int i = 0; i < n; ++i)
    normal_row<Real>(seed, row_offset + static_cast<uint32_t>(i), static_cast<uint32_t>(T), dim,
                     x + static_cast<int64_t>(i) * dim);
}

// The fused denoise call (SEMANTICS §4) on one block of n rows: x (n, dim) in/out, t_start (n).
// For k = 0..S-1 a row with t = t_start[r] - k >= 0 takes x <- A[t] x + C[t] eps(x, t/T) (ddpm-mean,
// `tab` indexed by t: build_t_indexed_ddpm_mean); a row with t < 0 is frozen: no network evaluation, no
// table read. traj: optional, frame 1 of this block's first row; frame k at traj + (k-1) frame_stride.
template <class Real>
void denoise_block(const EpsModelT<Real>& net, const std::vector<Real>& A, const std::vector<Real>& C,
                   const std::vector<double>& abar, int T, Real* x, const int64_t* t_start, int n, int S, Real* traj,
                   int64_t frame_stride) {
  const int dim = net.dim;
  MatrixMap<Real> X(x, n, dim);
  Scratch<Real> s;
  std::vector<int> active;
  active.reserve(n);
  for (int k = 0; k < S; ++k) {
    active.clear();
    for (int r = 0; r < n; ++r)
      if (t_start[r] - k >= 0) active.push_back(r);
    if (active.empty() && !traj) break;  // every row is frozen from here on
    if (!active.empty()) {
      s.U.resize(static_cast<Eigen::Index>(active.size()), dim + 1);
      s.abar.resize(active.size());
      for (size_t i = 0; i < active.size(); ++i) {
        const int r = active[i];
        s.U.row(i).head(dim) = X.row(r);
        s.U(i, dim) = static_cast<Real>(t_start[r] - k) / static_cast<Real>(T);
        s.abar[i] = abar[t_start[r] - k];
      }
      eps_rows(net, s);
      for (size_t i = 0; i < active.size(); ++i) {
        const int r = active[i];
        const int64_t t = t_start[r] - k;
        X.row(r) = A[t] * X.row(r) + C[t] * s.E.row(i);
      }
    }
    if (traj) std::memcpy(traj + k * frame_stride, x, sizeof(Real) * n * dim);
  }
}

// The network's input rows for one evaluation: s.U = [c_in x, time] (a family table) or [x, t_net / T] (§2's plain
// network), s.abar the level an analytic model reads.
template <class Real>
void set_inputs(Scratch<Real>& s, const MatrixMap<Real>& X, const StepTable& tab, const TableCoefficients<Real>& c,
                int k, bool second) {
  const int dim = static_cast<int>(X.cols());
  if (tab.has_family_rows()) {
    s.U.leftCols(dim) = (second ? c.c_in2 : c.c_in)[k] * X;
    s.U.col(dim).setConstant((second ? c.time2 : c.time)[k]);
  } else {
    s.U.leftCols(dim) = X;
    s.U.col(dim).setConstant(static_cast<Real>(second ? tab.t_net2[k] : tab.t_net[k]) / static_cast<Real>(tab.T));
  }
  s.abar.assign(X.rows(), second ? tab.abar2[k] : tab.abar[k]);
}

// Steps [k_begin, k_end) of a step table on one block of n rows (SEMANTICS §3, the update of StepTable):
// x <- A[k] x + C[k] o + P[k] prev + S[k] z, o the network's output at step k's input (set_inputs), z from Philox
// with counter row `first_row + r`, step_key noise_key[k] (SEMANTICS §7; drawn only when S[k] != 0); heun adds
// H[k] (g2 - g) (g = o, or on a family table Gx x + Go o and g2 = Gx2 y + Go2 o2); prev (n, dim), the previous data
// prediction Dx x + De o, is read and rewritten when the table uses it. frames: optional, the state after step
// k_begin at frames, after step k at frames + (k - k_begin) frame_stride.
template <class Real>
void run_steps_block(const EpsModelT<Real>& net, const StepTable& tab, const TableCoefficients<Real>& c, int k_begin,
                     int k_end, Real* x, int n, uint64_t seed, uint32_t first_row, Real* frames, int64_t frame_stride,
                     Real* prev) {
  const int dim = net.dim;
  MatrixMap<Real> X(x, n, dim);
  Scratch<Real> s;
  Matrix<Real> X0, E1;
  std::vector<Real> z(dim);
  s.U.resize(n, dim + 1);
  const bool heun_map = !c.Gx.empty();
  for (int k = k_begin; k < k_end; ++k) {
    set_inputs(s, X, tab, c, k, false);
    guided_rows(net, tab.guidance, tab.abar[k], s);
    if (prev) X0 = c.Dx[k] * X + c.De[k] * s.E;
    const bool second = !c.H.empty() && c.H[k] != Real(0);
    if (second) E1 = heun_map ? (c.Gx[k] * X + c.Go[k] * s.E).eval() : s.E;
    X = c.A[k] * X + c.C[k] * s.E;
    if (prev && c.P[k] != Real(0)) X += c.P[k] * MatrixMap<Real>(prev, n, dim);
    if (c.S[k] != Real(0)) {
      for (int r = 0; r < n; ++r) {
        normal_row<Real>(seed, first_row + static_cast<uint32_t>(r), tab.noise_key[k], dim, z.data());
        for (int d = 0; d < dim; ++d) X(r, d) += c.S[k] * z[d];
      }
    }
    if (second) {  // Heun's correction at the Euler point y (Karras et al. 2022 Alg. 1)
      set_inputs(s, X, tab, c, k, true);
      guided_rows(net, tab.guidance, tab.abar2[k], s);
      if (heun_map) s.E = c.Gx2[k] * X + c.Go2[k] * s.E;
      X += c.H[k] * (s.E - E1);
    }
    if (prev) MatrixMap<Real>(prev, n, dim) = X0;
    if (frames) std::memcpy(frames + (k - k_begin) * frame_stride, x, sizeof(Real) * n * dim);
  }
}

// The whole denoise call (SEMANTICS §4) over B rows in blocks over the CPU threads: x (B, dim) in/out, t_start (B),
// trajectory optional (S+1, B, dim) with frame 0 the input.
template <class Real>
void denoise(const DiffusionModel& model, Real* x, const int64_t* t_start, int B, int S, Real* trajectory) {
  const EpsModelT<Real> net(model);
  const StepTable tab = build_t_indexed_ddpm_mean(model.schedule, model.family);
  const TableCoefficients<Real> c(tab);
  const int dim = net.dim;
  const int64_t frame_stride = static_cast<int64_t>(B) * dim;
  if (trajectory) std::memcpy(trajectory, x, sizeof(Real) * frame_stride);
  const int n_blocks = (B + kBlockRows - 1) / kBlockRows;
  parallel_blocks(n_blocks, [&](int64_t blk) {
    const int r0 = static_cast<int>(blk) * kBlockRows, n = std::min(kBlockRows, B - r0);
    denoise_block(net, c.A, c.C, tab.abar, tab.T, x + static_cast<int64_t>(r0) * dim, t_start + r0, n, S,
                  trajectory ? trajectory + frame_stride + static_cast<int64_t>(r0) * dim : nullptr, frame_stride);
  });
}

// Steps [k_begin, k_end) of `tab` over B rows (SEMANTICS §3): x (B, dim) in/out; noise row = row_offset + i.
// frames optional (k_end - k_begin, B, dim), the state after each step. prev (B, dim): the previous data
// prediction, in/out, required when tab.uses_prev() (its content before step 0 is never read); the caller
// keeps it between calls so that a run split into launches equals one call. Throws std::invalid_argument
// when prev is needed and null.
template <class Real>
void run_steps(const DiffusionModel& model, const StepTable& tab, int k_begin, int k_end, Real* x, int B,
               uint64_t seed, Real* frames, uint32_t row_offset = 0, Real* prev = nullptr) {
  if (tab.uses_prev() && !prev)
    throw std::invalid_argument(std::string("run_steps: solver ") + sampler_name(tab.sampler) +
                                " needs the previous data prediction buffer (prev)");
  const EpsModelT<Real> net(model);
  const TableCoefficients<Real> c(tab);
  const int dim = net.dim;
  const int64_t frame_stride = static_cast<int64_t>(B) * dim;
  const int n_blocks = (B + kBlockRows - 1) / kBlockRows;
  parallel_blocks(n_blocks, [&](int64_t blk) {
    const int r0 = static_cast<int>(blk) * kBlockRows, n = std::min(kBlockRows, B - r0);
    run_steps_block(net, tab, c, k_begin, k_end, x + static_cast<int64_t>(r0) * dim, n, seed,
                    row_offset + static_cast<uint32_t>(r0), frames ? frames + static_cast<int64_t>(r0) * dim : nullptr,
                    frame_stride, prev && tab.uses_prev() ? prev + static_cast<int64_t>(r0) * dim : nullptr);
  });
}

// The bias-free 3-layer MLP (SEMANTICS §5): y = relu(relu(x W1^T) W2^T) W3^T; x (B, d0) -> y (B, d3).
template <class Real>
void mlp3(const Mlp3Weights& w, const Real* x, int B, Real* y) {
  auto mat = [](const std::vector<float>& v, int rows, int cols) {
    return Eigen::Map<const Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(v.data(), rows, cols)
        .template cast<Real>()
        .eval();
  };
  const Matrix<Real> W1 = mat(w.W1, w.d1, w.d0), W2 = mat(w.W2, w.d2, w.d1), W3 = mat(w.W3, w.d3, w.d2);
  const int n_blocks = (B + kBlockRows - 1) / kBlockRows;
  parallel_blocks(n_blocks, [&](int64_t blk) {
    const int r0 = static_cast<int>(blk) * kBlockRows, n = std::min(kBlockRows, B - r0);
    Eigen::Map<const Matrix<Real>> X(x + static_cast<int64_t>(r0) * w.d0, n, w.d0);
    Matrix<Real> H1 = (X * W1.transpose()).cwiseMax(Real(0));
    Matrix<Real> H2 = (H1 * W2.transpose()).cwiseMax(Real(0));
    MatrixMap<Real>(y + static_cast<int64_t>(r0) * w.d3, n, w.d3).noalias() = H2 * W3.transpose();
  });
}

}  // namespace diffscope::cpu_ref
