// cuda_backend.cpp — CudaBackend: device-resident model, step tables and scratch; the host-pointer interface
// uploads, runs the fused kernels (kernels/kernels.h) and downloads.
#include "gpu/cuda_backend.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "core/errors.h"
#include "core/philox_normal.h"
#include "core/frame_probe.h"
#include "gpu/cublas_handle.h"
#include "gpu/cuda_check.h"
#include "gpu/gpu_buffer.h"
#include "kernels/frag_pack.h"
#include "kernels/kernels.h"
#include "kernels/mixture_kernels.h"
#include "kernels/solver_kernels.h"

namespace diffscope {

using gpu::GpuBuffer;

bool cuda_device_available() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return n > 0;
}

std::unique_ptr<DenoiserBackend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

namespace {

std::vector<float> transpose(const std::vector<float>& W, int rows, int cols) {
  std::vector<float> T(W.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) T[static_cast<size_t>(c) * rows + r] = W[static_cast<size_t>(r) * cols + c];
  return T;
}
std::vector<uint16_t> to_bf16(const std::vector<float>& W) {
  std::vector<uint16_t> o(W.size());
  for (size_t i = 0; i < W.size(); ++i) o[i] = kernels::float_to_bf16_bits(W[i]);
  return o;
}

struct DeviceTable {
  GpuBuffer<int32_t> t;
  GpuBuffer<float> A, B, S;
  int n = 0, T = 0;
  std::vector<int32_t> h_t;
  std::vector<float> h_A, h_B, h_S;

  // Copies the table to the device unless it holds this table already; returns whether it copied.
  bool upload(const StepTable& tab, cudaStream_t s) {
    if (n == tab.steps() && T == tab.T && h_t == tab.t && h_A == tab.A32 && h_B == tab.B32 && h_S == tab.S32)
      return false;
    h_t = tab.t, h_A = tab.A32, h_B = tab.B32, h_S = tab.S32;
    n = tab.steps();
    T = tab.T;
    t.copy_from_host(h_t, s);
    A.copy_from_host(h_A, s);
    B.copy_from_host(h_B, s);
    S.copy_from_host(h_S, s);
    return true;
  }
  kernels::DeviceSteps view() const { return {t.data(), A.data(), B.data(), S.data(), n, T}; }
};

// A solver table (issue 15, SEMANTICS §3) as float arrays for kernels/denoise_solver.cu.
struct DeviceSolverTable {
  GpuBuffer<float> tt, tt2, A, B, S, P, Dx, De, H, abar, abar2, omab, omab2;
  GpuBuffer<uint32_t> key;
  int n = 0;
  std::vector<float> h_tt, h_tt2, h_P, h_Dx, h_De, h_H, h_abar, h_abar2, h_omab, h_omab2;
  // 1 - v in double, then float (the mixture kernel's noise variance near abar = 1).
  static std::vector<float> one_minus(const std::vector<double>& v) {
    std::vector<float> o(v.size());
    for (size_t i = 0; i < v.size(); ++i) o[i] = static_cast<float>(1.0 - v[i]);
    return o;
  }

