// training_session.h — the app's training run (SEMANTICS §11 "The training panel"): the data (a bundled model's
// data set, a .npy file or the brush's points), the settings, a run of train/train_run.h on a background thread
// (the frame never waits for it), its loss per step, the EMA weights every preview_every steps (the last
// kMaxCheckpoints kept: the checkpoint scrubber), and the model file of any of them. No ImGui, no GL.
#pragma once
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "session/training/brush_points.h"
#include "train/train_run.h"

namespace diffscope {

// The panel's settings (script: train_set KEY VALUE; train_setting_keys()).
struct TrainSettings {
  std::string source = "brush";     // brush | bundled | npy
  std::string bundled = "moons";    // source bundled: a bundled model's name (its data_samples)
  std::string npy;                  // source npy: a (N, dim) .npy file
  int64_t rows = 0;                 // the training-set size: the first `rows` rows after the split (0: all)
  std::string normalization = "auto";  // auto (brush: none, the drawn coordinates; else standard) | standard | none
  std::string objective = "epsilon";   // epsilon | sample | v_prediction | flow
  int64_t steps = 2000;
  int batch = 512;
  double lr = 2e-3;
  uint64_t seed = 0;
  int hidden = 128;
  int64_t preview_every = 100;      // the EMA weights are kept (and previewed) every this many steps
  double ema = 0.995;               // the EMA decay (shorter than the CLI's 0.9995: the preview follows the run)
};

// The keys of TrainSettings as `train_set` names them.
const std::vector<std::string>& train_setting_keys();
// Sets one; InvalidInput naming the key, the value and the valid range or choices.
void set_train_setting(TrainSettings& s, const std::string& key, const std::string& value);

class TrainingSession {
 public:
  // The trainer factory (RunOptions::make_trainer): the CPU trainer unless a backend plugs in another.
  using TrainerFactory = std::function<std::unique_ptr<train::Trainer>(const train::TrainConfig&,
                                                                       const train::TrainData&)>;
  explicit TrainingSession(TrainerFactory make = train::make_cpu_trainer) : m_make(std::move(make)) {}
  ~TrainingSession() { stop_and_join(); }

  static constexpr int kMaxCheckpoints = 16;

  BrushPoints& brush() { return m_brush; }
  const BrushPoints& brush() const { return m_brush; }

  // Reads and checks the data and the settings and starts a run from step 0 on the background thread. Throws
  // InvalidInput (naming the setting) and changes nothing when they are bad or a run is going.
  void start(const TrainSettings& s);
  // Continues the last stopped run (its data and settings) where it stopped; false when there is none.
  bool resume();
  void stop() { m_stop = true; }  // the run ends after its current step
  void stop_and_join();
  bool running() const { return m_running; }

  struct Progress {
    int64_t step = 0, total = 0;
    double seconds = 0, eta_seconds = 0;  // wall time of the run so far (resumed parts added); the rest's estimate
    std::string error;                    // a failed run's message
    std::string data_note;                // the data: source, rows, normalisation
  };
  Progress progress() const;
  // Every step's batch loss so far (index k: step k + 1).
  std::vector<float> losses() const;
  // The kept EMA weights' steps, oldest first; a counter that grows with each new one.
  std::vector<int64_t> checkpoint_steps() const;
  int64_t checkpoint_generation() const { return m_generation; }
  // The kept checkpoints' EMA weights' loss per noise level (level_loss.h: kLevelBins values each, noisiest
  // first), in checkpoint_steps() order; computed on the run's thread as each is kept.
  std::vector<std::vector<float>> level_losses() const;
  // The model file of kept checkpoint i (-1: the newest), in the CLI's layout; "" when none.
  std::string model_bytes(int i) const;
  // Writes the newest state's model file and its checkpoint (the CLI's files; train_run write_run_outputs).
  // InvalidInput / the write's errors; false when there is no state yet.
  bool save(const std::string& path);
  // The prepared data of the last start (empty before one).
  const train::TrainData& data() const { return *m_data; }
  bool has_data() const { return static_cast<bool>(m_data); }
  const train::TrainConfig& config() const { return m_config; }
  // For a training set of at most kIdealMaxRows rows: the ideal (empirical) denoiser's samples (ideal_denoiser.h)
  // from the sampler's start noise of the run's seed (rows 0 .. kIdealSamples - 1; SEMANTICS §7) over kIdealSteps evenly spaced levels of the run's family,
  // in the data's normalised coordinates ((n, dim) floats); computed on the run's thread before its first step;
  // empty otherwise.
  static constexpr int kIdealSamples = 512, kIdealSteps = 50;
  std::vector<float> ideal() const;

 private:
  void launch(std::optional<train::Checkpoint> resume);
  train::TrainData prepare(const TrainSettings& s) const;

  TrainerFactory m_make;
  BrushPoints m_brush;
  std::shared_ptr<const train::TrainData> m_data;
  train::TrainConfig m_config;
  int64_t m_preview_every = 100;
  std::thread m_thread;
  std::atomic<bool> m_stop{false}, m_running{false};
  std::atomic<int64_t> m_generation{0};
  mutable std::mutex m_mutex;  // guards what follows
  std::string m_backend = "cpu";  // the trainer's backend()
  std::vector<float> m_losses, m_ideal;
  std::deque<train::TrainState> m_checkpoints;  // ema and step only
  std::deque<std::vector<float>> m_level_losses;  // one per kept checkpoint
  train::TrainState m_last;                    // the newest full state (resume, save)
  Progress m_progress;
  double m_seconds_before = 0;                 // the resumed parts' wall time
};

}  // namespace diffscope
