// cuda_trainer.cpp — the CUDA trainer of cuda_trainer.h: the device buffers, the step's launches (the batch, three
// forward GEMMs, the loss, six backward GEMMs and three bias sums, Adam + EMA, the step's end), and its CUDA graph.
//
// Row-major (B, N) activations are column-major (N, B) matrices to cuBLAS, and nn.Linear's (out, in) weights are
// column-major (in, out); so z = a W^T is gemm(T, N), the weight gradient G = d^T a is gemm(N, T), the input
// gradient d W is gemm(N, N), and a bias gradient (the column sums of d) is d times a vector of ones (a kernel
// summing the columns during SiLU's backward, tried instead, was slower on the H200: 157 against 135 us a step at
// batch 4,096, 1249 against 1138 us at 65,536).
#include "gpu/cuda_trainer.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/errors.h"
#include "gpu/cublas_handle.h"
#include "gpu/cuda_check.h"
#include "gpu/gpu_buffer.h"
#include "kernels/train/train_kernels.h"

namespace diffscope::gpu {
namespace {

namespace tk = kernels::train;

constexpr int kLossRing = 1024;  // losses kept on the device between two read-backs (most steps of one call)

void cublas_check(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = std::string("cuBLAS ") + what + " failed: status " + std::to_string(st);
  if (st == CUBLAS_STATUS_ALLOC_FAILED) throw ResourceUnavailable("out of GPU memory (" + msg + ")");
  throw std::runtime_error(msg);
}

// A GEMM operand: its float32 values and, in bf16 mode, their bfloat16 copy (what the GEMM reads then).
struct Operand {
  const float* f = nullptr;
  const uint16_t* h = nullptr;
};

// The device copy of a run: data, level table, parameters, optimizer state, activations and gradients.
struct DeviceTrainBuffers {
  GpuBuffer<float> data, params, adam_m, adam_v, ema, grad, ones, partials;
  GpuBuffer<float> u, y, w, z1, a1, z2, a2, out, d2, d1;  // out holds the loss gradient after the loss kernel
  GpuBuffer<uint16_t> p16, u16, a1_16, a2_16, out16, d2_16, d1_16;  // bf16 mode only
  GpuBuffer<double> sqrt_abar, sqrt_1m_abar, losses;
  GpuBuffer<int64_t> step;
};

void check_device() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    (void)cudaGetLastError();
    throw ResourceUnavailable(std::string("no CUDA device (") +
                              (e == cudaSuccess || e == cudaErrorNoDevice ? "no CUDA-capable GPU was found"
                                                                          : cudaGetErrorString(e)) + ")");
  }
}

class CudaTrainer final : public train::Trainer {
 public:
  CudaTrainer(const train::TrainConfig& c, const train::TrainData& d, const CudaTrainerOptions& o)
      : m_c(c), m_o(o), m_layout(d.dim, c.hidden) {
    check_device();
    CUDA_CHECK_THROW(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking));
    m_cublas = m_handle.get("the CUDA trainer");
    cublas_check(cublasSetStream(m_cublas, m_stream), "SetStream");
    allocate(d);
    set_state(train::initial_state(m_layout, c.seed));
  }
  ~CudaTrainer() override {
    CUDA_CHECK_PRINT(cudaStreamSynchronize(m_stream));
    if (m_graph) CUDA_CHECK_PRINT(cudaGraphExecDestroy(m_graph));
    if (m_cublas) (void)cublasSetStream(m_cublas, nullptr);  // the handle outlives the stream (member order)
    CUDA_CHECK_PRINT(cudaStreamDestroy(m_stream));
  }
  const char* backend() const override { return m_o.precision == TrainPrecision::Bf16 ? "cuda, bf16" : "cuda"; }
  int64_t steps_done() const override { return m_step; }
  int64_t steps_per_call() const override { return kLossRing; }
  double step() override {
    double loss = 0;
    run_steps(1, &loss);
    return loss;
  }
  void run_steps(int64_t n, double* losses) override {
    for (int64_t done = 0; done < n;) {
      const int64_t chunk = std::min<int64_t>(n - done, kLossRing);
      for (int64_t i = 0; i < chunk; ++i) launch_step();
      std::vector<double> ring(kLossRing);
      m_b.losses.copy_to_host(ring.data(), ring.size(), m_stream);
      CUDA_CHECK_THROW(cudaStreamSynchronize(m_stream));
      for (int64_t i = 0; i < chunk; ++i) losses[done + i] = ring[size_t((m_step + i) % kLossRing)];
      m_step += chunk;
      done += chunk;
    }
  }
  train::TrainState state() const override;
  void set_state(const train::TrainState& s) override;

 private:
  void allocate(const train::TrainData& d);
  void launch_step();
  void enqueue_step();
  void forward();
  void backward();
  void gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, Operand A, int lda, Operand B, int ldb,
            float* C, int ldc);
  bool bf16() const { return m_o.precision == TrainPrecision::Bf16; }
  uint16_t* half(GpuBuffer<uint16_t>& b) { return bf16() ? b.data() : nullptr; }

  train::TrainConfig m_c;
  CudaTrainerOptions m_o;
  train::MlpLayout m_layout;
  tk::BatchArgs m_batch;
  tk::AdamArgs m_adam;
  DeviceTrainBuffers m_b;
  cudaStream_t m_stream = nullptr;
  CublasHandle m_handle;
  cublasHandle_t m_cublas = nullptr;
  cudaGraphExec_t m_graph = nullptr;
  bool m_graph_failed = false;
  int64_t m_step = 0, m_launched = 0;  // steps completed (as of the last read-back); steps launched by this object
};