  static std::vector<float> as_float(const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); }
  void upload(const StepTable& tab, cudaStream_t s) {
    n = tab.steps();
    // The network's time input as the CPU computes it: float(t_net) / float(T).
    h_tt.resize(n);
    h_tt2.assign(tab.t_net2.size(), 0.f);
    for (int k = 0; k < n; ++k) h_tt[k] = static_cast<float>(tab.t_net[k]) / static_cast<float>(tab.T);
    for (size_t k = 0; k < tab.t_net2.size(); ++k)
      h_tt2[k] = static_cast<float>(tab.t_net2[k]) / static_cast<float>(tab.T);
    h_P = as_float(tab.P), h_Dx = as_float(tab.Dx), h_De = as_float(tab.De), h_H = as_float(tab.H);
    h_abar = as_float(tab.abar), h_abar2 = as_float(tab.abar2);  // the analytic model's noise levels
    abar.copy_from_host(h_abar, s);
    abar2.copy_from_host(h_abar2, s);
    h_omab = one_minus(tab.abar), h_omab2 = one_minus(tab.abar2);
    omab.copy_from_host(h_omab, s);
    omab2.copy_from_host(h_omab2, s);
    tt.copy_from_host(h_tt, s);
    tt2.copy_from_host(h_tt2, s);
    A.copy_from_host(tab.A32, s);
    B.copy_from_host(tab.B32, s);
    S.copy_from_host(tab.S32, s);
    P.copy_from_host(h_P, s);
    Dx.copy_from_host(h_Dx, s);
    De.copy_from_host(h_De, s);
    H.copy_from_host(h_H, s);
    key.copy_from_host(tab.noise_key, s);
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));  // the host vectors are reused by the next upload
  }
  kernels::SolverSteps view(const StepTable& tab) const {
    kernels::SolverSteps v;
    v.tt = tt.data(), v.A = A.data(), v.B = B.data(), v.S = S.data(), v.key = key.data(), v.n = n;
    if (tab.uses_prev()) v.P = P.data(), v.Dx = Dx.data(), v.De = De.data();
    if (tab.uses_second_eval()) v.H = H.data(), v.tt2 = tt2.data();
    return v;
  }
};

// Tables that need the solver kernel: a previous data prediction, a second evaluation or float timesteps.
bool needs_solver_kernel(const StepTable& t) {
  return t.uses_prev() || t.uses_second_eval() || t.spacing == Spacing::Karras;
}

}  // namespace

struct CudaBackend::Impl {
  int device = 0;
  std::string device_name;
  int num_sms = 0;  // the tensor-core kernel's grid (DenoiseArgs::num_sms)
  gpu::CudaStream stream;
  // cuBLAS, created on the first unfused call: it is loaded at run time (gpu/cublas_loader.h), so the
  // fused paths work where libcublas is not installed.
  gpu::CublasHandle cublas;

  // model
  bool have_model = false;
  EpsNet h_net;
  Schedule schedule;
  GpuBuffer<float> W1, b1, W2, b2, W3, b3, W1T, W2T, W3T;
  GpuBuffer<uint32_t> f1b, f2b, f3b, f1t, f2t, f3t;
  GpuBuffer<uint16_t> W1h, W2h, W3h;
  kernels::DeviceNet net;
  DeviceTable table, t_indexed;
  // issue 15: the current table when it needs the solver kernel, its previous data prediction (B, dim), kept
  // across run_steps_device calls, and Heun's first-eps workspace.
  bool solver_mode = false;
  // An analytic model (SEMANTICS §6): every table runs kernels/mixture_steps.cu.
  bool mixture_mode = false;
  GpuBuffer<float> mx_means, mx_var, mx_logw;
  kernels::DeviceMixture mix;
  StepTable solver_host;
  DeviceSolverTable solver_table;
  GpuBuffer<float> d_prev, d_e1;

  // host-API scratch
  GpuBuffer<float> d_x, d_frames;
  GpuBuffer<int32_t> d_tstart;
  std::vector<int32_t> h_tstart;

  // the general kernel's activations at huge hidden sizes (kernels::denoise_general_workspace_floats)
  GpuBuffer<float> ws_general;

  // unfused workspace
  GpuBuffer<float> ws_u, ws_h1, ws_h2, ws_e;
  GpuBuffer<uint16_t> ws_u16, ws_h1_16, ws_h2_16;

  // mlp3
  bool have_mlp = false;
  Mlp3Weights h_mlp;
  GpuBuffer<float> mW[3], mWT[3];
  GpuBuffer<uint32_t> mfb[3], mft[3];
  GpuBuffer<uint16_t> mWh[3];
  kernels::DeviceMlp3 mlp;
  GpuBuffer<float> m_x, m_y, m_h1, m_h2;
  GpuBuffer<uint16_t> m_x16, m_h1_16, m_h2_16;

  kernels::DenoisePath force = kernels::DenoisePath::Auto, last = kernels::DenoisePath::General;
  kernels::Mlp3Path mlp_force = kernels::Mlp3Path::Auto;

  Impl() : stream() {}

  cublasHandle_t cublas_handle() { return cublas.get("the unfused baseline"); }

