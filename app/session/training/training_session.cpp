// training_session.cpp — the app's background training run of training_session.h.
#include "session/training/training_session.h"

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "base/errors.h"
#include "base/philox_normal.h"
#include "session/training/ideal_denoiser.h"
#include "session/training/level_loss.h"
#include "train/objective.h"
#include "train/train_file.h"

namespace diffscope {
namespace {

using Clock = std::chrono::steady_clock;

const std::vector<std::string> kSources = {"brush", "bundled", "npy"};
const std::vector<std::string> kNormalizations = {"auto", "standard", "none"};

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& w : v) s += (s.empty() ? "" : ", ") + w;
  return s;
}

// A whole number in [lo, hi] or InvalidInput naming the key.
int64_t integer_in(const std::string& key, const std::string& v, int64_t lo, int64_t hi) {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0' || errno == ERANGE || x < lo || x > hi)
    throw InvalidInput(key + " = " + v + " is out of range; valid: an integer in [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
  return x;
}

double real_in(const std::string& key, const std::string& v, double lo, double hi, bool open_lo) {
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || !std::isfinite(x) || x < lo || (open_lo && x == lo) || x > hi)
    throw InvalidInput(key + " = " + v + " is out of range; valid: " + (open_lo ? "(" : "[") + std::to_string(lo) +
                       ", " + std::to_string(hi) + "]");
  return x;
}

std::string choice(const std::string& key, const std::string& v, const std::vector<std::string>& valid) {
  if (std::find(valid.begin(), valid.end(), v) == valid.end())
    throw InvalidInput(key + " = " + v + " is not one of the choices; valid: " + join(valid));
  return v;
}

// kIdealSteps levels (alpha, sigma) from the noisiest to the cleanest of the run's family: VP t evenly spaced from
// T - 1 to 0 (sqrt(abar), sqrt(1 - abar)); flow s from 1 to 1/kIdealSteps.
std::vector<std::pair<double, double>> ideal_levels(const train::TrainConfig& c, int steps) {
  std::vector<std::pair<double, double>> levels;
  const train::LevelTable tab = train::level_table(c);
  for (int k = 0; k < steps; ++k) {
    if (c.objective == train::Objective::Flow) {
      const double s = 1.0 - double(k) / steps;
      levels.push_back({1 - s, s});
    } else {
      const int t = int(std::lround(double(c.T - 1) * (1.0 - double(k) / (steps - 1))));
      levels.push_back({tab.sqrt_abar[size_t(t)], tab.sqrt_one_minus_abar[size_t(t)]});
    }
  }
  return levels;
}

}  // namespace

const std::vector<std::string>& train_setting_keys() {
  static const std::vector<std::string> keys = {"source", "bundled", "npy", "rows", "normalization", "objective",
                                                "steps", "batch", "lr", "seed", "hidden", "preview_every", "ema"};
  return keys;
}

void set_train_setting(TrainSettings& s, const std::string& key, const std::string& v) {
  if (key == "source") s.source = choice(key, v, kSources);
  else if (key == "bundled") s.bundled = v;
  else if (key == "npy") s.npy = v;
  else if (key == "rows") s.rows = integer_in(key, v, 0, train::kMaxDataRows);
  else if (key == "normalization") s.normalization = choice(key, v, kNormalizations);
  else if (key == "objective") s.objective = train::objective_name(train::parse_objective(v, key));
  else if (key == "steps") s.steps = integer_in(key, v, 1, 10000000);
  else if (key == "batch") s.batch = int(integer_in(key, v, 1, 65536));
  else if (key == "lr") s.lr = real_in(key, v, 0, 1, true);
  else if (key == "seed") s.seed = uint64_t(integer_in(key, v, 0, INT64_MAX));
  else if (key == "hidden") s.hidden = int(integer_in(key, v, 64, 512));
  else if (key == "preview_every") s.preview_every = integer_in(key, v, 1, 1000000);
  else if (key == "ema") s.ema = real_in(key, v, 0, 0.99999, false);
  else throw InvalidInput("train setting '" + key + "' is unknown; valid: " + join(train_setting_keys()));
}

