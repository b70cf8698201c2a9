// cpu_trainer.cpp — the CPU trainer of trainer.h: float32 forward and backward with Eigen, Adam and the EMA.
#include "train/trainer.h"

#include <cmath>

#include "base/errors.h"
#include "platform/cpu_threads.h"
#include "train/adam.h"
#include "train/train_rng.h"

namespace diffscope::train {

TrainState initial_state(const MlpLayout& L, uint64_t seed) {
  TrainState s;
  s.params.resize(L.size);
  const struct { size_t begin, end; int fan_in; } parts[] = {
      {L.W1, L.W2, L.dim + 1}, {L.W2, L.W3, L.hidden}, {L.W3, L.size, L.hidden}};
  for (const auto& p : parts) {
    const double bound = 1.0 / std::sqrt(double(p.fan_in));
    for (size_t i = p.begin; i < p.end; ++i) s.params[i] = float(bound * init_uniform(seed, i));
  }
  s.adam_m.assign(L.size, 0.0f);
  s.adam_v.assign(L.size, 0.0f);
  s.ema = s.params;
  return s;
}

template <class Real>
void build_batch(const TrainConfig& c, const LevelTable& table, const TrainData& d, int64_t k, int64_t row_begin,
                 MlpMat<Real>& u, MlpMat<Real>& y, std::vector<Real>& w) {
  const int D = d.dim;
  std::vector<float> eps(static_cast<size_t>(D) + 4);
  std::vector<Real> x0(static_cast<size_t>(D)), e(static_cast<size_t>(D));
  w.resize(size_t(u.rows()));
  for (Eigen::Index r = 0; r < u.rows(); ++r) {
    const uint32_t b = uint32_t(row_begin + r);
    const auto words = batch_row_words(c.seed, uint64_t(k), b);
    const float* row = &d.train[index_of(words[0], uint64_t(d.n_train)) * size_t(D)];
    const Level lv = draw_level(c, table, words[1], words[2]);
    batch_row_noise(c.seed, uint64_t(k), b, D, eps.data());
    for (int i = 0; i < D; ++i) {
      x0[size_t(i)] = Real(row[i]);
      e[size_t(i)] = Real(eps[size_t(i)]);
      u(r, i) = Real(lv.alpha * x0[size_t(i)] + lv.sigma * e[size_t(i)]);
    }
    u(r, D) = Real(lv.time);
    objective_target<Real>(c.objective, x0.data(), e.data(), lv.alpha, lv.sigma, D, &y(r, 0));
    w[size_t(r)] = Real(loss_weight(c, lv.alpha, lv.sigma));
  }
}
template void build_batch<float>(const TrainConfig&, const LevelTable&, const TrainData&, int64_t, int64_t,
                                 MlpMat<float>&, MlpMat<float>&, std::vector<float>&);
template void build_batch<double>(const TrainConfig&, const LevelTable&, const TrainData&, int64_t, int64_t,
                                  MlpMat<double>&, MlpMat<double>&, std::vector<double>&);

namespace {

// One block of a batch: its inputs, activations and gradient.
struct Block {
  MlpMat<float> u, y;
  std::vector<float> w, grad;
  MlpWorkspace<float> ws;
  double loss = 0;
};

class CpuTrainer final : public Trainer {
 public:
  CpuTrainer(const TrainConfig& c, const TrainData& d)
      : m_c(c), m_d(d), m_layout(d.dim, c.hidden), m_table(level_table(c)), m_state(initial_state(m_layout, c.seed)) {
    const int n_blocks = (c.batch + kCpuBlockRows - 1) / kCpuBlockRows;
    m_blocks.resize(size_t(n_blocks));
    for (int b = 0; b < n_blocks; ++b) {
      const int rows = std::min(kCpuBlockRows, c.batch - b * kCpuBlockRows);
      m_blocks[size_t(b)].u.resize(rows, d.dim + 1);
      m_blocks[size_t(b)].y.resize(rows, d.dim);
      m_blocks[size_t(b)].grad.resize(m_layout.size);
    }
    m_grad.resize(m_layout.size);
  }
  const char* backend() const override { return "cpu"; }
  TrainState state() const override { return m_state; }
  int64_t steps_done() const override { return m_state.step; }
  void set_state(const TrainState& s) override {
    const size_t n = m_layout.size;
    if (s.params.size() != n || s.adam_m.size() != n || s.adam_v.size() != n || s.ema.size() != n || s.step < 0)
      throw InvalidInput("the training state does not fit the network (dim " + std::to_string(m_layout.dim) +
                         ", hidden " + std::to_string(m_layout.hidden) + ": " + std::to_string(n) + " parameters)");
    m_state = s;
  }
  double step() override {
    const int64_t k = m_state.step;
    parallel_blocks(int64_t(m_blocks.size()), [&](int64_t b) { run_block(k, b); });
    double loss = 0;
    std::fill(m_grad.begin(), m_grad.end(), 0.0f);
    for (const Block& blk : m_blocks) {  // in block order: the same sum whatever the thread count
      loss += blk.loss;
      for (size_t i = 0; i < m_grad.size(); ++i) m_grad[i] += blk.grad[i];
    }
    adam_step(m_state.params.data(), m_grad.data(), m_state.adam_m.data(), m_state.adam_v.data(), m_layout.size,
              k + 1, learning_rate(m_c, k), m_c.beta1, m_c.beta2, m_c.adam_eps);
    ema_update(m_state.ema.data(), m_state.params.data(), m_layout.size, ema_decay(m_c.ema, k));
    m_state.step = k + 1;
    return loss;
  }

 private:
  void run_block(int64_t k, int64_t b) {
    Block& blk = m_blocks[size_t(b)];
    build_batch<float>(m_c, m_table, m_d, k, b * kCpuBlockRows, blk.u, blk.y, blk.w);
    const bool weighted = m_c.weighting != LossWeighting::None;
    mlp_forward(m_layout, m_state.params.data(), blk.u, blk.ws);
    blk.loss = mlp_backward(m_layout, m_state.params.data(), blk.u, blk.y, weighted ? blk.w.data() : nullptr, blk.ws,
                            blk.grad.data(), Eigen::Index(m_c.batch));
  }

  TrainConfig m_c;
  const TrainData& m_d;
  MlpLayout m_layout;
  LevelTable m_table;
  TrainState m_state;
  std::vector<Block> m_blocks;
  std::vector<float> m_grad;
};

}  // namespace

std::unique_ptr<Trainer> make_cpu_trainer(const TrainConfig& c, const TrainData& d) {
  return std::make_unique<CpuTrainer>(c, d);
}

}  // namespace diffscope::train
