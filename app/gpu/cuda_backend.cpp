// cuda_backend.cpp — CudaBackend: device-resident model, step tables and scratch; the host-pointer interface
// uploads, runs the fused kernels (kernels/kernels.h) and downloads.
#include "gpu/cuda_backend.h"

#include <cublas_v2.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "base/arg_error.h"
#include "base/errors.h"
#include "base/philox_normal.h"
#include "gpu/cublas_handle.h"
#include "gpu/cuda_check.h"
#include "gpu/device_eps_net.h"
#include "gpu/device_mixture.h"
#include "gpu/device_mlp3.h"
#include "gpu/device_step_table.h"
#include "gpu/device_workspaces.h"
#include "gpu/gpu_buffer.h"
#include "kernels/kernels.h"
#include "kernels/mixture/mixture_kernels.h"
#include "kernels/solver/solver_kernels.h"
#include "run/frame_probe.h"

namespace diffscope::gpu {

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

// Tables that need the solver kernel: a previous data prediction, a second evaluation, float timesteps, or a model
// family's network input and time values (SEMANTICS §3: never the integer-t fast kernels).
bool needs_solver_kernel(const StepTable& t) {
  return t.uses_prev() || t.uses_second_eval() || t.spacing == Spacing::Karras || t.has_family_rows();
}

// Every array DeviceSolverTable::upload reads is equal (the float copies follow from the float64 arrays).
bool same_solver_table(const StepTable& a, const StepTable& b) {
  return a.sampler == b.sampler && a.spacing == b.spacing && a.T == b.T && a.t == b.t && a.t_net == b.t_net &&
         a.noise_key == b.noise_key && a.abar == b.abar && a.A == b.A && a.C == b.C && a.S == b.S && a.P == b.P &&
         a.Dx == b.Dx && a.De == b.De && a.H == b.H && a.t_net2 == b.t_net2 && a.abar2 == b.abar2 &&
         a.time == b.time && a.time2 == b.time2 && a.c_in == b.c_in && a.c_in2 == b.c_in2 && a.Gx == b.Gx &&
         a.Go == b.Go && a.Gx2 == b.Gx2 && a.Go2 == b.Go2;
}

}  // namespace

// The backend's device state, one owner per concern (gpu/device_*.h): the model (a network or an analytic
// mixture), the step tables, the solver state, the workspaces, the MLP, and the host interface's staging.
struct CudaBackend::Impl {
  int device = 0;
  std::string device_name;
  kernels::DeviceCaps caps;        // captured once, in the constructor
  kernels::KernelOptions options;  // set_kernel_options
  kernels::LaunchCache launch_cache;
  long long* stamps = nullptr;
  size_t stamp_capacity = 0;
  std::string last_kernel = "none";
  CudaStream stream;
  // cuBLAS, created on the first unfused call: it is loaded at run time (gpu/cublas_loader.h), so the
  // fused paths work where libcublas is not installed.
  CublasHandle cublas;

  // model: a network, or an analytic model (SEMANTICS §6) whose every table runs kernels/mixture/mixture_steps.cu
  bool have_model = false;
  bool mixture_mode = false;
  Schedule schedule;
  DeviceEpsNet net;
  DeviceMixture mixture;

  // step tables: the fast kernels' table, the t-indexed ddpm-mean table of denoise, and (solver_mode) the current
  // table when it needs the solver kernel with its per-row state
  DeviceStepTable table, t_indexed;
  bool solver_mode = false;
  DeviceSolverTable solver_table;
  SolverState solver_state;
  bool have_solver_table = false;
  // The current plain table (not solver_mode) on the host, for the calls whose plan runs it on the solver kernels
  // (kernels::plain_table_on_solver); plain_in_solver_table: solver_table holds it.
  StepTable plain_host;
  bool plain_in_solver_table = false;
  StepTable t_indexed_host;  // the model's denoise table (build_t_indexed_ddpm_mean), for t_indexed_run