train::TrainData TrainingSession::prepare(const TrainSettings& s) const {
  train::DataOptions o;
  o.seed = s.seed;
  o.normalization = s.normalization == "auto" ? (s.source == "brush" ? "none" : "standard") : s.normalization;
  auto arg = [&](const std::string& k) { return k == "data" ? s.source : k; };
  train::TrainData d;
  if (s.source == "brush") {
    if (m_brush.size() < 2)
      throw InvalidInput("brush: " + std::to_string(m_brush.size()) +
                         " points drawn; valid: at least 2 (draw in the 2D view, or choose another source)");
    d = train::prepare_train_data(m_brush.xy(), m_brush.size(), 2, o,
                                  "brush (" + std::to_string(m_brush.size()) + " points)", arg);
  } else {
    o.source = s.source == "npy" ? s.npy : s.bundled;
    if (s.source == "npy" && (o.source.size() < 4 || o.source.compare(o.source.size() - 4, 4, ".npy") != 0))
      throw InvalidInput("npy = " + o.source + " is not a .npy file; valid: a (N, dim) .npy array, dim <= 64");
    d = train::load_train_data(o, arg);
  }
  if (s.rows > 0 && s.rows < d.n_train) {  // the split is a permutation: the first rows are a random subset
    d.n_train = s.rows;
    d.train.resize(size_t(s.rows) * size_t(d.dim));
  }
  return d;
}

void TrainingSession::start(const TrainSettings& s) {
  if (m_running) throw InvalidInput("train: a run is going; stop it first");
  train::TrainConfig c;
  c.objective = train::parse_objective(s.objective, "objective");
  c.hidden = s.hidden;
  c.steps = s.steps;
  c.batch = s.batch;
  c.lr = s.lr;
  c.seed = s.seed;
  c.ema = s.ema;
  train::check_train_config(c, [](const std::string& k) { return k; });
  auto d = std::make_shared<const train::TrainData>(prepare(s));
  stop_and_join();
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_losses.clear();
    m_ideal.clear();
    m_checkpoints.clear();
    m_level_losses.clear();
    m_last = train::TrainState();
    m_progress = Progress();
    m_progress.total = c.steps;
    char note[256];
    std::snprintf(note, sizeof note, "%s: %lld rows trained on, %lld held out; x = (raw - (%s)) * %.4g",
                  d->source.c_str(), (long long)d->n_train, (long long)d->n_held,
                  [&] {
                    std::string o;
                    for (double v : d->offset) o += (o.empty() ? "" : ", ") + std::to_string(v).substr(0, 7);
                    return o;
                  }().c_str(), d->scale);
    m_progress.data_note = note;
    m_seconds_before = 0;
  }
  m_data = d;
  m_config = c;
  m_preview_every = s.preview_every;
  m_generation = 0;
  launch(std::nullopt);
}

bool TrainingSession::resume() {
  if (m_running || !m_data) return false;
  stop_and_join();
  train::Checkpoint ck;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_last.params.empty() || m_last.step >= m_config.steps) return false;
    ck.config = m_config;
    ck.state = m_last;
    ck.dim = m_data->dim;
    ck.data_sha256 = train::data_digest(*m_data);
    ck.seconds = m_progress.seconds;
    m_seconds_before = m_progress.seconds;
    m_progress.error.clear();
  }
  launch(ck);
  return true;
}

void TrainingSession::stop_and_join() {
  m_stop = true;
  if (m_thread.joinable()) m_thread.join();
}

