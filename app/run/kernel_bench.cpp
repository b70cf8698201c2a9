// kernel_bench.cpp — CPU rows of the kernel panel (the reference backend against float64); GPU rows come
// from the function set_gpu() was given (the shell's ComputeServices, app/gpu/bench in CUDA builds).
#include "run/kernel_bench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "diffusion/cpu_reference.h"
#include "diffusion/sampling.h"
#include "diffusion/step_table.h"
#include "run/backend.h"

namespace diffscope {
namespace {

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Times fn() reps times after one warm-up call: median, p10, p90 in microseconds.
template <class F>
BenchRow time_it(const std::string& what, const std::string& backend, int reps, F&& fn) {
  fn();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < std::max(1, reps); ++i) {
    const double t0 = now_us();
    fn();
    t.push_back(now_us() - t0);
  }
  std::sort(t.begin(), t.end());
  auto q = [&](double p) { return t[std::min(t.size() - 1, static_cast<size_t>(p * (t.size() - 1) + 0.5))]; };
  BenchRow r;
  r.what = what;
  r.backend = backend;
  r.median_us = q(0.5);
  r.p10_us = q(0.1);
  r.p90_us = q(0.9);
  r.speedup = 1.0;
  return r;
}

}  // namespace

void KernelBench::set_gpu(std::function<bool()> available,
                          std::function<std::vector<BenchRow>(const std::string&)> rows, std::string missing_note) {
  m_gpu_available = std::move(available);
  m_gpu_rows = std::move(rows);
  m_gpu_missing = std::move(missing_note);
}

bool KernelBench::gpu_available() const { return m_gpu_rows && m_gpu_available && m_gpu_available(); }

bool KernelBench::run_gpu(const std::string& filter) {
  m_gpu_error.clear();
  if (!gpu_available()) return false;
  try {
    double cpu_mlp = 0;
    for (const BenchRow& r : m_rows)
      if (r.backend == "cpu" && r.what.rfind("mlp3", 0) == 0) cpu_mlp = r.median_us;
    for (BenchRow r : m_gpu_rows(filter)) {
      // Speedup against the CPU row of the same workload (the reference MLP size) when there is one.
      r.speedup = (cpu_mlp > 0 && r.what.find("mlp3 B=16") != std::string::npos && r.median_us > 0)
                      ? cpu_mlp / r.median_us : 0;
      m_rows.push_back(r);
    }
    return true;
  } catch (const std::exception& e) {
    m_gpu_error = e.what();
    return false;
  }
}

std::string KernelBench::gpu_note() const {
  if (!m_gpu_error.empty()) return "GPU benchmark failed: " + m_gpu_error;
  return gpu_available() ? "" : m_gpu_missing;
}

void KernelBench::run(const DiffusionModel& model, const BenchConfig& c) {
  m_rows.clear();
  auto cpu = make_cpu_backend();
  std::mt19937 rng(1234);
  std::normal_distribution<float> nd(0.f, 1.f);

  // 3-layer MLP (SEMANTICS §5), random weights scaled 1/sqrt(fan_in).
  Mlp3Weights w;
  w.d0 = c.d0, w.d1 = c.d1, w.d2 = c.d2, w.d3 = c.d3;
  auto fill = [&](std::vector<float>& v, int out, int in) {
    v.resize(size_t(out) * in);
    for (auto& x : v) x = nd(rng) / std::sqrt(float(in));
  };
  fill(w.W1, w.d1, w.d0);
  fill(w.W2, w.d2, w.d1);
  fill(w.W3, w.d3, w.d2);
  std::vector<float> x(size_t(c.mlp_B) * c.d0), y(size_t(c.mlp_B) * c.d3);
  for (auto& v : x) v = nd(rng);
  BenchRow mlp = time_it("mlp3 " + std::to_string(c.mlp_B) + "x" + std::to_string(c.d0) + "-" + std::to_string(c.d1) +
                             "-" + std::to_string(c.d2) + "-" + std::to_string(c.d3),
                         "cpu", c.reps, [&] { cpu->mlp3(w, x.data(), c.mlp_B, y.data(), Precision::Fp32); });
  {
    std::vector<double> xd(x.begin(), x.end()), yd(y.size());
    cpu_ref::mlp3<double>(w, xd.data(), c.mlp_B, yd.data());
    double e = 0;
    for (size_t i = 0; i < y.size(); ++i) e = std::max(e, std::abs(double(y[i]) - yd[i]));
    mlp.max_err = e;
  }
  m_rows.push_back(mlp);

  // Denoiser: one launch of S ddim steps from t = T-1 on a batch of noise, and per step.
  const int S = std::max(1, c.den_S), B = std::max(1, c.den_B), dim = model.net.dim;
  const StepTable tab = build_step_table(model.schedule, Sampler::Ddim, model.schedule.T - 1,
                                         std::min(model.schedule.T, std::max(S, 2)), 0.0);
  std::vector<float> x0(size_t(B) * dim), xs(x0.size());
  fill_start_noise(model, 7, B, x0.data());
  BenchRow launch = time_it("denoiser B=" + std::to_string(B) + " S=" + std::to_string(S) + " (launch)", "cpu", c.reps,
                            [&] {
                              xs = x0;
                              cpu->run_steps(model, tab, 0, S, xs.data(), B, 7, nullptr, Precision::Fp32);
                            });
  {
    std::vector<double> xd(x0.begin(), x0.end());
    cpu_ref::run_steps<double>(model, tab, 0, S, xd.data(), B, 7, nullptr);
    double e = 0;
    for (size_t i = 0; i < xs.size(); ++i) e = std::max(e, std::abs(double(xs[i]) - xd[i]));
    launch.max_err = e;
  }
  BenchRow step = launch;
  step.what = "denoiser per step";
  step.median_us /= S, step.p10_us /= S, step.p90_us /= S;
  m_rows.push_back(launch);
  m_rows.push_back(step);
  m_history.push_back(static_cast<float>(launch.median_us));
  if (m_history.size() > 120) m_history.erase(m_history.begin());
}

}  // namespace diffscope
