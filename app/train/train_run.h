// train_run.h — a whole training run for the front ends (CLI `train`, Python `diffscope.train`): the trainer's
// steps from the start or a checkpoint, progress, the stop request, and the outputs written all or none (the model
// file and its checkpoint; SEMANTICS §11: a stopped run writes the last complete step, the documented exception to
// "an interrupted command writes nothing", §9).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "train/train_file.h"

namespace diffscope::train {

// A trainer for a run's settings and data (make_cpu_trainer, gpu::make_cuda_trainer).
using TrainerFactory = std::function<std::unique_ptr<Trainer>(const TrainConfig&, const TrainData&)>;

struct RunOptions {
  std::string out;                   // the model file (.safetensors)
  std::string checkpoint;            // the checkpoint written beside it ("": none)
  int64_t checkpoint_every = 0;      // also write both every this many steps (0: only at the end or a stop)
  std::optional<Checkpoint> resume;  // the state to continue from (its settings are the run's)
  std::string out_arg = "--out", checkpoint_arg = "--checkpoint";  // how messages name them
  // The backend: the CPU trainer, or another Trainer with the same state and random numbers (trainer.h).
  TrainerFactory make_trainer = make_cpu_trainer;
  // Optional watchers (the app's training panel): every step's own batch loss (step k + 1, not averaged), and the
  // state every observe_every steps and after the last step or a stop (0: only then).
  std::function<void(int64_t step, double loss)> on_step;
  int64_t observe_every = 0;
  std::function<void(const TrainState&)> observe;
};

struct RunResult {
  int64_t steps = 0;        // steps completed (the state's step)
  double seconds = 0;       // wall time of this call's steps (a resumed run's earlier time not included)
  double last_loss = 0;     // mean batch loss over the last up to 100 steps
  bool stopped = false;     // `stop` asked for the end before the last step
};

// Progress: steps done, the total, the recent mean loss and the learning rate; called after every step.
using TrainProgress = std::function<void(int64_t done, int64_t total, double loss, double lr)>;

// Writes the model file `out` (EMA weights, train_seconds = `seconds`) and, unless `checkpoint` is "", the
// checkpoint beside it, both or neither (AtomicFileSet); the CLI's layout, used by every front end.
void write_run_outputs(const TrainConfig& c, const TrainData& d, const TrainState& s, const RunOptions& o,
                       const char* backend, double seconds);

// Runs config.steps steps (minus a resumed checkpoint's) on o.make_trainer's trainer. `stop` is polled between steps: when it
// returns true the outputs of the last complete step are written and the result says stopped (o.out "": nothing is
// written; the observers have the state). The files' train_seconds adds a resumed checkpoint's own. InvalidInput when the
// resumed checkpoint's data digest differs from `d`'s; the writes' errors as AtomicFileSet::commit's.
RunResult run_training(const TrainConfig& c, const TrainData& d, const RunOptions& o, const TrainProgress& progress,
                       const std::function<bool()>& stop);

// "m.safetensors" -> "m.ckpt.safetensors": the default checkpoint path beside a model file.
std::string default_checkpoint_path(const std::string& out);

}  // namespace diffscope::train
