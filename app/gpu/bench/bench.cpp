// bench.cpp — the GPU rows of `diffscope bench`: every workload of PERFORMANCE.md's targets table, fused vs
// unfused (cuBLAS), per precision; CUDA-event timing after warm-up (median, p10, p90), a CUDA graph of many
// calls for the latency-bound cases; achieved FLOP/s or bytes/s against the measured ceilings; each mode's
// error against the float64 CPU reference on the same input (a subset of rows for the big batches).
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "diffusion/cpu_reference.h"
#include "diffusion/family_table.h"
#include "diffusion/step_table.h"
#include "gpu/bench/bench_row.h"
#include "gpu/bench/bench_stamps.h"
#include "gpu/cuda_backend.h"
#include "gpu/cuda_check.h"
#include "gpu/gpu_buffer.h"
#include "gpu/gpu_timer.h"
#include "kernels/kernels.h"
#include "model/model.h"
#include "model/random_weights.h"
#include "model/schedule.h"

namespace diffscope::bench {

namespace {

// Ceilings measured on the H200 (PERFORMANCE.md).
constexpr double kFp32TF = 50.9, kTf32TF = 407, kBf16TF = 780, kCopyTBs = 4.16;

double ceiling_tflops(Precision p) {
  return p == Precision::Fp32 ? kFp32TF : (p == Precision::Tf32 ? kTf32TF : kBf16TF);
}

struct Stats {
  double median = 0, p10 = 0, p90 = 0;
  int n = 0;
};
Stats stats_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  Stats s;
  s.n = static_cast<int>(v.size());
  auto q = [&](double f) { return v[std::min(v.size() - 1, static_cast<size_t>(f * (v.size() - 1) + 0.5))]; };
  s.median = q(0.5), s.p10 = q(0.1), s.p90 = q(0.9);
  return s;
}

// Times `run` (enqueues one call on s) with events: `warm` untimed calls, then `reps` timed ones; `reset`
// (untimed, before each) restores the input.
Stats time_events(cudaStream_t s, int warm, int reps, const std::function<void()>& reset, const std::function<void()>& run) {
  gpu::GpuTimer timer;
  for (int i = 0; i < warm; ++i) {
    reset();
    run();
  }
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    reset();
    timer.start(s);
    run();
    timer.stop(s);
    us.push_back(timer.elapsed_ms() * 1e3);
  }
  return stats_of(us);
}

// A CUDA graph of `calls` calls of `run` (after one `reset`), replayed `reps` times; per-call time.
Stats time_graph(cudaStream_t s, int calls, int reps, const std::function<void()>& reset, const std::function<void()>& run) {
  struct Graph {  // the captured graph and its executable, destroyed also when a launch below throws
    cudaGraph_t g = nullptr;
    cudaGraphExec_t exec = nullptr;
    ~Graph() {
      if (exec) CUDA_CHECK_PRINT(cudaGraphExecDestroy(exec));
      if (g) CUDA_CHECK_PRINT(cudaGraphDestroy(g));
    }
  } graph;
  cudaGraph_t& g = graph.g;
  cudaGraphExec_t& ge = graph.exec;
  run();  // warm-up outside the capture (attributes, lazy module load)
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  CUDA_CHECK_THROW(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
  reset();
  for (int i = 0; i < calls; ++i) run();
  CUDA_CHECK_THROW(cudaStreamEndCapture(s, &g));
  CUDA_CHECK_THROW(cudaGraphInstantiate(&ge, g, 0));
  gpu::GpuTimer timer;
  for (int i = 0; i < 3; ++i) CUDA_CHECK_THROW(cudaGraphLaunch(ge, s));
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    timer.start(s);
    CUDA_CHECK_THROW(cudaGraphLaunch(ge, s));
    timer.stop(s);
    us.push_back(timer.elapsed_ms() * 1e3 / calls);
  }
  return stats_of(us);
}

const Precision kPrecisions[] = {Precision::Fp32, Precision::Tf32, Precision::Bf16, Precision::F16};