  // A fused call's arguments on the current network: the device's SM count and, where the general kernel
  // needs one for `rows` rows, its workspace (grows only; ResourceUnavailable when out of memory).
  kernels::DenoiseArgs fused_args(int rows) {
    kernels::DenoiseArgs a;
    a.net = net;
    a.num_sms = num_sms;
    const size_t ws = kernels::denoise_general_workspace_floats(net.dim, net.hidden, rows);
    if (ws) ws_general.reserve(ws), a.workspace = ws_general.data();
    return a;
  }
};

CudaBackend::CudaBackend() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    // With no NVIDIA driver at all the runtime says "driver version is insufficient"; say what that means.
    const std::string why = e == cudaErrorInsufficientDriver ? "no NVIDIA driver is installed or it is older than "
                                                               "this build's CUDA runtime"
                            : e == cudaErrorNoDevice || e == cudaSuccess ? "no CUDA-capable GPU was found"
                                                                         : cudaGetErrorString(e);
    throw ResourceUnavailable("no CUDA device (" + why + ")");
  }
  m = std::make_unique<Impl>();
  CUDA_CHECK_THROW(cudaGetDevice(&m->device));
  cudaDeviceProp prop{};
  CUDA_CHECK_THROW(cudaGetDeviceProperties(&prop, m->device));
  m->device_name = prop.name;
  m->num_sms = std::max(1, prop.multiProcessorCount);
}

CudaBackend::~CudaBackend() = default;

std::string CudaBackend::name() const { return "cuda (" + m->device_name + ")"; }
std::string CudaBackend::device() const { return m->device_name; }
cudaStream_t CudaBackend::stream() const { return m->stream.get(); }