void TrainingSession::launch(std::optional<train::Checkpoint> resume) {
  m_stop = false;
  m_running = true;
  const std::shared_ptr<const train::TrainData> data = m_data;
  const train::TrainConfig c = m_config;
  m_thread = std::thread([this, data, c, resume] {
    const Clock::time_point t0 = Clock::now();
    const int64_t first = resume ? resume->state.step : 0;
    train::RunOptions o;
    o.resume = resume;
    o.make_trainer = [this](const train::TrainConfig& tc, const train::TrainData& td) {
      auto t = m_make(tc, td);
      std::lock_guard<std::mutex> lock(m_mutex);
      m_backend = t->backend();
      return t;
    };
    o.on_step = [&](int64_t k, double loss) {
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      std::lock_guard<std::mutex> lock(m_mutex);
      m_losses.resize(size_t(k - 1));  // a resumed run continues the curve where the state stopped
      m_losses.push_back(float(loss));
      m_progress.step = k;
      m_progress.seconds = m_seconds_before + s;
      m_progress.eta_seconds = s / double(k - first) * double(c.steps - k);
    };
    o.observe_every = std::max<int64_t>(1, m_preview_every);
    o.observe = [this, data, c](const train::TrainState& s) {
      std::vector<float> levels = loss_per_level(c, *data, s.ema);  // outside the lock: the frame never waits
      std::lock_guard<std::mutex> lock(m_mutex);
      m_last = s;
      if (!m_checkpoints.empty() && m_checkpoints.back().step == s.step) return;
      train::TrainState kept;
      kept.step = s.step;
      kept.ema = s.ema;
      m_checkpoints.push_back(std::move(kept));
      m_level_losses.push_back(std::move(levels));
      if (int(m_checkpoints.size()) > kMaxCheckpoints) m_checkpoints.pop_front(), m_level_losses.pop_front();
      ++m_generation;
    };
    if (!resume && data->n_train <= kIdealMaxRows) {
      std::vector<float> z(size_t(kIdealSamples) * size_t(data->dim));
      for (int r = 0; r < kIdealSamples; ++r)  // the sampler's start noise of seed c.seed (SEMANTICS §7)
        philox_normal_row(c.seed, uint32_t(r), kStartNoiseKey(uint32_t(c.T)), data->dim, &z[size_t(r) * data->dim]);
      std::vector<float> x = ideal_samples(data->train, data->dim, z, ideal_levels(c, kIdealSteps));
      std::lock_guard<std::mutex> lock(m_mutex);
      m_ideal = std::move(x);
    }
    try {
      train::run_training(c, *data, o, {}, [this] { return m_stop.load(); });
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_progress.error = e.what();
    }
    m_running = false;
  });
}

TrainingSession::Progress TrainingSession::progress() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_progress;
}

std::vector<float> TrainingSession::losses() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_losses;
}

std::vector<float> TrainingSession::ideal() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_ideal;
}

std::vector<std::vector<float>> TrainingSession::level_losses() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return {m_level_losses.begin(), m_level_losses.end()};
}

std::vector<int64_t> TrainingSession::checkpoint_steps() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  std::vector<int64_t> steps;
  for (const auto& s : m_checkpoints) steps.push_back(s.step);
  return steps;
}

std::string TrainingSession::model_bytes(int i) const {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_checkpoints.empty() || !m_data) return "";
  const int n = int(m_checkpoints.size());
  const train::TrainState& s = m_checkpoints[size_t(i < 0 || i >= n ? n - 1 : i)];
  return train::model_file_bytes(m_config, *m_data, s,
                                 {{"trained_with", "diffscope gui (" + m_backend + " backend)"},
                                  {"train_seconds", std::to_string(m_progress.seconds)}});
}

bool TrainingSession::save(const std::string& path) {
  train::TrainState s;
  double seconds = 0;
  std::string backend;
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    if (m_last.params.empty() || !m_data) return false;
    s = m_last;
    seconds = m_progress.seconds;
    backend = m_backend;
  }
  train::RunOptions o;
  o.out = path;
  o.checkpoint = train::default_checkpoint_path(path);
  o.out_arg = o.checkpoint_arg = "save";
  train::write_run_outputs(m_config, *m_data, s, o, backend.c_str(), seconds);
  return true;
}

}  // namespace diffscope
