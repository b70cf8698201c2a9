// train_command.cpp — `diffscope train`: trains the eps-network of SEMANTICS §2 on a data set on the CPU (app/train/)
// or the GPU (gpu/cuda_trainer.h; `--backend cuda`, SEMANTICS §11) and writes a model file and its checkpoint; SIGINT / SIGTERM write the last complete
// step's files and exit 130 / 143.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "base/errors.h"
#include "cli/cli.h"
#include "cli/cli_util.h"
#include "platform/output_files.h"
#include "platform/stop_signal.h"
#include "train/train_run.h"

#if defined(DIFFSCOPE_HAVE_CUDA) && __has_include("gpu/cuda_trainer.h")
#include "gpu/cuda_backend.h"
#include "gpu/cuda_trainer.h"
#define DIFFSCOPE_CLI_HAS_CUDA_TRAINER 1
#endif

namespace diffscope::cli {
namespace {

struct TrainOptions {
  train::TrainConfig config;
  train::DataOptions data;
  std::string objective = "epsilon", time_sampling = "uniform", weighting = "none";
  std::string out, checkpoint, resume;
  std::string backend = "cpu", precision = "fp32";
  int64_t checkpoint_every = 0;
  bool quiet = false;
};

// "final_lr_frac" -> "--final-lr-frac": the CLI's spelling of a setting in messages.
std::string train_flag(const std::string& key) {
  std::string f = "--" + key;
  for (char& ch : f) if (ch == '_') ch = '-';
  return f;
}

// The settings options that --resume takes from the checkpoint instead (giving one is refused).
const char* const kSettingOptions[] = {"--objective", "--hidden", "--steps", "--batch", "--lr", "--warmup",
                                       "--final-lr-frac", "--ema", "--seed", "--time-sampling", "--logit-mean",
                                       "--logit-std", "--loss-weighting", "--snr-gamma", "--schedule",
                                       "--beta-start", "--beta-end"};

train::TrainConfig resolve_config(TrainOptions& o, const CLI::App& sub, std::optional<train::Checkpoint>& resume) {
  if (!o.resume.empty()) {
    for (const char* opt : kSettingOptions)
      if (sub.count(opt) > 0)
        throw InvalidInput(std::string(opt) + " cannot be given with --resume: the checkpoint " + o.resume +
                           " holds the run's settings");
    resume = train::read_checkpoint(o.resume, "--resume");
    return resume->config;
  }
  train::TrainConfig c = o.config;
  c.objective = train::parse_objective(o.objective, "--objective");
  c.time_sampling = train::parse_time_sampling(o.time_sampling, "--time-sampling");
  c.weighting = train::parse_loss_weighting(o.weighting, "--loss-weighting");
  train::check_train_config(c, train_flag);
  return c;
}

// The trainer of --backend and --precision; checked before the data are read. InvalidInput for a name that is not
// one or bf16 on the CPU (its trainer is float32); ResourceUnavailable (exit 3, as `sample --backend cuda`) for
// cuda in a build without CUDA or on a machine without a device.
train::TrainerFactory trainer_factory(const std::string& backend, const std::string& precision) {
  if (precision != "fp32" && precision != "bf16")
    throw InvalidInput("--precision = '" + precision + "' is not a training precision; valid: fp32, bf16");
  if (backend == "cpu") {
    if (precision != "fp32")
      throw InvalidInput("--precision = '" + precision + "' needs --backend cuda; valid with --backend cpu: fp32 "
                         "(the CPU trainer is float32)");
    return train::make_cpu_trainer;
  }
  if (backend != "cuda") throw InvalidInput("--backend = '" + backend + "' is not a training backend; valid: cpu, cuda");
#ifdef DIFFSCOPE_CLI_HAS_CUDA_TRAINER
  if (!gpu::cuda_device_available())
    throw ResourceUnavailable("--backend cuda: no CUDA device is usable here; use --backend cpu");
  gpu::CudaTrainerOptions o;
  o.precision = gpu::parse_train_precision(precision, "--precision");
  return [o](const train::TrainConfig& c, const train::TrainData& d) {
    try {
      return gpu::make_cuda_trainer(c, d, o);
    } catch (const ResourceUnavailable& e) {
      throw ResourceUnavailable(std::string("--backend cuda: ") + e.what() + "; use --backend cpu");
    }
  };
#else
  throw ResourceUnavailable("--backend cuda: this build has no CUDA support; use --backend cpu");
#endif
}

void print_summary(const train::TrainConfig& c, const train::TrainData& d, const std::string& backend) {
  std::string offset;
  for (double v : d.offset) offset += (offset.empty() ? "" : ", ") + std::to_string(v);
  std::fprintf(stderr,
               "train: %s, %lld training rows, %lld held out (data_samples), dim %d; normalization %s "
               "(x = (raw - [%s]) * %.6g)\n"
               "train: %s objective, hidden %d, batch %d, %lld steps, lr %g (%lld warm-up, cosine to %g x), EMA %g, "
               "time %s, loss weighting %s, seed %llu, %s backend\n",
               d.source.c_str(), (long long)d.n_train, (long long)d.n_held, d.dim, d.normalization.c_str(),
               offset.c_str(), d.scale, train::objective_name(c.objective), c.hidden, c.batch, (long long)c.steps,
               c.lr, (long long)c.warmup_steps(), c.final_lr_frac, c.ema, train::time_sampling_name(c.time_sampling),
               train::loss_weighting_name(c.weighting), (unsigned long long)c.seed, backend.c_str());
}

void run_train(TrainOptions& o, const CLI::App& sub) {
  std::optional<train::Checkpoint> resume;
  const train::TrainConfig c = resolve_config(o, sub, resume);
  check_output_path("--out", o.out);
  train::RunOptions run;
  run.make_trainer = trainer_factory(o.backend, o.precision);
  run.out = o.out;
  run.checkpoint = o.checkpoint.empty() ? train::default_checkpoint_path(o.out) : o.checkpoint;
  check_output_path("--checkpoint", run.checkpoint);
  if (o.checkpoint_every < 0)
    throw InvalidInput("--checkpoint-every = " + std::to_string(o.checkpoint_every) + " is out of range; valid: >= 0");
  run.checkpoint_every = o.checkpoint_every;
  // The two outputs, and a data file they would write over (the checkpoint may replace the one --resume read).
  std::vector<OutputFile> outputs = {{"--out", run.out}, {"--checkpoint", run.checkpoint}};
  std::error_code ec;
  if (std::filesystem::is_regular_file(o.data.source, ec)) outputs.push_back({"--data", o.data.source});
  check_distinct_outputs(outputs);
  o.data.seed = c.seed;
  const train::TrainData d = train::load_train_data(o.data, train_flag);
  run.resume = resume;
  if (!o.quiet) print_summary(c, d, o.backend == "cpu" ? "cpu" : "cuda " + o.precision);
  Progress progress("train", c.steps);
  auto on_step = [&](int64_t done, int64_t, double loss, double) {
    char label[64];
    std::snprintf(label, sizeof label, "train (loss %.4f)", loss);
    progress.set_label(label);
    progress.update(done);
  };
  StopSignalScope signals;
  const train::RunResult r = train::run_training(c, d, run, o.quiet ? train::TrainProgress() : on_step,
                                                 [] { return stop_signal() != 0; });
  progress.clear();
  std::fprintf(stderr, "train: %lld/%lld steps in %s (%.1f steps/s), loss %.4f (mean of the last 100); wrote %s and %s\n",
               (long long)r.steps, (long long)c.steps, duration_text(r.seconds).c_str(),
               r.seconds > 0 ? double(r.steps - (resume ? resume->state.step : 0)) / r.seconds : 0.0, r.last_loss,
               o.out.c_str(), run.checkpoint.c_str());
  if (r.stopped)
    throw Interrupted(stop_signal(), "wrote the last complete step (" + std::to_string(r.steps) + ") to " + o.out +
                                         " and " + run.checkpoint + "; --resume " + run.checkpoint + " continues");
}

}  // namespace

void register_train(CLI::App& app, Action& action) {
  auto o = std::make_shared<TrainOptions>();
  CLI::App* sub = app.add_subcommand("train", "train the eps-network of SEMANTICS §2 on a data set (CPU or CUDA; SEMANTICS §11)");
  train::TrainConfig& c = o->config;
  sub->add_option("--data", o->data.source, "a .npy (N, dim) float array (dim <= 64, N <= 10^7), a bundled model's "
                  "name or a model file (its data_samples), or a gaussian_mixture file (sampled)")->required();
  sub->add_option("--out", o->out, "the model file to write (.safetensors)")->required();
  sub->add_option("--objective", o->objective, "epsilon | sample | v_prediction | flow")->capture_default_str();
  sub->add_option("--hidden", c.hidden, "hidden width, 64..512")->capture_default_str();
  sub->add_option("--steps", c.steps, "Adam steps, 1..10^7")->capture_default_str();
  sub->add_option("--batch", c.batch, "rows per step, 1..65536")->capture_default_str();
  sub->add_option("--lr", c.lr, "peak learning rate")->capture_default_str();
  sub->add_option("--warmup", c.warmup, "linear warm-up steps (-1: min(500, steps / 10))")->capture_default_str();
  sub->add_option("--final-lr-frac", c.final_lr_frac, "cosine decay to this fraction of --lr")->capture_default_str();
  sub->add_option("--ema", c.ema, "EMA decay of the saved weights, [0, 1)")->capture_default_str();
  sub->add_option("--seed", c.seed, "seed of the weights, batches and split")->capture_default_str();
  sub->add_option("--time-sampling", o->time_sampling, "uniform | logit_normal")->capture_default_str();
  sub->add_option("--logit-mean", c.logit_mean, "logit-normal mean")->capture_default_str();
  sub->add_option("--logit-std", c.logit_std, "logit-normal standard deviation")->capture_default_str();
  sub->add_option("--loss-weighting", o->weighting, "none | min_snr")->capture_default_str();
  sub->add_option("--snr-gamma", c.snr_gamma, "gamma of min_snr")->capture_default_str();
  sub->add_option("--schedule", c.schedule, "VP schedule: linear | cosine (T = 1000)")->capture_default_str();
  sub->add_option("--beta-start", c.beta_start, "linear schedule's first beta")->capture_default_str();
  sub->add_option("--beta-end", c.beta_end, "linear schedule's last beta")->capture_default_str();
  sub->add_option("--holdout", o->data.holdout, "fraction of rows held out as data_samples, [0, 0.5] (at most 10000)")
      ->capture_default_str();
  sub->add_option("--normalize", o->data.normalization, "standard | none")->capture_default_str();
  sub->add_option("--mixture-rows", o->data.mixture_rows, "rows sampled from a gaussian_mixture --data")
      ->capture_default_str();
  sub->add_option("--checkpoint", o->checkpoint, "the checkpoint to write (default: OUT with .ckpt before .safetensors)");
  sub->add_option("--checkpoint-every", o->checkpoint_every, "also write both files every N steps (0: at the end)")
      ->capture_default_str();
  sub->add_option("--resume", o->resume, "continue the run of this checkpoint (its settings; the same --data)");
  sub->add_option("--backend", o->backend, "cpu | cuda: the trainer (the same maths and random numbers; cuda needs "
                  "a CUDA device, else exit 3)")->capture_default_str();
  sub->add_option("--precision", o->precision, "fp32 | bf16 (cuda only: bf16 GEMM operands, fp32 accumulation and "
                  "master weights, as PyTorch's autocast)")->capture_default_str();
  sub->add_flag("--quiet", o->quiet, "no summary or progress line (the final line stays)");
  sub->callback([o, sub, &action] { action = [o, sub] { run_train(*o, *sub); }; });
}

}  // namespace diffscope::cli
