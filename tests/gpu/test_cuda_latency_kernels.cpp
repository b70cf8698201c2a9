// test_cuda_latency_kernels.cpp — the latency kernels in every variant their kernel options select, against the
// CPU float64 reference: the single-CTA bf16 denoiser (the m16 kernel of denoise_cta.cu and the B <= 8
// weights-as-A kernel of denoise_cta8.cu), the tiny fp32 MLP at 16 / 4 / 2 / 1 rows per CTA, and the
// clock64 stamp builds (kernels/shared/latency_stamps.h): same results as the plain build, stamps in program order.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "diffusion/cpu_reference.h"
#include "gpu/cuda_backend.h"
#include "gpu/gpu_buffer.h"
#include "gpu_test_util.h"
#include "kernels/kernels.h"
#include "kernels/plan/kernel_plan.h"
#include "kernels/shared/latency_stamps.h"
#include "model/random_weights.h"

namespace diffscope {
namespace {

using kernels::DenoisePath;
using test::rel_err;

struct DenoiseRun {
  std::vector<float> x, frames;
};

// One denoise call through the backend on `path` (inputs fixed by the seed), with its trajectory.
DenoiseRun run_denoise(CudaBackend& be, const DiffusionModel& m, DenoisePath path, Precision p,
                       const std::vector<float>& x0, const std::vector<int64_t>& t, int S) {
  const int B = static_cast<int>(t.size());
  DenoiseRun r{x0, std::vector<float>(x0.size() * (S + 1), test::nan_f())};
  be.force_denoise_path(path);
  be.denoise(m, r.x.data(), t.data(), B, S, r.frames.data(), p);
  EXPECT_EQ(be.last_denoise_path(), path);
  return r;
}

struct CtaCase {
  int B, dim, S;
  bool mix;  // t_start mixes rows that freeze inside the run
};

std::vector<int64_t> t_starts(const CtaCase& c) {
  std::vector<int64_t> t(c.B, 999);
  if (c.mix)
    for (int b = 0; b < c.B; ++b) t[b] = (b % 3 == 1) ? 3 + 5 * (b % 2) : 999 - 17 * b;  // 3 and 8 freeze
  return t;
}

// Final x and every frame against float64; bf16 tolerance of test_cuda_denoise.cpp (16-70 steps: 5e-4, frames 2x).
void expect_matches_float64(const DiffusionModel& m, const CtaCase& c, const std::vector<float>& x0,
                            const DenoiseRun& r, const std::string& what) {
  const std::vector<int64_t> t = t_starts(c);
  std::vector<double> xd = test::widen(x0), fd(size_t(c.B) * c.dim * (c.S + 1));
  cpu_ref::denoise<double>(m, xd.data(), t.data(), c.B, c.S, fd.data());
  const double err = rel_err(r.x, xd), ferr = rel_err(r.frames, fd);
  std::printf("[measured] %s B=%d dim=%d S=%d rel_err=%.3e frames %.3e\n", what.c_str(), c.B, c.dim, c.S, err, ferr);
  EXPECT_LT(err, 5e-4) << what;
  EXPECT_LT(ferr, 1e-3) << what << " frames";
}

const CtaCase kCtaCases[] = {{8, 64, 16, true}, {8, 64, 70, false}, {3, 5, 40, true}, {1, 2, 16, false}, {7, 17, 33, true}};

TEST(CudaLatencyKernels, SingleCtaKernelsMatchFloat64) {
  SKIP_WITHOUT_CUDA();
  for (const CtaCase& c : kCtaCases) {
    const DiffusionModel m = test::random_model(c.dim, 256, 300 + c.dim + c.S);
    const std::vector<float> x0 = test::random_x(size_t(c.B) * c.dim, 41 + c.B);
    for (Precision p : {Precision::Bf16, Precision::F16})  // fp16: the same kernels on IEEE binary16 operands
      for (const char* kern : {"m16", "n8"}) {
        CudaBackend be;
        kernels::KernelOptions o;
        kernels::set_kernel_option(o, "cta", kern);
        be.set_kernel_options(o);
        expect_matches_float64(m, c, x0, run_denoise(be, m, DenoisePath::SingleCta, p, x0, t_starts(c), c.S),
                               std::string("single-cta ") + kern + " " + precision_name(p));
        // The weights-as-A kernel takes B <= 8 only; above, the plan runs the m16 kernel whatever the option.
        EXPECT_EQ(be.last_kernel(), std::string("single-cta-") + (c.B <= 8 ? kern : "m16"));
      }
  }
}

// The fp32 cluster kernel with 16 and 8 CTAs per cluster (kernel option cluster_size), rows freezing inside the run.
TEST(CudaLatencyKernels, ClusterSizesMatchFloat64) {
  SKIP_WITHOUT_CUDA();
  if (!test::path_supported(DenoisePath::Cluster, 64, 256, 8, Precision::Fp32)) GTEST_SKIP() << "no clusters here";
  for (const CtaCase& c : kCtaCases) {
    if (c.B > 8) continue;
    const DiffusionModel m = test::random_model(c.dim, 256, 500 + c.dim + c.S);
    const std::vector<float> x0 = test::random_x(size_t(c.B) * c.dim, 61 + c.B);
    for (const char* size : {"16", "8"}) {
      CudaBackend be;
      kernels::KernelOptions o;
      kernels::set_kernel_option(o, "cluster_size", size);
      be.set_kernel_options(o);
      expect_matches_float64(m, c, x0, run_denoise(be, m, DenoisePath::Cluster, Precision::Fp32, x0, t_starts(c), c.S),
                             std::string("cluster ") + size);
      EXPECT_EQ(be.last_kernel(), std::string("cluster-") + size);
    }
  }
}

TEST(CudaLatencyKernels, TinyMlpRowsPerCtaMatchFloat64) {
  SKIP_WITHOUT_CUDA();
  const Mlp3Weights w = make_random_mlp3(48, 64, 40, 24, 17);
  for (int B : {16, 13, 1}) {
    const std::vector<float> x = test::random_x(size_t(B) * w.d0, 5 + B);
    std::vector<double> xd = test::widen(x), want(size_t(B) * w.d3);
    cpu_ref::mlp3<double>(w, xd.data(), B, want.data());
    std::vector<float> first;
    for (int rpc : {16, 4, 2, 1}) {
      std::vector<float> y(size_t(B) * w.d3, test::nan_f());
      CudaBackend be;
      kernels::KernelOptions o;
      o.mlp3_rows_per_cta = rpc;
      be.set_kernel_options(o);
      be.mlp3(w, x.data(), B, y.data(), Precision::Fp32);
      EXPECT_EQ(be.last_kernel(), "tiny-fixed-r" + std::to_string(rpc));
      const double err = rel_err(y, want);
      std::printf("[measured] mlp3 tiny B=%d rows/CTA %d rel_err=%.3e\n", B, rpc, err);
      EXPECT_LT(err, 1e-5) << "B=" << B << " rows/CTA " << rpc;
      if (first.empty()) first = y;
      EXPECT_EQ(y, first) << "rows are independent: the same arithmetic per row at any rows/CTA";
    }
  }
}

// Slots of one step (or of the MLP's one pass) in program order, as each kernel writes them.
const int kCtaOrder[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
const int kClusterOrder[] = {0, 1, 16, 2, 3, 4, 5, 17, 6, 7, 18, 8, 9, 10, 11, 12, 13, 14, 15};
const int kMlpOrder[] = {0, 1, 2, 3, 4, 5, 6};

// Every written slot of `order` is later than the previous written one, per CTA, warp and step; returns how many
// were written.
template <size_t N>
long check_order(const std::vector<long long>& h, int ctas, int steps, int k0, const int (&order)[N]) {
  long written = 0;
  for (int c = 0; c < ctas; ++c)
    for (int k = k0; k < (steps == 0 ? 0 : steps); ++k)
      for (int w = 0; w < kernels::kStampWarps; ++w) {
        long long prev = -1;
        for (int s : order) {
          const long long v = h[kernels::stamp_index(c, k, w, s, steps)];
          if (v < 0) continue;
          EXPECT_GE(v, prev) << "cta " << c << " step " << k << " warp " << w << " slot " << s;
          prev = v, ++written;
        }
      }
  return written;
}

// Runs `run` with stamps on and off: identical outputs; stamps in program order.
template <size_t N>
void check_stamped(int ctas, int steps, int k0, const int (&order)[N],
                   const std::function<std::vector<float>(CudaBackend&)>& run, const std::string& what,
                   const kernels::KernelOptions& o = {}) {
  const size_t cap = kernels::stamp_capacity(ctas, steps);
  gpu::GpuBuffer<long long> buf(cap);
  std::vector<long long> h(cap, -1);
  buf.copy_from_host(h);
  CudaBackend be;
  be.set_kernel_options(o);
  const std::vector<float> plain = run(be);
  be.set_latency_stamps(buf.data(), cap);
  const std::vector<float> stamped = run(be);
  be.set_latency_stamps(nullptr, 0);
  buf.copy_to_host(h.data(), cap);
  EXPECT_EQ(stamped, plain) << what << ": the stamp build computes the same";
  const long written = check_order(h, ctas, steps, k0, order);
  std::printf("[measured] stamps %s: %ld written\n", what.c_str(), written);
  EXPECT_GT(written, 0) << what;
}

TEST(CudaLatencyKernels, StampBuildsMatchAndStampInOrder) {
  SKIP_WITHOUT_CUDA();
  const int B = 8, dim = 64, S = 16;
  const DiffusionModel m = test::random_model(dim, 256, 91);
  const std::vector<float> x0 = test::random_x(size_t(B) * dim, 92);
  const std::vector<int64_t> t(B, 999);
  auto denoise = [&](DenoisePath path, Precision p) {
    return [&, path, p](CudaBackend& be) { return run_denoise(be, m, path, p, x0, t, S).x; };
  };
  for (const char* kern : {"m16", "n8"}) {
    kernels::KernelOptions o;
    kernels::set_kernel_option(o, "cta", kern);
    check_stamped(1, S, 0, kCtaOrder, denoise(DenoisePath::SingleCta, Precision::Bf16), std::string("single-cta ") + kern, o);
  }
  if (test::path_supported(DenoisePath::Cluster, dim, 256, B, Precision::Fp32))
    check_stamped(16, S, 0, kClusterOrder, denoise(DenoisePath::Cluster, Precision::Fp32), "cluster");
  const Mlp3Weights w = make_random_mlp3(48, 64, 40, 24, 93);
  const std::vector<float> xm = test::random_x(size_t(16) * w.d0, 94);
  for (int rpc : {16, 1}) {
    kernels::KernelOptions o;
    o.mlp3_rows_per_cta = rpc;
    check_stamped(16 / rpc, 0, -1, kMlpOrder,
                  [&](CudaBackend& be) {
                    std::vector<float> y(size_t(16) * w.d3, test::nan_f());
                    be.mlp3(w, xm.data(), 16, y.data(), Precision::Fp32);
                    return y;
                  },
                  "mlp3 tiny rows/CTA " + std::to_string(rpc), o);
  }
}

}  // namespace
}  // namespace diffscope