void CudaTrainer::allocate(const train::TrainData& d) {
  const int B = m_c.batch, D = d.dim, H = m_c.hidden, K1 = D + 1;
  const size_t n = m_layout.size, b = size_t(B);
  m_b.data.copy_from_host(d.train, m_stream);
  const train::LevelTable table = train::level_table(m_c);
  m_b.sqrt_abar.copy_from_host(table.sqrt_abar, m_stream);
  m_b.sqrt_1m_abar.copy_from_host(table.sqrt_one_minus_abar, m_stream);
  for (GpuBuffer<float>* p : {&m_b.params, &m_b.adam_m, &m_b.adam_v, &m_b.ema, &m_b.grad}) p->resize(n);
  m_b.u.resize(b * K1);
  m_b.y.resize(b * D);
  m_b.w.resize(b);
  m_b.ones.resize(b);
  for (GpuBuffer<float>* p : {&m_b.z1, &m_b.a1, &m_b.z2, &m_b.a2, &m_b.d2, &m_b.d1}) p->resize(b * H);
  m_b.out.resize(b * D);
  m_b.partials.resize(size_t(tk::loss_partial_count(B)));
  m_b.losses.resize(kLossRing);
  m_b.step.resize(1);
  if (bf16()) {
    m_b.p16.resize(n);
    m_b.u16.resize(b * K1);
    for (GpuBuffer<uint16_t>* p : {&m_b.a1_16, &m_b.a2_16, &m_b.d2_16, &m_b.d1_16}) p->resize(b * H);
    m_b.out16.resize(b * D);
  }
  tk::launch_fill(int64_t(b), 1.0f, m_b.ones.data(), m_stream);
  CUDA_CHECK_THROW(cudaMemsetAsync(m_b.losses.data(), 0, kLossRing * sizeof(double), m_stream));
  m_batch = tk::BatchArgs{m_b.data.data(), d.n_train, D, B, m_b.sqrt_abar.data(), m_b.sqrt_1m_abar.data(), m_c.T,
                          int(m_c.objective), m_c.time_sampling == train::TimeSampling::LogitNormal,
                          m_c.weighting == train::LossWeighting::MinSnr, m_c.logit_mean, m_c.logit_std,
                          m_c.snr_gamma, m_c.seed};
  m_adam = tk::AdamArgs{m_c.lr, m_c.final_lr_frac, m_c.beta1, m_c.beta2, m_c.adam_eps, m_c.ema, m_c.warmup_steps(),
                        m_c.steps};
}

train::TrainState CudaTrainer::state() const {
  train::TrainState s;
  s.step = m_step;
  const size_t n = m_layout.size;
  for (auto [dst, src] : {std::pair{&s.params, &m_b.params}, {&s.adam_m, &m_b.adam_m}, {&s.adam_v, &m_b.adam_v},
                          {&s.ema, &m_b.ema}}) {
    dst->resize(n);
    src->copy_to_host(dst->data(), n, m_stream);
  }
  CUDA_CHECK_THROW(cudaStreamSynchronize(m_stream));
  return s;
}

