// exact_lab.cpp — per-frame and final errors of an analytic model's run against the exact ODE (exact_lab.h),
// and the background worker that computes them for the GUI.
#include "diffusion/exact_lab.h"

#include <cmath>

#include "diffusion/cpu_reference.h"
#include "diffusion/exact_ode.h"

namespace diffscope {
namespace {

double ve_sigma(double abar) { return abar >= 1.0 ? 0.0 : std::sqrt((1.0 - abar) / abar); }

// RMS over rows of the Euclidean distance between two (rows, dim) arrays.
double rms_distance(const double* a, const double* b, int rows, int dim) {
  double se = 0;
  for (int64_t i = 0; i < static_cast<int64_t>(rows) * dim; ++i) se += (a[i] - b[i]) * (a[i] - b[i]);
  return std::sqrt(se / rows);
}

// The run replayed in float64 on the CPU: the state after each step (N, rows, dim), or only the final state.
std::vector<double> replay(const ExactLabRequest& req, const StepTable& tab, bool keep_frames) {
  std::vector<double> x = req.x_start, prev(x.size(), 0.0), frames;
  if (keep_frames) frames.resize(static_cast<size_t>(tab.steps()) * x.size());
  cpu_ref::run_steps<double>(*req.model, tab, 0, tab.steps(), x.data(), req.rows, req.seed,
                             keep_frames ? frames.data() : nullptr, 0, prev.data());
  return keep_frames ? frames : x;
}

bool cancelled(const std::atomic<bool>* c) { return c && c->load(); }

// The factor from frame j's state to the VP state (flow and edm runs: sqrt(alpha^2 + sigma^2)^-1; else 1).
double to_vp(const StepTable& tab, int j) {
  const Family f = tab.family.family;
  if (tab.levels.empty() || f == Family::Epsilon || f == Family::Sample || f == Family::VPrediction) return 1.0;
  return tab.levels[j].vp_scale();
}

std::vector<double> scaled(std::vector<double> v, double k) {
  for (double& x : v) x *= k;
  return v;
}

}  // namespace

bool follows_the_ode(const StepTable& tab) {
  return (tab.sampler == Sampler::Ddim && tab.eta == 0.0) || tab.sampler == Sampler::Heun ||
         tab.sampler == Sampler::Dpmpp2m || tab.sampler == Sampler::FlowEuler || tab.sampler == Sampler::FlowHeun;
}

std::vector<double> frame_errors_vs_exact(const ExactLabRequest& req, const std::atomic<bool>* cancel,
                                          std::atomic<double>* progress) {
  const StepTable& tab = req.table;
  const GaussianMixture& g = *req.model->mixture;
  const int N = tab.steps(), dim = g.dim, rows = req.rows;
  const std::vector<double> frames = replay(req, tab, true);
  const size_t frame_size = static_cast<size_t>(rows) * dim;
  std::vector<double> err{0.0};  // frame 0 is the start state itself
  std::vector<double> exact_vp = scaled(req.x_start, to_vp(tab, 0));
  double sigma = ve_sigma(tab.abar[0]);
  for (int j = 1; j <= N && !cancelled(cancel); ++j) {
    const double sigma_j = j < N ? ve_sigma(tab.abar[j]) : 0.0;
    if (sigma_j != sigma) {
      std::vector<double> ve = mixture_ode_solve(g, exact_vp.data(), rows, sigma, sigma_j);
      const double to_vp = 1.0 / std::sqrt(1.0 + sigma_j * sigma_j);  // x_t = sqrt(abar) x_VE
      for (size_t i = 0; i < ve.size(); ++i) exact_vp[i] = ve[i] * to_vp;
      sigma = sigma_j;
    }
    const double k = to_vp(tab, j);
    const std::vector<double> frame(frames.begin() + (j - 1) * frame_size, frames.begin() + j * frame_size);
    err.push_back(rms_distance(scaled(frame, k).data(), exact_vp.data(), rows, dim));
    if (progress) *progress = 0.5 * j / N;
  }
  return err;
}

EvalPoint final_error_vs_exact(const ExactLabRequest& req, int steps) {
  const StepTable& shown = req.table;
  const DiffusionModel& m = *req.model;
  const StepTable tab = req.table_for_steps ? req.table_for_steps(steps)
                                            : build_step_table(m.schedule, shown.sampler, req.t_start, steps, shown.eta,
                                                               shown.spacing, shown.steps_offset);
  const std::vector<double> x = scaled(replay(req, tab, false), to_vp(tab, tab.steps()));
  const std::vector<double> start_vp = scaled(req.x_start, to_vp(tab, 0));
  const std::vector<double> exact = mixture_ode_solve(*m.mixture, start_vp.data(), req.rows, ve_sigma(tab.abar[0]), 0.0);
  return {steps, tab.evaluations(0, steps), rms_distance(x.data(), exact.data(), req.rows, m.mixture->dim)};
}

ExactLab::~ExactLab() {
  if (m_job) m_job->cancel = true, m_retired.push_back(std::move(m_job));
  reap(true);
}

void ExactLab::reap(bool all) {
  for (auto it = m_retired.begin(); it != m_retired.end();) {
    if (all || (*it)->done) {
      if ((*it)->thread.joinable()) (*it)->thread.join();
      it = m_retired.erase(it);
    } else {
      ++it;
    }
  }
}

void ExactLab::start(const std::string& key, ExactLabRequest req) {
  if (key == m_key) return;
  if (m_job) m_job->cancel = true, m_retired.push_back(std::move(m_job));
  reap(false);
  m_key = key;
  m_job = std::make_unique<Job>();
  {
    std::lock_guard<std::mutex> lock(m_mutex);
    m_result = {};
    m_current = m_job.get();
  }
  Job* job = m_job.get();
  job->thread = std::thread([this, job, r = std::move(req)]() mutable { run(job, std::move(r)); });
}

double ExactLab::progress() const { return m_job ? m_job->progress.load() : 0.0; }
bool ExactLab::busy() const { return m_job && !m_job->done; }

ExactLabResult ExactLab::result() const {
  std::lock_guard<std::mutex> lock(m_mutex);
  return m_result;
}

void ExactLab::publish(const Job* job, const std::function<void(ExactLabResult&)>& f) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (job == m_current && !job->cancel) f(m_result);
}

void ExactLab::run(Job* job, ExactLabRequest req) {
  try {
    std::vector<double> fe = frame_errors_vs_exact(req, &job->cancel, &job->progress);
    publish(job, [&](ExactLabResult& r) {
      r.frame_error = std::move(fe);
      r.frames_done = true;
    });
    const size_t n = req.step_counts.size();
    for (size_t i = 0; i < n && !job->cancel; ++i) {
      job->progress = 0.5 + 0.5 * static_cast<double>(i) / n;
      const EvalPoint p = final_error_vs_exact(req, req.step_counts[i]);
      publish(job, [&](ExactLabResult& r) { r.curve.push_back(p); });
    }
    publish(job, [](ExactLabResult& r) { r.curve_done = true; });
  } catch (const std::exception& e) {  // e.g. a table the finite-coefficient rule would refuse
    const std::string msg = e.what();
    publish(job, [&](ExactLabResult& r) { r.error = msg; });
  }
  job->progress = 1.0;
  job->done = true;
}

}  // namespace diffscope
