// bench_stamps.cpp — the stamp rows of `diffscope bench --diag` (bench_stamps.h).
#include "gpu/bench/bench_stamps.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>

#include "gpu/cuda_check.h"
#include "gpu/gpu_buffer.h"
#include "kernels/kernels.h"
#include "kernels/shared/latency_stamps.h"

namespace diffscope::bench {

namespace {

// A stage: from slot a to slot b of the same step (step -1: the prologue row).
struct Stage {
  const char* name;
  int a, b;
  bool per_step;
};

// Single-CTA bf16 denoiser (denoise_cta.cu).
const Stage kCtaStages[] = {{"prologue: weight loads issued", 0, 1, false}, {"prologue: pdl_wait", 1, 2, false},
                            {"prologue: x + weights arrive", 2, 3, false},  {"end of call (x stored)", 9, 4, false},
                            {"step: coefficients + barrier", 0, 1, true},   {"step: layer 1 (mma, SiLU, store)", 1, 2, true},
                            {"step: barrier after layer 1", 2, 3, true},   {"step: layer 2 (mma, SiLU, store)", 3, 4, true},
                            {"step: barrier after layer 2", 4, 5, true},   {"step: layer 3 mma", 5, 6, true},
                            {"step: x update (noise)", 6, 7, true},        {"step: barrier after layer 3", 7, 8, true},
                            {"step: frames + loop", 8, 9, true},           {"step: whole (slot 0 to 9)", 0, 9, true}};
// Cluster fp32 denoiser (denoise_cluster.cu).
const Stage kClusterStages[] = {
    {"prologue: weight slices to smem", 0, 1, false}, {"prologue: pdl_wait", 1, 2, false},
    {"prologue: x + cluster barrier", 2, 3, false},    {"end of call", 15, 4, false},
    {"step: coefficients + barrier", 0, 1, true},      {"step: layer 1 partials", 1, 16, true},
    {"step: layer 1 reduce + SiLU", 16, 2, true},      {"step: barrier", 2, 3, true},
    {"step: h1 push (DSMEM)", 3, 4, true},             {"step: cluster barrier 1", 4, 5, true},
    {"step: layer 2 partials", 5, 17, true},           {"step: layer 2 reduce + SiLU", 17, 6, true},
    {"step: barrier", 6, 7, true},                     {"step: layer 3 partials", 7, 18, true},
    {"step: layer 3 reduce", 18, 8, true},             {"step: barrier", 8, 9, true},
    {"step: eps partials push (DSMEM)", 9, 10, true},  {"step: arrive + noise", 10, 11, true},
    {"step: cluster barrier 2 wait", 11, 12, true},    {"step: owned x update", 12, 13, true},
    {"step: barrier + x push (DSMEM)", 13, 14, true},  {"step: cluster barrier 3", 14, 15, true},
    {"step: whole (slot 0 to 15)", 0, 15, true}};
// Tiny fp32 MLP (mlp3.cu), one pass.
const Stage kMlpStages[] = {{"weight loads issued", 0, 1, false}, {"pdl_wait", 1, 2, false},
                            {"x to smem + barrier", 2, 3, false},  {"layer 1 + barrier", 3, 4, false},
                            {"layer 2 + barrier", 4, 5, false},    {"layer 3 + y store", 5, 6, false},
                            {"after pdl_wait to y stored", 2, 6, false}};

// Records a graph of `calls` calls of run, replays it twice (the stamps keep the last call's values).
void replay(cudaStream_t s, int calls, const std::function<void()>& run) {
  cudaGraph_t g = nullptr;
  cudaGraphExec_t ge = nullptr;
  CUDA_CHECK_THROW(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < calls; ++i) run();
  CUDA_CHECK_THROW(cudaStreamEndCapture(s, &g));
  const cudaError_t e = cudaGraphInstantiate(&ge, g, 0);
  cudaGraphDestroy(g);
  CUDA_CHECK_THROW(e);
  for (int i = 0; i < 2; ++i) CUDA_CHECK_THROW(cudaGraphLaunch(ge, s));
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  cudaGraphExecDestroy(ge);
}

// One stamped run: `ctas` CTAs, `steps` steps; appends a row per stage.
void stamped(CudaBackend& be, cudaStream_t s, const std::string& workload, const char* precision, const char* path, int ctas,
             int steps, const Stage* stages, size_t n_stages, double mhz, const std::function<void()>& run,
             std::vector<Row>& rows) {
  using namespace kernels;
  const size_t cap = stamp_capacity(ctas, steps);
  gpu::GpuBuffer<long long> buf(cap);
  CUDA_CHECK_THROW(cudaMemsetAsync(buf.data(), 0xff, cap * sizeof(long long), s));  // -1: not written
  be.set_latency_stamps(buf.data(), cap);
  try {
    replay(s, 20, run);
  } catch (...) {
    be.set_latency_stamps(nullptr, 0);
    throw;
  }
  be.set_latency_stamps(nullptr, 0);
  std::vector<long long> h(cap);
  buf.copy_to_host(h.data(), cap, s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  for (size_t i = 0; i < n_stages; ++i) {
    const Stage& st = stages[i];
    double sum = 0, lo_sum = 0, hi_sum = 0;
    long n = 0, n_groups = 0;
    const int k0 = st.per_step ? 0 : -1, k1 = st.per_step ? steps : 0;
    for (int c = 0; c < ctas; ++c)
      for (int k = k0; k < k1; ++k) {
        double lo = 1e300, hi = -1e300;
        bool any = false;
        for (int w = 0; w < kStampWarps; ++w) {
          // "end of call" pairs the last step's slot a with the prologue row's slot b
          const int ka = (!st.per_step && st.a > 4) ? steps - 1 : k;
          const long long ta = h[stamp_index(c, ka, w, st.a, steps)], tb = h[stamp_index(c, k, w, st.b, steps)];
          if (ta < 0 || tb < 0) continue;
          const double d = static_cast<double>(tb - ta);
          sum += d, ++n, any = true;
          lo = std::min(lo, d), hi = std::max(hi, d);
        }
        if (any) lo_sum += lo, hi_sum += hi, ++n_groups;
      }
    if (n == 0) continue;
    const double cyc = sum / n, to_us = mhz > 0 ? 1.0 / mhz : 1.0 / 1980.0;
    Row r;
    r.workload = workload;
    r.impl = "fused";
    r.precision = precision;
    r.path = std::string(path) + " | " + st.name;
    r.median_us = cyc * to_us, r.p10_us = lo_sum / n_groups * to_us, r.p90_us = hi_sum / n_groups * to_us;
    r.reps = static_cast<int>(n);
    char note[200];
    std::snprintf(note, sizeof note, "clock64 stamps, last call of a graph of 20: %.0f cycles %s (warps %.0f..%.0f), SM clock %.0f MHz",
                  cyc, st.per_step ? "per step" : "per call", lo_sum / n_groups, hi_sum / n_groups, mhz);
    r.note = note;
    rows.push_back(r);
  }
}

}  // namespace

void bench_stamps(CudaBackend& be, const DiffusionModel& m, const Mlp3Weights& w, std::vector<Row>& rows) {
  const cudaStream_t s = be.stream();
  const double mhz = kernels::measure_sm_clock_mhz(s);
  const int B = 8, S = 16, dim = m.net.dim;
  be.set_model(m);
  const size_t n = size_t(B) * dim;
  gpu::GpuBuffer<float> x(n);
  gpu::GpuBuffer<int32_t> t(B);
  std::vector<int32_t> ht(B, 999);
  t.copy_from_host(ht, s);
  kernels::launch_philox_fill(x.data(), B, dim, 1, 1000, 0, s);
  const std::string wl = "stamps denoise B=8 dim=" + std::to_string(dim) + " S=16";
  const kernels::KernelOptions options = be.kernel_options();
  const int busy_ctas = be.device_caps().sm_count * 4;
  be.force_denoise_path(kernels::DenoisePath::SingleCta);
  for (const char* kern : {"m16", "n8"}) {  // denoise_cta.cu's kernel and, at B <= 8, denoise_cta8.cu's
    kernels::KernelOptions ko = options;
    kernels::set_kernel_option(ko, "cta", kern);
    be.set_kernel_options(ko);
    kernels::launch_busy(s, busy_ctas, 300.0);
    const std::string path = std::string("single-cta ") + kern;
    stamped(be, s, wl, "bf16", path.c_str(), 1, S, kCtaStages, std::size(kCtaStages), mhz,
            [&] { be.denoise_device(x.data(), t.data(), B, S, nullptr, Precision::Bf16, s); }, rows);
  }
  be.set_kernel_options(options);
  be.force_denoise_path(kernels::DenoisePath::Cluster);
  kernels::launch_busy(s, busy_ctas, 300.0);
  stamped(be, s, wl, "fp32", "cluster", 16, S, kClusterStages, std::size(kClusterStages), mhz,
          [&] { be.denoise_device(x.data(), t.data(), B, S, nullptr, Precision::Fp32, s); }, rows);
  be.force_denoise_path(kernels::DenoisePath::Auto);

  be.set_mlp3(w);
  const int Bm = 16;
  gpu::GpuBuffer<float> xm(size_t(Bm) * w.d0), ym(size_t(Bm) * w.d3);
  kernels::launch_philox_fill(xm.data(), Bm, w.d0, 2, 1000, 0, s);
  for (int rpc : {16, 4, 1}) {
    kernels::KernelOptions ko = options;
    ko.mlp3_rows_per_cta = rpc;
    be.set_kernel_options(ko);
    kernels::launch_busy(s, busy_ctas, 300.0);
    const std::string path = "tiny-fixed " + std::to_string(rpc) + " rows/CTA";
    stamped(be, s, "stamps mlp3 B=16 48-64-40-24", "fp32", path.c_str(), (Bm + rpc - 1) / rpc, 0, kMlpStages,
            std::size(kMlpStages), mhz, [&] { be.mlp3_device(xm.data(), Bm, ym.data(), Precision::Fp32, s); }, rows);
  }
  be.set_kernel_options(options);
}

}  // namespace diffscope::bench
