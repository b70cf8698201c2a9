// train_run.cpp — the training loop of train_run.h.
#include "train/train_run.h"

#include <algorithm>
#include <chrono>
#include <deque>

#include "base/errors.h"
#include "platform/atomic_write.h"

namespace diffscope::train {
void write_run_outputs(const TrainConfig& c, const TrainData& d, const TrainState& s, const RunOptions& o,
                       const char* backend, double seconds) {
  const std::map<std::string, std::string> extra = {
      {"trained_with", std::string("diffscope train (") + backend + " backend)"},
      {"train_seconds", std::to_string(seconds)}};
  AtomicFileSet set;
  set.add(o.out, o.out_arg, model_file_bytes(c, d, s, extra));
  if (!o.checkpoint.empty()) set.add(o.checkpoint, o.checkpoint_arg, checkpoint_bytes(c, d, s, seconds));
  set.commit();
}

namespace {

// The mean of the last up to 100 batch losses.
struct RecentLoss {
  std::deque<double> values;
  double sum = 0;
  double add(double loss) {
    values.push_back(loss);
    sum += loss;
    if (values.size() > 100) {
      sum -= values.front();
      values.pop_front();
    }
    return sum / double(values.size());
  }
};

}  // namespace

std::string default_checkpoint_path(const std::string& out) {
  const std::string ext = ".safetensors";
  if (out.size() > ext.size() && out.compare(out.size() - ext.size(), ext.size(), ext) == 0)
    return out.substr(0, out.size() - ext.size()) + ".ckpt" + ext;
  return out + ".ckpt.safetensors";
}

RunResult run_training(const TrainConfig& c, const TrainData& d, const RunOptions& o, const TrainProgress& progress,
                       const std::function<bool()>& stop) {
  auto trainer = o.make_trainer(c, d);
  if (o.resume) {
    if (o.resume->data_sha256 != data_digest(d) || o.resume->dim != d.dim)
      throw InvalidInput("the data differ from the checkpoint's (sha256 of the prepared rows " + data_digest(d) +
                         ", the checkpoint's " + o.resume->data_sha256 + "); valid: the data, --holdout, --normalize "
                         "and --mixture-rows of the run that wrote it");
    trainer->set_state(o.resume->state);
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  const double before = o.resume ? o.resume->seconds : 0.0;  // a resumed run's earlier time
  auto write_outputs = [&](const TrainState& s, double seconds) {
    if (!o.out.empty()) write_run_outputs(c, d, s, o, trainer->backend(), before + seconds);
  };
  RunResult r;
  RecentLoss recent;
  std::vector<double> losses;
  while (trainer->steps_done() < c.steps) {
    if (stop && stop()) {
      r.stopped = true;
      break;
    }
    // The steps of one call: up to the trainer's chunk, the end, the next periodic checkpoint and observation.
    const int64_t k0 = trainer->steps_done();
    int64_t n = std::min(c.steps - k0, std::max<int64_t>(1, trainer->steps_per_call()));
    if (o.checkpoint_every > 0) n = std::min(n, o.checkpoint_every - k0 % o.checkpoint_every);
    if (o.observe && o.observe_every > 0) n = std::min(n, o.observe_every - k0 % o.observe_every);
    losses.resize(size_t(n));
    trainer->run_steps(n, losses.data());
    for (int64_t i = 0; i < n; ++i) {
      r.last_loss = recent.add(losses[size_t(i)]);
      if (o.on_step) o.on_step(k0 + i + 1, losses[size_t(i)]);
      if (progress) progress(k0 + i + 1, c.steps, r.last_loss, learning_rate(c, k0 + i));
    }
    const int64_t done = k0 + n;
    if (o.checkpoint_every > 0 && done % o.checkpoint_every == 0 && done < c.steps)
      write_outputs(trainer->state(), elapsed());
    if (o.observe && o.observe_every > 0 && done % o.observe_every == 0 && done < c.steps)
      o.observe(trainer->state());
  }
  const TrainState s = trainer->state();
  r.steps = s.step;
  r.seconds = elapsed();
  write_outputs(s, r.seconds);
  if (o.observe) o.observe(s);
  return r;
}

}  // namespace diffscope::train