  // run_steps' previous data prediction (SEMANTICS §3): solver_state.prev holds what the caller's prev_x0 of the
  // last run_steps call would hold until a kernel writes it again, so it is uploaded only when a call does not
  // continue that one and downloaded only when a call ends the table.
  struct PrevRun {
    const float* host = nullptr;  // that call's prev_x0 (compared, never read through here); null: none
    size_t n = 0;                 // its B * dim
    int k_end = -1;               // where that call stopped
  } prev_run;

  GeneralWorkspace ws_general;
  UnfusedDenoiseWorkspace ws_unfused;

  DeviceMlp3 mlp;
  UnfusedMlp3Workspace ws_mlp;

  // host-interface staging
  GpuBuffer<float> d_x, d_frames, m_x, m_y;
  GpuBuffer<int32_t> d_tstart;
  std::vector<int32_t> h_tstart;

  kernels::DenoisePath force = kernels::DenoisePath::Auto, last = kernels::DenoisePath::General;
  kernels::Mlp3Path mlp_force = kernels::Mlp3Path::Auto;

  cublasHandle_t cublas_handle() { return cublas.get("the unfused baseline"); }

  kernels::LaunchContext launch_context() {
    kernels::LaunchContext c;
    c.caps = caps;
    c.cache = &launch_cache;
    c.stamps = stamps;
    c.stamp_capacity = stamp_capacity;
    return c;
  }

  // Plans and launches a fused denoiser call (the plan: kernels::plan_denoise); an empty call runs nothing.
  void launch_denoise(const kernels::DenoiseArgs& a, Precision p, cudaStream_t s) {
    if (a.B <= 0 || a.k_end <= a.k_begin) {
      last = kernels::DenoisePath::General;
      return;
    }
    kernels::DenoiseProblem pr;
    pr.B = a.B, pr.dim = a.net.dim, pr.hidden = a.net.hidden, pr.bf16_fragments = a.net.f2_bf16 != nullptr;
    const kernels::DenoisePlan plan = kernels::plan_denoise(pr, p, caps, options, force);
    kernels::launch_denoise(a, p, plan, launch_context(), s);
    last = plan.path;
    last_kernel = kernels::denoise_kernel_name(plan);
  }

  // Whether a run of the current table on B rows at precision p runs the solver kernels: solver_mode, or a plain
  // table the plan moves there (uploaded into solver_table on the first such call after the table changed).
  bool on_solver_kernels(int B, Precision p) {
    if (solver_mode) return true;
    if (mixture_mode) return false;
    const kernels::DeviceNet& n = net.view();
    kernels::DenoiseProblem pr;
    pr.B = B, pr.dim = n.dim, pr.hidden = n.hidden, pr.bf16_fragments = n.f1_bf16 != nullptr;
    if (!kernels::plain_table_on_solver(pr, p, caps, options, force)) return false;
    if (!plain_in_solver_table) {
      have_solver_table = false;  // until the upload below has finished
      solver_table.upload(plain_host, stream.get());
      have_solver_table = plain_in_solver_table = true;
    }
    return true;
  }