void bench_denoise(const Options& o, CudaBackend& be, const DiffusionModel& m, int B, int S, std::vector<Row>& rows) {
  const int dim = m.net.dim, H = m.net.hidden;
  char name[128];
  std::snprintf(name, sizeof name, "denoise B=%d dim=%d H=%d S=%d", B, dim, H, S);
  if (!selected(o, name)) return;
  std::fprintf(stderr, "bench: %s\n", name);
  const cudaStream_t s = be.stream();
  be.set_model(m);
  const size_t n = size_t(B) * dim;
  gpu::GpuBuffer<float> x0(n), x(n);
  gpu::GpuBuffer<int32_t> t(B);
  std::vector<int32_t> ht(B, 999);
  t.copy_from_host(ht, s);
  kernels::launch_philox_fill(x0.data(), B, dim, 1, 1000, 0, s);  // standard normal start (never zeros)
  // float64 reference on the first n_chk rows.
  const int n_chk = std::min(B, S >= 1000 ? (o.quick ? 8 : 64) : 256);
  std::vector<float> hx0(size_t(n_chk) * dim);
  x0.copy_to_host(hx0.data(), hx0.size(), s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  std::vector<double> ref(hx0.begin(), hx0.end());
  std::vector<int64_t> tref(n_chk, 999);
  cpu_ref::denoise<double>(m, ref.data(), tref.data(), n_chk, S, nullptr);

  const double flops = 2.0 * B * S * (double(dim + 1) * H + double(H) * H + double(H) * dim);
  const bool latency = B <= 64;
  auto reset = [&] { CUDA_CHECK_THROW(cudaMemcpyAsync(x.data(), x0.data(), n * sizeof(float), cudaMemcpyDeviceToDevice, s)); };
  // DIFFSCOPE_BENCH_FUSED_FP32=1: only the fused fp32 row (A/B runs of the fp32 kernels' variants in one call).
  const char* fp32_only_env = std::getenv("DIFFSCOPE_BENCH_FUSED_FP32");
  const bool fp32_only = fp32_only_env && fp32_only_env[0] == '1';
  for (int unfused = 0; unfused < (fp32_only ? 1 : 2); ++unfused)
    for (Precision p : kPrecisions) {
      if (fp32_only && p != Precision::Fp32) continue;
      auto run = [&] { be.denoise_device(x.data(), t.data(), B, S, nullptr, p, s, unfused == 1, 999); };  // ht: 999
      Row r;
      r.workload = name;
      r.impl = unfused ? "unfused (cuBLAS)" : "fused";
      r.precision = precision_name(p);
      Stats st;
      if (latency) {
        const int calls = 20;
        kernels::launch_busy(s, be.device_caps().sm_count * 4, 300.0);  // clocks up before a latency measurement
        st = time_graph(s, calls, o.quick ? 10 : 50, reset, run);
        r.note = "CUDA graph of 20 calls (+1 input restore copy per graph)";
      } else {
        const int reps = o.quick ? 2 : (unfused ? 3 : 7);
        st = time_events(s, 1, reps, reset, run);
        r.note = "events around one call";
      }
      r.path = unfused ? "cublas+elementwise" : be.last_kernel();
      r.median_us = st.median, r.p10_us = st.p10, r.p90_us = st.p90, r.reps = st.n;
      r.unit = "TFLOP/s";
      r.achieved = flops / (st.median * 1e-6) / 1e12;
      r.ceiling = ceiling_tflops(p);
      r.floor_us = flops / (r.ceiling * 1e12) * 1e6;
      // error vs float64
      reset();
      run();
      std::vector<float> got(size_t(n_chk) * dim);
      x.copy_to_host(got.data(), got.size(), s);
      CUDA_CHECK_THROW(cudaStreamSynchronize(s));
      r.rel_err = relative_frobenius_error(got, ref);
      rows.push_back(r);
    }
}

void bench_mlp3(const Options& o, CudaBackend& be, const Mlp3Weights& w, int B, std::vector<Row>& rows) {
  char name[128];
  std::snprintf(name, sizeof name, "mlp3 B=%d %d-%d-%d-%d", B, w.d0, w.d1, w.d2, w.d3);
  if (!selected(o, name)) return;
  std::fprintf(stderr, "bench: %s\n", name);
  const cudaStream_t s = be.stream();
  be.set_mlp3(w);
  gpu::GpuBuffer<float> x(size_t(B) * w.d0), y(size_t(B) * w.d3);
  kernels::launch_philox_fill(x.data(), B, w.d0, 2, 1000, 0, s);
  const int n_chk = std::min(B, 4096);
  std::vector<float> hx(size_t(n_chk) * w.d0);
  x.copy_to_host(hx.data(), hx.size(), s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  std::vector<double> xd(hx.begin(), hx.end()), ref(size_t(n_chk) * w.d3);
  cpu_ref::mlp3<double>(w, xd.data(), n_chk, ref.data());
  const double flops = 2.0 * B * (double(w.d0) * w.d1 + double(w.d1) * w.d2 + double(w.d2) * w.d3);
  const double bytes = double(B) * (w.d0 + w.d3) * sizeof(float);
  const bool latency = B <= 1024;
  for (int unfused = 0; unfused < 2; ++unfused)
    for (Precision p : kPrecisions) {
      auto run = [&] { be.mlp3_device(x.data(), B, y.data(), p, s, unfused == 1); };
      Row r;
      r.workload = name;
      r.impl = unfused ? "unfused (cuBLAS)" : "fused";
      r.precision = precision_name(p);
      Stats st;
      if (latency) {
        kernels::launch_busy(s, be.device_caps().sm_count * 4, 300.0);
        st = time_graph(s, 100, o.quick ? 10 : 50, [] {}, run);
        r.note = "CUDA graph of 100 calls";
      } else {
        st = time_events(s, 3, o.quick ? 5 : 30, [] {}, run);
        r.note = "events around one call";
      }
      r.path = unfused ? "cublas+elementwise" : be.last_kernel();
      r.median_us = st.median, r.p10_us = st.p10, r.p90_us = st.p90, r.reps = st.n;
      if (latency) {
        r.unit = "TFLOP/s";
        r.achieved = flops / (st.median * 1e-6) / 1e12;
        r.ceiling = ceiling_tflops(p);
        r.floor_us = 0.5;  // one kernel node in a graph
      } else {
        r.unit = "TB/s";
        r.achieved = bytes / (st.median * 1e-6) / 1e12;
        r.ceiling = kCopyTBs;
        r.floor_us = std::max(bytes / (kCopyTBs * 1e12), flops / (ceiling_tflops(p) * 1e12)) * 1e6;
      }
      run();
      std::vector<float> got(size_t(n_chk) * w.d3);
      y.copy_to_host(got.data(), got.size(), s);
      CUDA_CHECK_THROW(cudaStreamSynchronize(s));
      r.rel_err = relative_frobenius_error(got, ref);
      rows.push_back(r);
    }
}

// One solver row: `tab`'s run of N steps from pure noise on the fused path, timed with events around one
// run_steps_device call and divided by its network evaluations; error against the float64 CPU run of the same table
// and noise on the first rows.
void time_solver_row(const Options& o, CudaBackend& be, const DiffusionModel& m, const StepTable& tab,
                     const std::string& name, int B, Precision p, std::vector<Row>& rows) {
  const int dim = m.net.dim, H = m.net.hidden, n_chk = std::min(B, 256), N = tab.steps();
  const uint64_t seed = 1;
  const cudaStream_t s = be.stream();
  std::fprintf(stderr, "bench: %s %s\n", name.c_str(), precision_name(p));
  const int64_t evals = tab.evaluations(0, N);
  be.set_model(m);
  be.set_step_table(tab);
  const size_t n = size_t(B) * dim;
  gpu::GpuBuffer<float> x0(n), x(n);
  be.start_noise_device(x0.data(), B, seed, s);
  auto reset = [&] { CUDA_CHECK_THROW(cudaMemcpyAsync(x.data(), x0.data(), n * sizeof(float), cudaMemcpyDeviceToDevice, s)); };
  auto run = [&] { be.run_steps_device(0, N, x.data(), B, seed, nullptr, p, s); };
  const Stats st = time_events(s, 1, o.quick ? 3 : 7, reset, run);
  Row r;
  r.workload = name;
  r.impl = "fused";
  r.precision = precision_name(p);
  r.path = be.last_kernel();
  r.median_us = st.median / evals, r.p10_us = st.p10 / evals, r.p90_us = st.p90 / evals, r.reps = st.n;
  const double flops = 2.0 * B * (double(dim + 1) * H + double(H) * H + double(H) * dim);
  r.unit = "TFLOP/s";
  r.achieved = flops / (r.median_us * 1e-6) / 1e12;
  r.ceiling = ceiling_tflops(p);
  r.floor_us = flops / (r.ceiling * 1e12) * 1e6;
  r.note = "per network evaluation: events around one run of " + std::to_string(N) + " steps / its " + std::to_string(evals) + " evaluations";
  reset();
  run();
  std::vector<float> got(size_t(n_chk) * dim);
  x.copy_to_host(got.data(), got.size(), s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  std::vector<double> ref(got.size()), prev(got.size());
  cpu_ref::start_noise<double>(m.schedule.T, dim, seed, n_chk, ref.data());
  cpu_ref::run_steps<double>(m, tab, 0, N, ref.data(), n_chk, seed, nullptr, 0, prev.data());
  r.rel_err = relative_frobenius_error(got, ref);
  rows.push_back(r);
}

// The solver rows (docs/PERFORMANCE.md "Solver rows"), at every precision: each solver's run of N steps on the
// default spacing (the plan: kernels/solver/solver_wgmma.cu at bf16 / fp16 on sm_90a, else the fp32 solver kernels
// for dpmpp-2m, its sde variant and heun), ddim's row first; then the family rows: ddim, dpmpp-2m and heun (and
// flow-heun) of the same network read as v_prediction (the schedule's levels), flow (FlowMatchEuler's list) and edm
// (its karras list), each noted with its ratio to the epsilon row of its solver at its precision (SEMANTICS §2 "The
// tables": family tables run the solver kernels).
void bench_solver_rows(const Options& o, CudaBackend& be, const DiffusionModel& m, int B, int N, std::vector<Row>& rows) {
  const int dim = m.net.dim, H = m.net.hidden;
  const size_t first = rows.size();
  for (Precision prec : kPrecisions)
    for (const std::string& solver : bench_solvers()) {
      const std::string name = solver_workload(solver, B, dim, H, N);
      if (selected(o, name))
        time_solver_row(o, be, m, build_step_table(m.schedule, parse_sampler(solver), m.schedule.T - 1, N), name, B,
                        prec, rows);
    }
  note_ratio_to_ddim(rows, first);
  const StepTable vp = build_step_table(m.schedule, Sampler::Ddim, m.schedule.T - 1, N);
  for (Family f : {Family::VPrediction, Family::Flow, Family::Edm}) {
    FamilyParams p;
    p.family = f;
    p.time_input = default_time_input(f);
    p.T = m.schedule.T;
    const LevelRun run = f == Family::VPrediction ? vp_level_run(m.schedule, vp)
                         : f == Family::Flow ? list_level_run(f, m.schedule, flow_match_euler_levels({}, N).levels, 0)
                                             : list_level_run(f, m.schedule, edm_levels({}, N).levels, 0);
    for (Precision prec : {Precision::Fp32, Precision::Bf16})
      for (const char* solver : {"ddim", "dpmpp-2m", "heun", "flow-heun"}) {
        if (std::string(solver) == "flow-heun" && f != Family::Flow) continue;
        const std::string name = solver_workload(std::string(solver) + " family=" + family_name(f), B, dim, H, N);
        if (!selected(o, name)) continue;
        time_solver_row(o, be, m, build_family_table(p, false, run, parse_sampler(solver), 0.0, m.schedule.T), name,
                        B, prec, rows);
        note_ratio_to_epsilon(rows, first, solver);
      }
  }
}

// Diagnostics for the latency-bound reference case: per-call time against the step count (fixed cost vs per-step
// cost) for each path, a single launch timed with events, and the cluster kernel without its DSMEM pushes.
void bench_diag(const Options& o, CudaBackend& be, const DiffusionModel& m, std::vector<Row>& rows) {
  const int B = 8, dim = m.net.dim;
  const cudaStream_t s = be.stream();
  be.set_model(m);
  const size_t n = size_t(B) * dim;
  gpu::GpuBuffer<float> x0(n), x(n);
  gpu::GpuBuffer<int32_t> t(B);
  std::vector<int32_t> ht(B, 999);
  t.copy_from_host(ht, s);
  kernels::launch_philox_fill(x0.data(), B, dim, 1, 1000, 0, s);
  auto reset = [&] { CUDA_CHECK_THROW(cudaMemcpyAsync(x.data(), x0.data(), n * sizeof(float), cudaMemcpyDeviceToDevice, s)); };
  // variant: "cold" (no warm-up), "no-push" (the cluster kernel without its DSMEM pushes) or null.
  struct V { kernels::DenoisePath path; Precision p; int S; const char* variant; bool events; };
  const V vs[] = {{kernels::DenoisePath::Cluster, Precision::Fp32, 16, "cold", false},
                  {kernels::DenoisePath::Cluster, Precision::Fp32, 1, nullptr, false},
                  {kernels::DenoisePath::Cluster, Precision::Fp32, 4, nullptr, false},
                  {kernels::DenoisePath::Cluster, Precision::Fp32, 16, nullptr, false},
                  {kernels::DenoisePath::Cluster, Precision::Fp32, 64, nullptr, false},
                  {kernels::DenoisePath::Cluster, Precision::Fp32, 16, nullptr, true},
                  {kernels::DenoisePath::Cluster, Precision::Fp32, 16, "no-push", false},
                  {kernels::DenoisePath::General, Precision::Fp32, 16, nullptr, false},
                  {kernels::DenoisePath::Tiled, Precision::Fp32, 16, nullptr, false},
                  {kernels::DenoisePath::SingleCta, Precision::Bf16, 1, nullptr, false},
                  {kernels::DenoisePath::SingleCta, Precision::Bf16, 16, nullptr, false},
                  {kernels::DenoisePath::SingleCta, Precision::Bf16, 64, nullptr, false},
                  {kernels::DenoisePath::TensorCore, Precision::Bf16, 1, nullptr, false},
                  {kernels::DenoisePath::TensorCore, Precision::Bf16, 16, nullptr, false}};
  const kernels::KernelOptions options = be.kernel_options();
  for (const V& v : vs) {
    const bool cold = v.variant && std::string(v.variant) == "cold";
    const bool no_push = v.variant && std::string(v.variant) == "no-push";
    kernels::KernelOptions vo = options;
    vo.cluster_no_push = no_push;
    be.set_kernel_options(vo);
    be.force_denoise_path(v.path);
    auto run = [&] { be.denoise_device(x.data(), t.data(), B, v.S, nullptr, v.p, s); };
    if (!cold) kernels::launch_busy(s, be.device_caps().sm_count * 4, 300.0);
    const Stats st = v.events ? time_events(s, 3, o.quick ? 10 : 50, reset, run) : time_graph(s, 20, o.quick ? 10 : 30, reset, run);
    Row r;
    r.workload = "diag denoise B=8 dim=64 S=" + std::to_string(v.S);
    r.impl = "fused";
    r.precision = precision_name(v.p);
    r.path = be.last_kernel() + (cold ? " no-warm-up" : "");
    r.median_us = st.median, r.p10_us = st.p10, r.p90_us = st.p90, r.reps = st.n;
    r.note = v.events ? "events around one launch" : "CUDA graph of 20 calls";
    rows.push_back(r);
  }
  be.set_kernel_options(options);
  be.force_denoise_path(kernels::DenoisePath::Auto);
}

}  // namespace

std::vector<Row> run_gpu_benchmarks(const Options& o) {
  CudaBackend be;
  be.set_kernel_options(o.kernel_options);
  const DiffusionModel m64 = o.model64.empty() ? make_random_model(64, 256, 64) : load_diffusion_model(o.model64);
  const DiffusionModel m2 = o.model2.empty() ? make_random_model(2, 256, 2) : load_diffusion_model(o.model2);
  const Mlp3Weights w = o.mlp3.empty() ? make_random_mlp3(48, 64, 40, 24, 3) : load_mlp3(o.mlp3);
  std::vector<Row> rows;
  if (o.diag) {
    bench_diag(o, be, m64, rows);
    bench_stamps(be, m64, w, rows);
    return rows;
  }
  const std::vector<std::function<void()>> groups = {
      [&] { bench_denoise(o, be, m64, 8, 16, rows); },          [&] { bench_mlp3(o, be, w, 16, rows); },
      [&] { bench_mlp3(o, be, w, 1 << 20, rows); },            [&] { bench_denoise(o, be, m64, 16384, 1000, rows); },
      [&] { bench_denoise(o, be, m2, 65536, 1000, rows); },     [&] { bench_solver_rows(o, be, m2, 65536, 100, rows); }};
  for (size_t i = 0; i < groups.size(); ++i) {
    groups[i]();
    if (o.progress) o.progress(int(i + 1), int(groups.size()));
  }
  return rows;
}

}  // namespace diffscope::bench