void CudaBackend::set_model(const DiffusionModel& model) {
  if (model.mixture) {
    const GaussianMixture& g = *model.mixture;
    if (!kernels::mixture_kernel_supported(g.dim, g.K))
      throw InvalidInput("model '" + model.path + "': a gaussian_mixture with dim = " + std::to_string(g.dim) +
                         ", K = " + std::to_string(g.K) + " is too large for the CUDA mixture kernel (valid: dim <= " +
                         std::to_string(kernels::kMixtureMaxDim) + ", K <= " + std::to_string(kernels::kMixtureMaxK) +
                         "): use --backend cpu");
    const cudaStream_t s = m->stream.get();
    std::vector<float> means(g.means.begin(), g.means.end()), var(g.K), logw(g.K);
    for (int k = 0; k < g.K; ++k) var[k] = static_cast<float>(g.stds[k] * g.stds[k]), logw[k] = std::log(g.weights[k]);
    m->mx_means.copy_from_host(means, s);
    m->mx_var.copy_from_host(var, s);
    m->mx_logw.copy_from_host(logw, s);
    m->mix = {g.K, g.dim, m->mx_means.data(), m->mx_var.data(), m->mx_logw.data()};
    m->h_net = EpsNet{};  // a network set later uploads again
    m->net = kernels::DeviceNet{};
    m->net.dim = g.dim;
    m->mixture_mode = m->have_model = true;
    m->schedule = model.schedule;
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));
    return;
  }
  m->mixture_mode = false;
  const EpsNet& n = model.net;
  const cudaStream_t s = m->stream.get();
  const bool same_net = m->have_model && m->h_net.dim == n.dim && m->h_net.hidden == n.hidden && m->h_net.W1 == n.W1 &&
                        m->h_net.W2 == n.W2 && m->h_net.W3 == n.W3 && m->h_net.b1 == n.b1 && m->h_net.b2 == n.b2 &&
                        m->h_net.b3 == n.b3;
  if (!same_net) {
    n.validate();
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));  // previous uploads may still read the old host copies
    m->h_net = n;
    const int dim = n.dim, H = n.hidden;
    m->W1.copy_from_host(n.W1, s);
    m->b1.copy_from_host(n.b1, s);
    m->W2.copy_from_host(n.W2, s);
    m->b2.copy_from_host(n.b2, s);
    m->W3.copy_from_host(n.W3, s);
    m->b3.copy_from_host(n.b3, s);
    std::vector<float> t1 = transpose(n.W1, H, dim + 1), t2 = transpose(n.W2, H, H), t3 = transpose(n.W3, dim, H);
    m->W1T.copy_from_host(t1, s);
    m->W2T.copy_from_host(t2, s);
    m->W3T.copy_from_host(t3, s);
    std::vector<uint16_t> h1 = to_bf16(n.W1), h2 = to_bf16(n.W2), h3 = to_bf16(n.W3);
    m->W1h.copy_from_host(h1, s);
    m->W2h.copy_from_host(h2, s);
    m->W3h.copy_from_host(h3, s);
    kernels::DeviceNet& d = m->net;
    d = kernels::DeviceNet{};
    d.dim = dim;
    d.hidden = H;
    d.W1 = m->W1.data(), d.b1 = m->b1.data(), d.W2 = m->W2.data(), d.b2 = m->b2.data(), d.W3 = m->W3.data(),
    d.b3 = m->b3.data();
    d.W1T = m->W1T.data(), d.W2T = m->W2T.data(), d.W3T = m->W3T.data();
    d.W1_bf16 = m->W1h.data(), d.W2_bf16 = m->W2h.data(), d.W3_bf16 = m->W3h.data();
    if (kernels::denoise_path_supported(kernels::DenoisePath::TensorCore, dim, H, 1, Precision::Bf16)) {
      // Padded x width: 16 for dim <= 16, else 64 (the instantiations of denoise_tc.cu).
      const int kx = dim <= 16 ? 16 : 64;
      for (int bf = 0; bf < 2; ++bf) {
        std::vector<uint32_t> p1;
        std::vector<uint32_t> p2 = kernels::pack_fragments(n.W2.data(), H, H, H, bf);
        // W3 padded to kx output rows.
        std::vector<float> w3p(static_cast<size_t>(kx) * H, 0.f);
        std::memcpy(w3p.data(), n.W3.data(), sizeof(float) * n.W3.size());
        std::vector<uint32_t> p3 = kernels::pack_fragments(w3p.data(), kx, H, H, bf);
        // W1 x-part padded to kx inputs.
        std::vector<float> w1p(static_cast<size_t>(H) * kx, 0.f);
        for (int r = 0; r < H; ++r)
          for (int c = 0; c < dim; ++c) w1p[static_cast<size_t>(r) * kx + c] = n.W1[static_cast<size_t>(r) * (dim + 1) + c];
        p1 = kernels::pack_fragments(w1p.data(), H, kx, kx, bf);
        (bf ? m->f1b : m->f1t).copy_from_host(p1, s);
        (bf ? m->f2b : m->f2t).copy_from_host(p2, s);
        (bf ? m->f3b : m->f3t).copy_from_host(p3, s);
        CUDA_CHECK_THROW(cudaStreamSynchronize(s));  // host vectors die at scope end
      }
      d.f1_bf16 = m->f1b.data(), d.f2_bf16 = m->f2b.data(), d.f3_bf16 = m->f3b.data();
      d.f1_tf32 = m->f1t.data(), d.f2_tf32 = m->f2t.data(), d.f3_tf32 = m->f3t.data();
    }
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));
    m->have_model = true;
  }
  m->schedule = model.schedule;
  // A new run of the same model uploads nothing and waits for nothing (the GUI's loop starts one every frame).
  if (m->t_indexed.upload(build_t_indexed_ddpm_mean(model.schedule), s) || !same_net) {
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));
    count_sync();
  }
}

void CudaBackend::set_step_table(const StepTable& t) {
  // The fast kernels run tables of (t, A, B, S) with integer t (network input t/T, noise key t); the others
  // (previous data prediction, second evaluation, float timesteps) run kernels/denoise_solver.cu (SEMANTICS §3).
  m->solver_mode = needs_solver_kernel(t) || m->mixture_mode;
  if (m->mixture_mode) {
    m->solver_host = t;
    m->solver_table.upload(t, m->stream.get());
    return;
  }
  if (m->solver_mode) {
    if (!kernels::denoise_solver_supported(m->net.dim, m->net.hidden))
      throw InvalidInput(std::string("--sampler ") + sampler_name(t.sampler) + " --spacing " + spacing_name(t.spacing) +
                         ": hidden = " + std::to_string(m->net.hidden) +
                         " is too large for the CUDA solver kernel: use --backend cpu");
    m->solver_host = t;
    m->solver_table.upload(t, m->stream.get());
    return;
  }
  if (m->table.upload(t, m->stream.get())) {  // the same table again (a new seed): no upload, no wait
    CUDA_CHECK_THROW(cudaStreamSynchronize(m->stream.get()));
    count_sync();
  }
}