  // A fused call's arguments on the current network: the device's SM count and, where the general kernel
  // needs one for `rows` rows, its workspace.
  kernels::DenoiseArgs fused_args(int rows) {
    kernels::DenoiseArgs a;
    a.net = net.view();
    a.num_sms = caps.sm_count;
    a.workspace = ws_general.reserve(a.net.dim, a.net.hidden, rows);
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
  m->caps.cc_major = prop.major;
  m->caps.cc_minor = prop.minor;
  m->caps.sm_count = std::max(1, prop.multiProcessorCount);
  m->caps.sm90a_code = kernels::build_has_sm90a();
  // The process's kernel options, an edge for every front end (sample, the GUI, Python): a comma-separated list of
  // KEY=VALUE (kernels/plan/kernel_plan.h), e.g. DIFFSCOPE_KERNEL_OPTIONS=wgmma=0,pdl=0; a bad one is an error.
  if (const char* env = std::getenv("DIFFSCOPE_KERNEL_OPTIONS")) {
    try {
      kernels::set_kernel_options(m->options, env);
    } catch (const InvalidInput& e) {
      throw InvalidInput(std::string("DIFFSCOPE_KERNEL_OPTIONS: ") + e.what());
    }
  }
}

CudaBackend::~CudaBackend() = default;

std::string CudaBackend::name() const { return "cuda (" + m->device_name + ")"; }
std::string CudaBackend::device() const { return m->device_name; }
cudaStream_t CudaBackend::stream() const { return m->stream.get(); }

void CudaBackend::set_model(const DiffusionModel& model) {
  if (model.mixture) {
    const GaussianMixture& g = *model.mixture;
    if (!kernels::mixture_kernel_supported(g.dim, g.K))
      throw ArgumentError(Arg::Backend, "cuda", "cpu",
                          "model '" + model.path + "': a gaussian_mixture with dim = " + std::to_string(g.dim) +
                              ", K = " + std::to_string(g.K) + " is too large for the CUDA mixture kernel (valid: dim <= " +
                              std::to_string(kernels::kMixtureMaxDim) + ", K <= " + std::to_string(kernels::kMixtureMaxK) +
                              "): use " + arg_ref(Arg::Backend) + " cpu");
    const cudaStream_t s = m->stream.get();
    m->mixture.upload(g, s);
    m->net.clear(g.dim);  // a network set later uploads again
    m->mixture_mode = m->have_model = true;
    m->schedule = model.schedule;
    return;
  }
  m->mixture_mode = false;
  // The kernels evaluate the network of SEMANTICS §2 without its class rows: a class-conditional network (even as
  // its null class) runs on the CPU only, for every call (steps, denoise, the eps field, the bench).
  if (model.net.classes > 0)
    throw ArgumentError(Arg::Backend, "cuda", "cpu",
                        "model '" + model.path + "': a class-conditional network (class_emb.weight, " +
                            std::to_string(model.net.classes) + " classes; SEMANTICS §2) runs on the CPU only: use " +
                            arg_ref(Arg::Backend) + " cpu");
  const cudaStream_t s = m->stream.get();
  const bool same_net = !m->net.upload(model.net, s);
  m->have_model = true;
  m->schedule = model.schedule;
  // A new run of the same model uploads nothing and waits for nothing (the GUI's loop starts one every frame).
  // denoise's per-t table in the model's family; a family denoise does not take (flow, edm, another time input)
  // keeps the epsilon table, which nothing reads: denoise refuses such a model first.
  const FamilyParams denoise_family = denoise_takes(model.family) ? model.family : FamilyParams{};
  StepTable t_indexed = build_t_indexed_ddpm_mean(model.schedule, denoise_family);
  const bool new_table = m->t_indexed.upload(t_indexed, s);
  if (new_table) m->t_indexed_host = std::move(t_indexed);
  if (new_table || !same_net) {
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));
    count_sync();
  }
}

void CudaBackend::set_step_table(const StepTable& t) {
  // The fast kernels run tables of (t, A, C, S) with integer t (network input t/T, noise key t); the others
  // (previous data prediction, second evaluation, float timesteps, a model family's rows) run the solver kernels
  // (kernels/solver/, SEMANTICS §3), and every table of an analytic model the mixture kernel.
  m->solver_mode = needs_solver_kernel(t) || m->mixture_mode;
  if (m->solver_mode) {
    const kernels::DeviceNet& net = m->net.view();
    if (!m->mixture_mode && !kernels::solver_shape(net.dim, net.hidden))
      throw ArgumentError(Arg::Backend, "cuda", "cpu",
                          arg_ref(Arg::Sampler) + " " + sampler_name(t.sampler) + " " + arg_ref(Arg::Spacing) + " " +
                              spacing_name(t.spacing) + ": hidden = " + std::to_string(net.hidden) +
                              " is too large for the CUDA solver kernel: use " + arg_ref(Arg::Backend) + " cpu");
    // The same table again (the next chunk of a run): no upload and no wait.
    if (m->have_solver_table && same_solver_table(t, m->solver_table.host())) return;
    m->have_solver_table = m->plain_in_solver_table = false;  // until the upload below has finished
    m->solver_table.upload(t, m->stream.get());
    m->have_solver_table = true;
    return;
  }
  if (m->table.upload(t, m->stream.get())) {  // the same table again (a new seed): no upload, no wait
    CUDA_CHECK_THROW(cudaStreamSynchronize(m->stream.get()));
    count_sync();
    m->plain_host = t;
    m->plain_in_solver_table = false;
  }
}