void CudaTrainer::set_state(const train::TrainState& s) {
  const size_t n = m_layout.size;
  if (s.params.size() != n || s.adam_m.size() != n || s.adam_v.size() != n || s.ema.size() != n || s.step < 0)
    throw InvalidInput("the training state does not fit the network (dim " + std::to_string(m_layout.dim) +
                       ", hidden " + std::to_string(m_layout.hidden) + ": " + std::to_string(n) + " parameters)");
  m_b.params.copy_from_host(s.params, m_stream);
  m_b.adam_m.copy_from_host(s.adam_m, m_stream);
  m_b.adam_v.copy_from_host(s.adam_v, m_stream);
  m_b.ema.copy_from_host(s.ema, m_stream);
  if (bf16()) tk::launch_to_bf16(int64_t(n), m_b.params.data(), m_b.p16.data(), m_stream);
  CUDA_CHECK_THROW(cudaMemcpyAsync(m_b.step.data(), &s.step, sizeof(int64_t), cudaMemcpyHostToDevice, m_stream));
  CUDA_CHECK_THROW(cudaStreamSynchronize(m_stream));  // s.step's host memory is the caller's
  m_step = s.step;
}

void CudaTrainer::gemm(cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, Operand A, int lda, Operand B,
                       int ldb, float* C, int ldc) {
  const float one = 1.f, zero = 0.f;
  const bool h = bf16() && A.h && B.h;
  const cudaDataType_t t = h ? CUDA_R_16BF : CUDA_R_32F;
  const void* a = h ? static_cast<const void*>(A.h) : A.f;
  const void* b = h ? static_cast<const void*>(B.h) : B.f;
  cublas_check(cublasGemmEx(m_cublas, ta, tb, m, n, k, &one, a, t, lda, b, t, ldb, &zero, C, CUDA_R_32F, ldc,
                            CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
               h ? "GemmEx bf16 (training)" : "GemmEx fp32 (training)");
}

// z1 = u W1^T + b1, a1 = SiLU(z1); z2, a2 the same with W2; out = a2 W3^T (b3 is added by the loss kernel).
void CudaTrainer::forward() {
  const train::MlpLayout& L = m_layout;
  const int B = m_c.batch, D = L.dim, H = L.hidden, K1 = D + 1;
  float* p = m_b.params.data();
  const uint16_t* p16 = bf16() ? m_b.p16.data() : nullptr;
  auto weight = [&](size_t off) { return Operand{p + off, p16 ? p16 + off : nullptr}; };
  const int64_t nh = int64_t(B) * H;
  gemm(CUBLAS_OP_T, CUBLAS_OP_N, H, B, K1, weight(L.W1), K1, {m_b.u.data(), half(m_b.u16)}, K1, m_b.a1.data(), H);
  tk::launch_bias_silu(nh, H, m_b.a1.data(), m_b.z1.data(), p + L.b1, half(m_b.a1_16), m_stream);
  gemm(CUBLAS_OP_T, CUBLAS_OP_N, H, B, H, weight(L.W2), H, {m_b.a1.data(), half(m_b.a1_16)}, H, m_b.a2.data(), H);
  tk::launch_bias_silu(nh, H, m_b.a2.data(), m_b.z2.data(), p + L.b2, half(m_b.a2_16), m_stream);
  gemm(CUBLAS_OP_T, CUBLAS_OP_N, D, B, H, weight(L.W3), H, {m_b.a2.data(), half(m_b.a2_16)}, H, m_b.out.data(), D);
}

// The gradients of mlp_backward into m_b.grad (MlpLayout order), from the loss gradient in m_b.out.
void CudaTrainer::backward() {
  const train::MlpLayout& L = m_layout;
  const int B = m_c.batch, D = L.dim, H = L.hidden, K1 = D + 1;
  const float* p = m_b.params.data();
  const uint16_t* p16 = bf16() ? m_b.p16.data() : nullptr;
  auto weight = [&](size_t off) { return Operand{p + off, p16 ? p16 + off : nullptr}; };
  float* g = m_b.grad.data();
  const Operand ones{m_b.ones.data(), nullptr}, d_out{m_b.out.data(), half(m_b.out16)};
  const Operand d2{m_b.d2.data(), half(m_b.d2_16)}, d1{m_b.d1.data(), half(m_b.d1_16)};
  const int64_t nh = int64_t(B) * H;
  gemm(CUBLAS_OP_N, CUBLAS_OP_T, H, D, B, {m_b.a2.data(), half(m_b.a2_16)}, H, d_out, D, g + L.W3, H);
  gemm(CUBLAS_OP_N, CUBLAS_OP_N, D, 1, B, {d_out.f, nullptr}, D, ones, B, g + L.b3, D);
  gemm(CUBLAS_OP_N, CUBLAS_OP_N, H, B, D, weight(L.W3), H, d_out, D, m_b.d2.data(), H);
  tk::launch_silu_backward(nh, m_b.z2.data(), m_b.d2.data(), half(m_b.d2_16), m_stream);
  gemm(CUBLAS_OP_N, CUBLAS_OP_T, H, H, B, {m_b.a1.data(), half(m_b.a1_16)}, H, d2, H, g + L.W2, H);
  gemm(CUBLAS_OP_N, CUBLAS_OP_N, H, 1, B, {d2.f, nullptr}, H, ones, B, g + L.b2, H);
  gemm(CUBLAS_OP_N, CUBLAS_OP_N, H, B, H, weight(L.W2), H, d2, H, m_b.d1.data(), H);
  tk::launch_silu_backward(nh, m_b.z1.data(), m_b.d1.data(), half(m_b.d1_16), m_stream);
  gemm(CUBLAS_OP_N, CUBLAS_OP_T, K1, H, B, {m_b.u.data(), half(m_b.u16)}, K1, d1, H, g + L.W1, K1);
  gemm(CUBLAS_OP_N, CUBLAS_OP_N, H, 1, B, {d1.f, nullptr}, H, ones, B, g + L.b1, H);
}

// One whole step on m_stream, reading the step counter on the device.
void CudaTrainer::enqueue_step() {
  const int B = m_c.batch, D = m_layout.dim;
  tk::launch_train_batch(m_batch, m_b.step.data(), m_b.u.data(), half(m_b.u16), m_b.y.data(), m_b.w.data(), m_stream);
  forward();
  tk::launch_loss_grad(B, D, m_b.out.data(), m_b.params.data() + m_layout.b3, m_b.y.data(), m_b.w.data(),
                       m_c.weighting != train::LossWeighting::None, m_b.partials.data(), half(m_b.out16), m_stream);
  backward();
  tk::launch_adam_ema(m_adam, m_b.step.data(), int64_t(m_layout.size), m_b.params.data(), m_b.grad.data(),
                      m_b.adam_m.data(), m_b.adam_v.data(), m_b.ema.data(), half(m_b.p16), m_stream);
  tk::launch_finish_step(m_b.partials.data(), tk::loss_partial_count(B), m_b.losses.data(), kLossRing,
                         m_b.step.data(), m_stream);
}

// The first step runs eagerly (cuBLAS loads its kernels outside a capture); the next is captured once and every
// step after launches the graph. A capture that fails leaves the eager launches (the same work).
void CudaTrainer::launch_step() {
  if (m_graph) {
    CUDA_CHECK_THROW(cudaGraphLaunch(m_graph, m_stream));
  } else if (!m_o.graph || m_graph_failed || m_launched == 0) {
    enqueue_step();
  } else {
    cudaGraph_t graph = nullptr;
    CUDA_CHECK_THROW(cudaStreamBeginCapture(m_stream, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue_step();
    } catch (...) {
      (void)cudaStreamEndCapture(m_stream, &graph);
      if (graph) (void)cudaGraphDestroy(graph);
      (void)cudaGetLastError();
      throw;
    }
    const cudaError_t e = cudaStreamEndCapture(m_stream, &graph);
    if (e == cudaSuccess && cudaGraphInstantiate(&m_graph, graph, 0) == cudaSuccess) {
      CUDA_CHECK_THROW(cudaGraphLaunch(m_graph, m_stream));
    } else {
      (void)cudaGetLastError();
      m_graph = nullptr;
      m_graph_failed = true;
      enqueue_step();
    }
    if (graph) CUDA_CHECK_THROW(cudaGraphDestroy(graph));
  }
  ++m_launched;
}

}  // namespace

std::unique_ptr<train::Trainer> make_cuda_trainer(const train::TrainConfig& c, const train::TrainData& d,
                                                  const CudaTrainerOptions& o) {
  return std::make_unique<CudaTrainer>(c, d, o);
}

TrainPrecision parse_train_precision(const std::string& s, const std::string& arg) {
  if (s == "fp32") return TrainPrecision::F32;
  if (s == "bf16") return TrainPrecision::Bf16;
  throw InvalidInput(arg + " = '" + s + "' is not a training precision; valid: fp32, bf16");
}

}  // namespace diffscope::gpu
