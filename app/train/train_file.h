// train_file.h — what a training run writes (SEMANTICS §11): the model file, in the reference module's layout
// (tools/reference_module.py state_dict: eps_net.{0,2,4}.{weight,bias} float32, the VP schedule buffers for the
// VP objectives, data_samples) with its __metadata__, loadable by load_diffusion_model and load_reference; and the
// checkpoint beside it (the TrainState, the settings and the data's digest), from which a run resumes.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "train/trainer.h"

namespace diffscope::train {

// The model file's bytes: the EMA weights of `s` (what the run trained; s.step steps), the held-out rows as
// data_samples, and metadata: the family keys (prediction_type, time_input: t/T for the VP objectives, s for flow),
// T and the schedule (VP), dim, hidden, the data normalisation (data_offset, data_scale, data_transform,
// normalization), the settings (config_metadata), training_steps = s.step, plus `extra` (e.g. train_seconds).
std::string model_file_bytes(const TrainConfig& c, const TrainData& d, const TrainState& s,
                             const std::map<std::string, std::string>& extra);

// The checkpoint's bytes: tensors train.params, train.adam_m, train.adam_v, train.ema (F32, (P,)); metadata kind
// diffscope_train_checkpoint, the settings, step, dim, data_sha256 (data_digest), the normalisation and
// train_seconds (the run's wall time so far, which a resumed run adds to).
std::string checkpoint_bytes(const TrainConfig& c, const TrainData& d, const TrainState& s, double seconds = 0);

// The digest of the prepared data (the rows trained on and held out, after normalisation): a resumed run must
// train on the same rows.
std::string data_digest(const TrainData& d);

struct Checkpoint {
  TrainConfig config;
  TrainState state;
  int dim = 0;
  std::string data_sha256;
  double seconds = 0;  // train_seconds of the run so far (0 in a checkpoint written without it)
};
// Reads a checkpoint; InvalidInput naming `arg` and the file when it is not one (or is malformed).
Checkpoint read_checkpoint(const std::string& path, const std::string& arg);

}  // namespace diffscope::train