static void require_model(bool have) {
  if (!have) throw std::logic_error("CudaBackend: set_model() must be called first");
}

// The analytic model runs step tables only on the GPU (kernels/mixture/mixture_steps.cu).
static void require_network(bool mixture, const char* what) {
  if (mixture)
    throw ArgumentError(Arg::Backend, "cuda", "cpu",
                        std::string(what) + " of a gaussian_mixture model (SEMANTICS §6) runs on the CPU only: use " +
                            arg_ref(Arg::Backend) + " cpu");
}

void CudaBackend::run_steps_device(int k_begin, int k_end, float* d_x, int B, uint64_t seed, float* d_frames, Precision p,
                                   cudaStream_t stream, uint32_t row_offset) {
  require_model(m->have_model);
  const bool solver = m->on_solver_kernels(B, p);
  const int n_steps = solver ? m->solver_table.steps() : m->table.steps();  // the table set last
  if (k_begin < 0 || k_end > n_steps || k_begin > k_end)
    throw InvalidInput("steps [" + std::to_string(k_begin) + ", " + std::to_string(k_end) +
                       ") out of range; valid: within [0, " + std::to_string(n_steps) + "]");
  if (solver) {
    const kernels::DeviceNet& net = m->net.view();
    const size_t n = static_cast<size_t>(B) * net.dim;
    kernels::SolverArgs sa;
    sa.net = net;
    sa.tab = m->solver_table.view();
    sa.x = d_x, sa.B = B, sa.k_begin = k_begin, sa.k_end = k_end, sa.frames = d_frames;
    sa.seed = seed, sa.row_offset = row_offset;
    SolverState& st = m->solver_state;
    if (sa.tab.P) {  // step 0 never reads it (P[0] = 0)
      st.prev.reserve(n), sa.prev = st.prev.data();
      m->prev_run = {};  // written here: run_steps records whose it is after the call
    }
    if (sa.tab.H) st.e1.reserve(n), sa.e1 = st.e1.data();
    if (m->mixture_mode) {
      kernels::MixtureStepArgs ma;
      ma.mix = m->mixture.view();
      m->solver_table.mixture_levels(ma);
      ma.run = sa;
      kernels::launch_mixture_steps(ma, stream);
      m->last_kernel = "mixture";
      CUDA_CHECK_LAUNCH();
      return;
    }
    // The plan: the tensor-core solvers (wgmma for bf16 / fp16 at large batches, mma.sync for tf32 / bf16 / fp16),
    // else fp32 arithmetic (the tiled kernel of the ddim fp32 path where the shape has it).
    kernels::DenoiseProblem pr;
    pr.B = B, pr.dim = net.dim, pr.hidden = net.hidden, pr.bf16_fragments = net.f1_bf16 != nullptr;
    const kernels::SolverPlan plan = kernels::plan_solver(pr, p, m->caps, m->options, m->force);
    switch (plan.path) {
      case kernels::DenoisePath::Wgmma:
        kernels::launch_solver_wgmma(sa, p, m->launch_context(), stream);
        break;
      case kernels::DenoisePath::TensorCore: kernels::launch_solver_tc(sa, p, m->caps.sm_count, stream); break;
      case kernels::DenoisePath::Tiled: kernels::launch_denoise_solver_tiled(sa, stream); break;
      default: kernels::launch_denoise_solver(sa, stream);
    }
    m->last = plan.path;
    m->last_kernel = kernels::solver_kernel_name(plan);
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
  m->launch_denoise(a, p, stream);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::run_steps_device_unfused(int k_begin, int k_end, float* d_x, int B, uint64_t seed, float* d_frames,
                                           Precision p, cudaStream_t stream, uint32_t row_offset) {
  require_model(m->have_model);
  require_network(m->mixture_mode, "the unfused baseline");
  if (m->solver_mode) {
    const StepTable& t = m->solver_table.host();
    throw InvalidInput(std::string("the unfused baseline runs ddim/ddpm/ddpm-mean/euler-ancestral tables only, not ") +
                       sampler_name(t.sampler) + " on " + spacing_name(t.spacing) +
                       (t.has_family_rows() ? std::string(" of a ") + family_name(t.family.family) + " model" : ""));
  }
  kernels::DenoiseArgs a;
  a.net = m->net.view();
  a.tab = m->table.view();
  a.x = d_x;
  a.B = B;
  a.k_begin = k_begin;
  a.k_end = k_end;
  a.frames = d_frames;
  a.seed = seed;
  a.row_offset = row_offset;
  const kernels::UnfusedWorkspace ws = m->ws_unfused.reserve(B, a.net.dim, a.net.hidden, p);
  kernels::run_denoise_unfused(m->cublas_handle(), a, p, ws, stream);
  m->last_kernel = "unfused-cublas";
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::denoise_device(float* d_x, const int32_t* d_t_start, int B, int S, float* d_frames, Precision p,
                                 cudaStream_t stream, bool unfused, int uniform_t_start) {
  require_model(m->have_model);
  require_network(m->mixture_mode, "denoise");
  if (!unfused && uniform_t_start >= 0 && S >= 1 && S <= uniform_t_start + 1 &&
      uniform_t_start < m->t_indexed_host.steps()) {
    const kernels::DeviceNet& net = m->net.view();
    kernels::DenoiseProblem pr;
    pr.B = B, pr.dim = net.dim, pr.hidden = net.hidden, pr.bf16_fragments = net.f1_bf16 != nullptr;
    if (kernels::plain_table_on_solver(pr, p, m->caps, m->options, m->force)) {
      set_step_table(t_indexed_run(m->t_indexed_host, uniform_t_start, S));  // no upload when it is the last one
      run_steps_device(0, S, d_x, B, 0, d_frames, p, stream);
      return;
    }
  }
  kernels::DenoiseArgs a = unfused ? kernels::DenoiseArgs{} : m->fused_args(B);
  a.net = m->net.view();
  a.tab = m->t_indexed.view();
  a.x = d_x;
  a.B = B;
  a.row_t = d_t_start;
  a.k_begin = 0;
  a.k_end = S;
  a.frames = d_frames;
  if (unfused) {
    const kernels::UnfusedWorkspace ws = m->ws_unfused.reserve(B, a.net.dim, a.net.hidden, p);
    kernels::run_denoise_unfused(m->cublas_handle(), a, p, ws, stream);
  } else {
    m->launch_denoise(a, p, stream);
  }
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::eps_field_device(const float* d_pts, int n, int t, bool predict_x0, float* d_out, cudaStream_t stream) {
  require_model(m->have_model);
  require_network(m->mixture_mode, "the eps field");
  if (t < 0 || t >= m->schedule.T)
    throw InvalidInput("t = " + std::to_string(t) + " is out of range; valid: [0, " + std::to_string(m->schedule.T - 1) + "]");
  const double abar = m->schedule.alphas_cumprod[t];
  const kernels::DeviceNet& net = m->net.view();
  kernels::launch_eps_field(net, d_pts, n, t, m->schedule.T, predict_x0, static_cast<float>(std::sqrt(abar)),
                            static_cast<float>(std::sqrt(1.0 - abar)), d_out,
                            m->ws_general.reserve(net.dim, net.hidden, n), stream);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::start_noise_device(float* d_x, int B, uint64_t seed, cudaStream_t stream) {
  require_model(m->have_model);
  kernels::launch_philox_fill(d_x, B, m->net.view().dim, seed, kStartNoiseKey(static_cast<uint32_t>(m->schedule.T)), 0, stream);
  CUDA_CHECK_LAUNCH();
}

void CudaBackend::force_denoise_path(kernels::DenoisePath path) { m->force = path; }
kernels::DenoisePath CudaBackend::last_denoise_path() const { return m->last; }
std::string CudaBackend::last_kernel() const { return m->last_kernel; }
void CudaBackend::set_kernel_options(const kernels::KernelOptions& o) { m->options = o; }
const kernels::KernelOptions& CudaBackend::kernel_options() const { return m->options; }
const kernels::DeviceCaps& CudaBackend::device_caps() const { return m->caps; }
void CudaBackend::set_latency_stamps(long long* buf, size_t capacity) {
  m->stamps = buf;
  m->stamp_capacity = buf ? capacity : 0;
}
void CudaBackend::force_mlp3_path(kernels::Mlp3Path path) { m->mlp_force = path; }

// ---- host-pointer interface ----------------------------------------------------------------------------

void CudaBackend::denoise(const DiffusionModel& model, float* x, const int64_t* t_start, int B, int S, float* trajectory,
                          Precision precision) {
  if (!denoise_takes(model.family)) build_t_indexed_ddpm_mean(model.schedule, model.family);  // throws, naming why
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
  const bool uniform = B > 0 && std::all_of(t_start, t_start + B, [&](int64_t t) { return t == t_start[0]; });
  denoise_device(m->d_x.data(), m->d_tstart.data(), B, S, frames, precision, s, false,
                 uniform ? static_cast<int>(t_start[0]) : -1);
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
  // The previous data prediction stays on the device between the calls of one run (SEMANTICS §3): it is read
  // from prev_x0 only when this call resumes a run the device does not hold (step 0 never reads it: P[0] = 0).
  Impl::PrevRun& run = m->prev_run;
  const bool continues = run.host == prev_x0 && run.n == n && run.k_end == k_begin;
  if (table.uses_prev() && k_begin > 0 && !continues) m->solver_state.prev.copy_from_host(prev_x0, n, s);
  float* d_frames = nullptr;
  const size_t nf = static_cast<size_t>(k_end - k_begin) * n;
  if (frames && nf) {
    m->d_frames.reserve(nf);
    d_frames = m->d_frames.data();
  }
  run_steps_device(k_begin, k_end, m->d_x.data(), B, seed, d_frames, precision, s, row_offset);
  m->d_x.copy_to_host(x, n, s);
  if (table.uses_prev() && k_end == table.steps()) m->solver_state.prev.copy_to_host(prev_x0, n, s);
  if (d_frames) m->d_frames.copy_to_host(frames, nf, s);
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  if (table.uses_prev()) run = {prev_x0, n, k_end};
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

void CudaBackend::set_mlp3(const Mlp3Weights& w) { m->mlp.upload(w, m->stream.get()); }

void CudaBackend::mlp3_device(const float* d_x, int B, float* d_y, Precision p, cudaStream_t stream, bool unfused) {
  if (!m->mlp.loaded()) throw std::logic_error("CudaBackend: set_mlp3() must be called first");
  const kernels::DeviceMlp3& w = m->mlp.view();
  if (unfused) kernels::run_mlp3_unfused(m->cublas_handle(), w, d_x, B, d_y, p, m->ws_mlp.reserve(B, w, p), stream);
  else if (B > 0) {
    const auto aligned16 = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
    kernels::Mlp3Problem pr;
    pr.B = B, pr.d0 = w.d0, pr.d1 = w.d1, pr.d2 = w.d2, pr.d3 = w.d3;
    pr.x_aligned = aligned16(d_x);
    pr.aligned = pr.x_aligned && aligned16(d_y) && aligned16(w.W1) && aligned16(w.W2) && aligned16(w.W3);
    pr.fragments = (p == Precision::Bf16 ? w.f_bf16[0] : p == Precision::F16 ? w.f_f16[0] : w.f_tf32[0]) != nullptr;
    const kernels::Mlp3Plan plan = kernels::plan_mlp3(pr, p, m->caps, m->options, m->mlp_force);
    kernels::launch_mlp3(w, d_x, B, d_y, p, plan, m->launch_context(), stream);
    m->last_kernel = kernels::mlp3_kernel_name(plan, p);
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

}  // namespace diffscope::gpu
