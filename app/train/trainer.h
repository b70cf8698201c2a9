// trainer.h — the training loop's one step behind an interface, so that backends plug in behind it (the CPU
// trainer here; a GPU trainer with the same state and the same random numbers). SEMANTICS §11.
//
// A step k (0-based): the batch (train_rng.h: data rows, levels, noise; objective.h: states, targets, weights),
// the network's forward and backward (mlp.h), Adam at learning_rate(k) (adam.h, step t = k + 1), then the EMA with
// ema_decay(k). The state after k steps is everything the next step needs: a checkpoint is this state.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "train/mlp.h"
#include "train/objective.h"
#include "train/train_config.h"
#include "train/train_data.h"

namespace diffscope::train {

// What resuming needs (the random stream is counter-based: the seed in the config and `step` are its state).
struct TrainState {
  int64_t step = 0;                           // steps completed
  std::vector<float> params, adam_m, adam_v;  // MlpLayout order
  std::vector<float> ema;                     // the averaged weights (what a model file holds)
};

class Trainer {
 public:
  virtual ~Trainer() = default;
  virtual const char* backend() const = 0;
  // Runs step state().step and returns its batch loss (the weighted MSE before the update).
  virtual double step() = 0;
  // Runs n steps and writes their batch losses to losses[0, n): the same as n calls of step(), which a backend may
  // run without waiting between them (the CUDA trainer reads the losses back once at the end).
  virtual void run_steps(int64_t n, double* losses) {
    for (int64_t i = 0; i < n; ++i) losses[i] = step();
  }
  // How many steps run_training gives one run_steps call at most (between its progress reports and stop polls).
  virtual int64_t steps_per_call() const { return 1; }
  virtual TrainState state() const = 0;
  virtual int64_t steps_done() const = 0;
  // Replaces the state (a resumed checkpoint); throws InvalidInput when its sizes do not fit the layout.
  virtual void set_state(const TrainState& s) = 0;
};

// The initial state: every weight and bias uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)] (nn.Linear's default
// bounds) from Philox (train_rng.h init_uniform), zero moments, the EMA equal to the weights.
TrainState initial_state(const MlpLayout& L, uint64_t seed);

// The batch of step k: u (B, dim+1) = [alpha x0 + sigma eps, time], y (B, dim) the targets, w (B) the loss
// weights; rows [row_begin, row_begin + u.rows()) of the batch.
template <class Real>
void build_batch(const TrainConfig& c, const LevelTable& table, const TrainData& d, int64_t k, int64_t row_begin,
                 MlpMat<Real>& u, MlpMat<Real>& y, std::vector<Real>& w);

// The CPU trainer: float32, the batch cut into blocks of kCpuBlockRows rows computed on the CPU threads
// (platform/cpu_threads.h) and their gradients added in block order, so the result does not depend on the thread
// count. `d` must outlive the trainer.
constexpr int kCpuBlockRows = 512;
std::unique_ptr<Trainer> make_cpu_trainer(const TrainConfig& c, const TrainData& d);

}  // namespace diffscope::train