static void require_model(bool have) {
  if (!have) throw std::logic_error("CudaBackend: set_model() must be called first");
}

// The analytic model runs step tables only on the GPU (kernels/mixture_steps.cu).
static void require_network(bool mixture, const char* what) {
  if (mixture)
    throw InvalidInput(std::string(what) + " of a gaussian_mixture model (SEMANTICS §6) runs on the CPU only: use "
                       "--backend cpu");
}

void CudaBackend::run_steps_device(int k_begin, int k_end, float* d_x, int B, uint64_t seed, float* d_frames, Precision p,
                                   cudaStream_t stream, uint32_t row_offset) {
  require_model(m->have_model);
  const int n_steps = m->solver_mode ? m->solver_table.n : m->table.n;  // the table set last
  if (k_begin < 0 || k_end > n_steps || k_begin > k_end)
    throw InvalidInput("steps [" + std::to_string(k_begin) + ", " + std::to_string(k_end) +
                       ") out of range; valid: within [0, " + std::to_string(n_steps) + "]");
  if (m->solver_mode) {
    const size_t n = static_cast<size_t>(B) * m->net.dim;
    kernels::SolverArgs sa;
    sa.net = m->net;
    sa.tab = m->solver_table.view(m->solver_host);
    sa.x = d_x, sa.B = B, sa.k_begin = k_begin, sa.k_end = k_end, sa.frames = d_frames;
    sa.seed = seed, sa.row_offset = row_offset;
    if (sa.tab.P) m->d_prev.reserve(n), sa.prev = m->d_prev.data();  // step 0 never reads it (P[0] = 0)
    if (sa.tab.H) m->d_e1.reserve(n), sa.e1 = m->d_e1.data();
    if (m->mixture_mode) {
      kernels::MixtureStepArgs ma;
      ma.mix = m->mix;
      ma.abar = m->solver_table.abar.data();
      ma.abar2 = m->solver_table.abar2.data();
      ma.one_minus_abar = m->solver_table.omab.data();
      ma.one_minus_abar2 = m->solver_table.omab2.data();
      ma.run = sa;
      kernels::launch_mixture_steps(ma, stream);
      CUDA_CHECK_LAUNCH();
      return;
    }
    // fp32 arithmetic whatever the precision: the tiled kernel of the ddim fp32 path where the shape has it.
    const bool tiled = kernels::denoise_solver_tiled_supported(m->net.dim, m->net.hidden) &&
                       m->force != kernels::DenoisePath::General;
    if (tiled) kernels::launch_denoise_solver_tiled(sa, stream);
    else kernels::launch_denoise_solver(sa, stream);
    m->last = tiled ? kernels::DenoisePath::Tiled : kernels::DenoisePath::General;
    (void)p;
    CUDA_CHECK_LAUNCH();
    return;
  }
  kernels::DenoiseArgs a = m->fused_args(B);
  a.tab = m->table.view();
  a.x = d_x;
  a.B = B;
  a.k_begin = k_begin;
  a.k_end = k_end;
  a.frames = d_frames;
  a.seed = seed;
  a.row_offset = row_offset;
  m->last = kernels::launch_denoise(a, p, stream, m->force);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::run_steps_device_unfused(int k_begin, int k_end, float* d_x, int B, uint64_t seed, float* d_frames,
                                           Precision p, cudaStream_t stream, uint32_t row_offset) {
  require_model(m->have_model);
  require_network(m->mixture_mode, "the unfused baseline");
  if (m->solver_mode)
    throw InvalidInput(std::string("the unfused baseline runs ddim/ddpm/ddpm-mean/euler-ancestral tables only, not ") +
                       sampler_name(m->solver_host.sampler) + " on " + spacing_name(m->solver_host.spacing));
  kernels::DenoiseArgs a;
  a.net = m->net;
  a.tab = m->table.view();
  a.x = d_x;
  a.B = B;
  a.k_begin = k_begin;
  a.k_end = k_end;
  a.frames = d_frames;
  a.seed = seed;
  a.row_offset = row_offset;
  const int dim = m->net.dim, H = m->net.hidden;
  m->ws_u.reserve(static_cast<size_t>(B) * (dim + 1));
  m->ws_h1.reserve(static_cast<size_t>(B) * H);
  m->ws_h2.reserve(static_cast<size_t>(B) * H);
  m->ws_e.reserve(static_cast<size_t>(B) * dim);
  if (p == Precision::Bf16) {
    m->ws_u16.reserve(static_cast<size_t>(B) * (dim + 1));
    m->ws_h1_16.reserve(static_cast<size_t>(B) * H);
    m->ws_h2_16.reserve(static_cast<size_t>(B) * H);
  }
  kernels::UnfusedWorkspace ws{m->ws_u.data(), m->ws_h1.data(), m->ws_h2.data(), m->ws_e.data(),
                               m->ws_u16.data(), m->ws_h1_16.data(), m->ws_h2_16.data()};
  kernels::run_denoise_unfused(m->cublas_handle(), a, p, ws, stream);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::denoise_device(float* d_x, const int32_t* d_t_start, int B, int S, float* d_frames, Precision p,
                                 cudaStream_t stream, bool unfused) {
  require_model(m->have_model);
  require_network(m->mixture_mode, "denoise");
  kernels::DenoiseArgs a = unfused ? kernels::DenoiseArgs{} : m->fused_args(B);
  a.net = m->net;
  a.tab = m->t_indexed.view();
  a.x = d_x;
  a.B = B;
  a.row_t = d_t_start;
  a.k_begin = 0;
  a.k_end = S;
  a.frames = d_frames;
  if (unfused) {
    // The unfused path reuses run_steps_device_unfused's workspace logic through a temporary table swap.
    const int dim = m->net.dim, H = m->net.hidden;
    m->ws_u.reserve(static_cast<size_t>(B) * (dim + 1));
    m->ws_h1.reserve(static_cast<size_t>(B) * H);
    m->ws_h2.reserve(static_cast<size_t>(B) * H);
    m->ws_e.reserve(static_cast<size_t>(B) * dim);
    if (p == Precision::Bf16) {
      m->ws_u16.reserve(static_cast<size_t>(B) * (dim + 1));
      m->ws_h1_16.reserve(static_cast<size_t>(B) * H);
      m->ws_h2_16.reserve(static_cast<size_t>(B) * H);
    }
    kernels::UnfusedWorkspace ws{m->ws_u.data(), m->ws_h1.data(), m->ws_h2.data(), m->ws_e.data(),
                                 m->ws_u16.data(), m->ws_h1_16.data(), m->ws_h2_16.data()};
    kernels::run_denoise_unfused(m->cublas_handle(), a, p, ws, stream);
  } else {
    m->last = kernels::launch_denoise(a, p, stream, m->force);
  }
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::eps_field_device(const float* d_pts, int n, int t, bool predict_x0, float* d_out, cudaStream_t stream) {
  require_model(m->have_model);
  require_network(m->mixture_mode, "the eps field");
  if (t < 0 || t >= m->schedule.T)
    throw InvalidInput("t = " + std::to_string(t) + " is out of range; valid: [0, " + std::to_string(m->schedule.T - 1) + "]");
  const double abar = m->schedule.alphas_cumprod[t];
  const size_t ws = kernels::denoise_general_workspace_floats(m->net.dim, m->net.hidden, n);
  if (ws) m->ws_general.reserve(ws);
  kernels::launch_eps_field(m->net, d_pts, n, t, m->schedule.T, predict_x0, static_cast<float>(std::sqrt(abar)),
                            static_cast<float>(std::sqrt(1.0 - abar)), d_out, ws ? m->ws_general.data() : nullptr,
                            stream);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::start_noise_device(float* d_x, int B, uint64_t seed, cudaStream_t stream) {
  require_model(m->have_model);
  kernels::launch_philox_fill(d_x, B, m->net.dim, seed, kStartNoiseKey(static_cast<uint32_t>(m->schedule.T)), 0, stream);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::force_denoise_path(kernels::DenoisePath path) { m->force = path; }
kernels::DenoisePath CudaBackend::last_denoise_path() const { return m->last; }
void CudaBackend::force_mlp3_path(kernels::Mlp3Path path) { m->mlp_force = path; }

// ---- host-pointer interface ----------------------------------------------------------------------------

void CudaBackend::denoise(const DiffusionModel& model, float* x, const int64_t* t_start, int B, int S, float* trajectory,
                          Precision precision) {
  set_model(model);
  const cudaStream_t s = m->stream.get();
  const int dim = model.net.dim;
  const size_t n = static_cast<size_t>(B) * dim;
  m->h_tstart.assign(t_start, t_start + B);
  m->d_tstart.copy_from_host(m->h_tstart, s);
  m->d_x.copy_from_host(x, n, s);
  float* frames = nullptr;
  if (trajectory) {
    std::memcpy(trajectory, x, sizeof(float) * n);
    m->d_frames.reserve(n * S);
    frames = m->d_frames.data();
  }
  denoise_device(m->d_x.data(), m->d_tstart.data(), B, S, frames, precision, s);
  m->d_x.copy_to_host(x, n, s);
  if (trajectory) m->d_frames.copy_to_host(trajectory + n, n * S, s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
}

void CudaBackend::run_steps(const DiffusionModel& model, const StepTable& table, int k_begin, int k_end, float* x, int B,
                            uint64_t seed, float* frames, Precision precision, uint32_t row_offset, float* prev_x0) {
  if (table.uses_prev() && !prev_x0)
    throw std::invalid_argument(std::string("run_steps: solver ") + sampler_name(table.sampler) +
                                " needs the previous data prediction buffer (prev_x0)");
  set_model(model);
  set_step_table(table);
  const cudaStream_t s = m->stream.get();
  const size_t n = static_cast<size_t>(B) * model.net.dim;
  m->d_x.copy_from_host(x, n, s);
  if (table.uses_prev()) m->d_prev.copy_from_host(prev_x0, n, s);  // SEMANTICS §3: kept by the caller
  float* d_frames = nullptr;
  const size_t nf = static_cast<size_t>(k_end - k_begin) * n;
  if (frames && nf) {
    m->d_frames.reserve(nf);
    d_frames = m->d_frames.data();
  }
  run_steps_device(k_begin, k_end, m->d_x.data(), B, seed, d_frames, precision, s, row_offset);
  m->d_x.copy_to_host(x, n, s);
  if (table.uses_prev()) m->d_prev.copy_to_host(prev_x0, n, s);
  if (d_frames) m->d_frames.copy_to_host(frames, nf, s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
}

void CudaBackend::start_noise(const DiffusionModel& model, uint64_t seed, int n, float* x) {
  set_model(model);
  const cudaStream_t s = m->stream.get();
  const size_t count = static_cast<size_t>(n) * model.net.dim;
  m->d_x.reserve(count);
  start_noise_device(m->d_x.data(), n, seed, s);
  m->d_x.copy_to_host(x, count, s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
}

void CudaBackend::eps_field(const DiffusionModel& model, const float* pts, int n, int t, bool x0, float* out) {
  if (model.mixture || n <= 0) return DenoiserBackend::eps_field(model, pts, n, t, x0, out);
  set_model(model);
  const cudaStream_t s = m->stream.get();
  const size_t count = static_cast<size_t>(n) * model.net.dim;
  // The host interface's scratch buffers (d_x: the points, d_frames: the field), free between calls.
  m->d_x.copy_from_host(pts, count, s);
  m->d_frames.reserve(count);
  eps_field_device(m->d_x.data(), n, t, x0, m->d_frames.data(), s);
  m->d_frames.copy_to_host(out, count, s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
}

void CudaBackend::set_mlp3(const Mlp3Weights& w) {
  const bool same = m->have_mlp && m->h_mlp.d0 == w.d0 && m->h_mlp.d1 == w.d1 && m->h_mlp.d2 == w.d2 &&
                    m->h_mlp.d3 == w.d3 && m->h_mlp.W1 == w.W1 && m->h_mlp.W2 == w.W2 && m->h_mlp.W3 == w.W3;
  if (same) return;
  const cudaStream_t s = m->stream.get();
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  m->h_mlp = w;
  const int d[4] = {w.d0, w.d1, w.d2, w.d3};
  const std::vector<float>* W[3] = {&m->h_mlp.W1, &m->h_mlp.W2, &m->h_mlp.W3};
  kernels::DeviceMlp3& dm = m->mlp;
  dm = kernels::DeviceMlp3{};
  dm.d0 = w.d0, dm.d1 = w.d1, dm.d2 = w.d2, dm.d3 = w.d3;
  const bool tc = kernels::mlp3_tc_supported(w.d0, w.d1, w.d2, w.d3);
  for (int l = 0; l < 3; ++l) {
    const int out = d[l + 1], in = d[l];
    m->mW[l].copy_from_host(*W[l], s);
    std::vector<float> t = transpose(*W[l], out, in);
    m->mWT[l].copy_from_host(t, s);
    std::vector<uint16_t> h = to_bf16(*W[l]);
    m->mWh[l].copy_from_host(h, s);
    if (tc) {
      std::vector<uint32_t> pb = kernels::pack_fragments(W[l]->data(), out, in, in, true);
      std::vector<uint32_t> pt = kernels::pack_fragments(W[l]->data(), out, in, in, false);
      m->mfb[l].copy_from_host(pb, s);
      m->mft[l].copy_from_host(pt, s);
      CUDA_CHECK_THROW(cudaStreamSynchronize(s));
      dm.f_bf16[l] = m->mfb[l].data();
      dm.f_tf32[l] = m->mft[l].data();
    }
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  }
  dm.W1 = m->mW[0].data(), dm.W2 = m->mW[1].data(), dm.W3 = m->mW[2].data();
  dm.W1T = m->mWT[0].data(), dm.W2T = m->mWT[1].data(), dm.W3T = m->mWT[2].data();
  dm.W_bf16[0] = m->mWh[0].data(), dm.W_bf16[1] = m->mWh[1].data(), dm.W_bf16[2] = m->mWh[2].data();
  m->have_mlp = true;
}

void CudaBackend::mlp3_device(const float* d_x, int B, float* d_y, Precision p, cudaStream_t stream, bool unfused) {
  if (!m->have_mlp) throw std::logic_error("CudaBackend: set_mlp3() must be called first");
  if (unfused) {
    const kernels::DeviceMlp3& w = m->mlp;
    m->m_h1.reserve(static_cast<size_t>(B) * w.d1);
    m->m_h2.reserve(static_cast<size_t>(B) * w.d2);
    if (p == Precision::Bf16) {
      m->m_x16.reserve(static_cast<size_t>(B) * w.d0);
      m->m_h1_16.reserve(static_cast<size_t>(B) * w.d1);
      m->m_h2_16.reserve(static_cast<size_t>(B) * w.d2);
    }
    kernels::Mlp3Workspace ws{m->m_h1.data(), m->m_h2.data(), m->m_x16.data(), m->m_h1_16.data(), m->m_h2_16.data()};
    kernels::run_mlp3_unfused(m->cublas_handle(), w, d_x, B, d_y, p, ws, stream);
  } else {
    kernels::launch_mlp3(m->mlp, d_x, B, d_y, p, stream, m->mlp_force);
  }
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::mlp3(const Mlp3Weights& w, const float* x, int B, float* y, Precision precision) {
  set_mlp3(w);
  const cudaStream_t s = m->stream.get();
  m->m_x.copy_from_host(x, static_cast<size_t>(B) * w.d0, s);
  m->m_y.reserve(static_cast<size_t>(B) * w.d3);
  mlp3_device(m->m_x.data(), B, m->m_y.data(), precision, s);
  m->m_y.copy_to_host(y, static_cast<size_t>(B) * w.d3, s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
}

}  // namespace diffscope
