// train_run.cpp — the training loop of train_run.h.
#include "train/train_run.h"

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
  std::deque<double> recent;
  double recent_sum = 0;
  while (trainer->steps_done() < c.steps) {
    if (stop && stop()) {
      r.stopped = true;
      break;
    }
    const int64_t k = trainer->steps_done();
    const double loss = trainer->step();
    recent.push_back(loss);
    recent_sum += loss;
    if (recent.size() > 100) {
      recent_sum -= recent.front();
      recent.pop_front();
    }
    r.last_loss = recent_sum / double(recent.size());
    if (o.on_step) o.on_step(k + 1, loss);
    if (progress) progress(k + 1, c.steps, r.last_loss, learning_rate(c, k));
    if (o.checkpoint_every > 0 && (k + 1) % o.checkpoint_every == 0 && k + 1 < c.steps)
      write_outputs(trainer->state(), elapsed());
    if (o.observe && o.observe_every > 0 && (k + 1) % o.observe_every == 0 && k + 1 < c.steps)
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
