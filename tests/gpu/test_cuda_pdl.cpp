// test_cuda_pdl.cpp — back-to-back kernel calls on one stream without host synchronisation, where each call reads
// what the kernel right before it wrote. The latency kernels are launched with programmatic dependent launch
// (kernels/shared/pdl.cuh: the next call starts while the previous one runs and may only touch x / y after pdl_wait), so
// a read moved before that wait would see stale data here. Judged against one float64 run on the CPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "diffusion/cpu_reference.h"
#include "gpu/cuda_backend.h"
#include "gpu_test_util.h"
#include "kernels/kernels.h"
#include "model/random_weights.h"

namespace diffscope {
namespace {

using kernels::DenoisePath;
using test::rel_err;

// x drawn on the device by the Philox start-noise kernel (seed `seed`), read back for the CPU reference.
std::vector<float> device_noise(gpu::GpuBuffer<float>& buf, int B, int dim, uint64_t seed, cudaStream_t s) {
  kernels::launch_philox_fill(buf.data(), B, dim, seed, 1000, 0, s);
  std::vector<float> h(size_t(B) * dim);
  buf.copy_to_host(h.data(), h.size(), s);
  cudaStreamSynchronize(s);
  return h;
}

struct ChainCase {
  DenoisePath path;
  Precision p;
  int B, dim;
  double tol;  // fp32 1e-5 (SEMANTICS §8); bf16 the 16-step tolerance of test_cuda_denoise.cpp
};

// Five calls of 4 steps each (per-row t_start lowered by 4 per call) equal one call of 20 steps; rows with a small
// t_start freeze inside the chain.
TEST(CudaPdl, DenoiseChainOfCallsMatchesOneRun) {
  SKIP_WITHOUT_CUDA();
  const ChainCase cases[] = {{DenoisePath::SingleCta, Precision::Bf16, 8, 64, 5e-4},
                             {DenoisePath::SingleCta, Precision::Bf16, 13, 17, 5e-4},
                             {DenoisePath::Cluster, Precision::Fp32, 8, 64, 1e-5},
                             {DenoisePath::Cluster, Precision::Fp32, 5, 2, 1e-5}};
  for (const ChainCase& c : cases)
    for (const char* pdl : {"1", "0"}) {  // with programmatic dependent launch and without (kernel option pdl)
    const int B = c.B, dim = c.dim, chunk = 4, calls = 5;
    const DiffusionModel m = test::random_model(dim, 256, 77 + dim);
    CudaBackend be;
    kernels::KernelOptions o;
    kernels::set_kernel_option(o, "pdl", pdl);
    be.set_kernel_options(o);
    be.set_model(m);
    be.force_denoise_path(c.path);
    const cudaStream_t s = be.stream();
    gpu::GpuBuffer<float> x(size_t(B) * dim);
    const std::vector<float> x0 = device_noise(x, B, dim, 5 + B, s);
    std::vector<int64_t> t(B);
    for (int b = 0; b < B; ++b) t[b] = (b % 3 == 1) ? 2 + 7 * (b % 2) : 999 - 13 * b;  // 2 and 9 freeze
    std::vector<gpu::GpuBuffer<int32_t>> tc(calls);
    for (int j = 0; j < calls; ++j) {
      std::vector<int32_t> tj(B);
      for (int b = 0; b < B; ++b) tj[b] = static_cast<int32_t>(t[b] - chunk * j);
      tc[j].copy_from_host(tj, s);
    }
    cudaStreamSynchronize(s);
    // The noise kernel writes x again, then the calls follow with no synchronisation in between.
    kernels::launch_philox_fill(x.data(), B, dim, 5 + B, 1000, 0, s);
    for (int j = 0; j < calls; ++j) be.denoise_device(x.data(), tc[j].data(), B, chunk, nullptr, c.p, s);
    std::vector<float> got(size_t(B) * dim, test::nan_f());
    x.copy_to_host(got.data(), got.size(), s);
    cudaStreamSynchronize(s);
    EXPECT_EQ(be.last_denoise_path(), c.path);
    std::vector<double> want = test::widen(x0);
    cpu_ref::denoise<double>(m, want.data(), t.data(), B, chunk * calls, nullptr);
    const double err = rel_err(got, want);
    std::printf("[measured] pdl=%s chain %s %s B=%d dim=%d rel_err=%.3e\n", pdl, be.last_kernel().c_str(),
                precision_name(c.p), B, dim, err);
    EXPECT_LT(err, c.tol) << be.last_kernel() << " pdl=" << pdl;
  }
}

// mlp3 twice on one stream; between the calls the noise kernel rewrites x, so the second call must see the new x.
TEST(CudaPdl, Mlp3SecondCallSeesNewInput) {
  SKIP_WITHOUT_CUDA();
  const Mlp3Weights w = make_random_mlp3(48, 64, 40, 24, 9);
  for (Precision p : {Precision::Fp32, Precision::Bf16}) {
    for (int B : {16, 5}) {
      CudaBackend be;
      be.set_mlp3(w);
      const cudaStream_t s = be.stream();
      gpu::GpuBuffer<float> x(size_t(B) * w.d0), y(size_t(B) * w.d3);
      const std::vector<float> x2 = device_noise(x, B, w.d0, 22, s);
      std::vector<float> got(size_t(B) * w.d3, test::nan_f());
      y.copy_from_host(got, s);
      kernels::launch_philox_fill(x.data(), B, w.d0, 21, 1000, 0, s);
      be.mlp3_device(x.data(), B, y.data(), p, s);
      kernels::launch_philox_fill(x.data(), B, w.d0, 22, 1000, 0, s);
      be.mlp3_device(x.data(), B, y.data(), p, s);
      y.copy_to_host(got.data(), got.size(), s);
      cudaStreamSynchronize(s);
      std::vector<double> xd = test::widen(x2), want(size_t(B) * w.d3);
      cpu_ref::mlp3<double>(w, xd.data(), B, want.data());
      const double err = rel_err(got, want);
      std::printf("[measured] pdl mlp3 B=%d %s rel_err=%.3e\n", B, precision_name(p), err);
      EXPECT_LT(err, p == Precision::Fp32 ? 1e-5 : 2e-2) << precision_name(p) << " B=" << B;
    }
  }
}

}  // namespace
}  // namespace diffscope
