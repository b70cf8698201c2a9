// exact_lab.h — a run of an analytic model (SEMANTICS §6) against its exact answer: the error of every
// trajectory frame against the exact probability-flow ODE solution (diffusion/exact_ode.h), and the final error
// against the number of network evaluations for a few step counts (SEMANTICS §3 "Errors against the exact
// ODE"). Computed on the CPU in float64 from the run's own start state, in a background thread (ExactLab),
// so the GUI never waits for it and never reads anything back from the GPU for it.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "diffusion/step_table.h"
#include "model/model.h"

namespace diffscope {

// True for the solvers whose run follows the probability-flow ODE (ddim with eta 0, heun, dpmpp-2m): only
// those converge to the exact ODE sample; stochastic ones sample other paths.
bool follows_the_ode(const StepTable& tab);

// The settings of one comparison: the model (an analytic one), the run's table, its start state (VP, rows x dim,
// float64) and the step counts of the error-vs-evaluations curve.
struct ExactLabRequest {
  std::shared_ptr<const DiffusionModel> model;
  StepTable table;                  // the run shown (per-frame errors)
  std::vector<double> x_start;      // (rows, dim): the run's first rows' start state
  int rows = 0;
  uint64_t seed = 0;
  int t_start = 0;
  std::vector<int> step_counts;     // N of the error-vs-evaluations curve (same sampler/spacing/t_start/eta)
  // The table of the same run with N steps for the curve (a family run's: its plan with another N); unset: §3's
  // build_step_table of the shown table's sampler, spacing, t_start and eta. Frames and x_start are in the family's
  // state (SEMANTICS §2); errors are measured in the VP state of the same signal-to-noise ratio.
  std::function<StepTable(int steps)> table_for_steps;
};

struct EvalPoint {
  int steps = 0;
  int64_t evaluations = 0;
  double error = 0;  // RMS over rows of |x_N - x*| at sigma = 0 (the final sample)
};

// Results; a field is complete when its `*_done` flag is set.
struct ExactLabResult {
  std::vector<double> frame_error;  // N + 1 values: RMS over rows of |frame_j - x*(sigma_j)|, VP state
  bool frames_done = false;
  std::vector<EvalPoint> curve;     // one point per step count, in order
  bool curve_done = false;
  std::string error;                // why the job stopped early ("" when it did not)
};

// The per-frame errors of `req.table` (the run replayed in float64 on the CPU): frame 0 is 0 (the same start);
// frame j compares with the exact ODE carried from sigma_0 to sigma_j (1e-10). `cancel` (may be null) stops
// early, returning what is done; `progress` (may be null) receives the fraction done times 0.5.
std::vector<double> frame_errors_vs_exact(const ExactLabRequest& req, const std::atomic<bool>* cancel = nullptr,
                                          std::atomic<double>* progress = nullptr);
// Final error against the exact ODE sample (sigma = 0) for a run of `steps` steps of req.table's solver.
EvalPoint final_error_vs_exact(const ExactLabRequest& req, int steps);

// A background worker: start() cancels the job in progress (without waiting for it: a cancelled job finishes its
// current piece on its own thread, is then joined by a later start() or the destructor, and never publishes) and
// begins a new one; the GUI reads result() and progress() every frame without waiting (a mutex held only while
// results are copied).
class ExactLab {
 public:
  ExactLab() = default;
  ~ExactLab();
  ExactLab(const ExactLab&) = delete;
  ExactLab& operator=(const ExactLab&) = delete;

  // key identifies the request (the GUI's settings); a start() with the key already started does nothing.
  void start(const std::string& key, ExactLabRequest req);
  const std::string& key() const { return m_key; }
  double progress() const;  // [0, 1] of the current job
  bool busy() const;        // the current job is still computing
  ExactLabResult result() const;

 private:
  struct Job {
    std::atomic<bool> cancel{false}, done{false};
    std::atomic<double> progress{0.0};
    std::thread thread;
  };
  void run(Job* job, ExactLabRequest req);
  void publish(const Job* job, const std::function<void(ExactLabResult&)>& f);
  void reap(bool all);  // joins finished (all: every) retired jobs

  std::string m_key;
  std::unique_ptr<Job> m_job;
  std::vector<std::unique_ptr<Job>> m_retired;
  mutable std::mutex m_mutex;  // guards m_result and m_current
  const Job* m_current = nullptr;
  ExactLabResult m_result;
};

}  // namespace diffscope
