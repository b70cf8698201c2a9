// interop_compute.cpp — CUDA + interop and CUDA + staging compute paths for the GUI.
#include "gpu/interop_compute.h"

#include <epoxy/gl.h>  // before cuda_gl_interop.h (ARCHITECTURE.md)
#include <cuda_gl_interop.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <optional>

#include "diffusion/field_eval.h"
#include "gpu/cuda_backend.h"
#include "gpu/cuda_check.h"
#include "gpu/gpu_buffer.h"
#include "gpu/gpu_timer.h"
#include "gpu/graphics_mapping.h"
#include "gpu/pinned_buffer.h"
#include "platform/fault_injection.h"
#include "run/frame_probe.h"

namespace diffscope::gpu {
namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class CudaComputePath final : public ComputePath {
 public:
  CudaComputePath(TrajectoryBufferTarget* target, bool interop, std::string why)
      : m_target(target), m_interop(interop), m_why(std::move(why)) {
    cudaDeviceProp prop{};
    int dev = 0;
    CUDA_CHECK_THROW(cudaGetDevice(&dev));
    CUDA_CHECK_THROW(cudaGetDeviceProperties(&prop, dev));
    m_device = prop.name;
  }
  // The mapping, the registration and the pinned memory free themselves (in that order: members).
  ~CudaComputePath() override = default;

  std::string name() const override { return m_interop ? "cuda + interop" : "cuda + host staging"; }
  std::string why() const override { return m_why; }
  std::string device() const override { return m_device; }
  bool is_gpu() const override { return true; }

  void begin(const DiffusionModel& model, const StepTable& table, const TrajectoryLayout& layout, const float* x0,
             uint64_t seed, Precision precision) override {
    start(model, table, layout, seed, precision);
    CUDA_CHECK_THROW(cudaMemcpyAsync(m_d_x.data(), x0, layout.frame_bytes(), cudaMemcpyHostToDevice, m_be.stream()));
    write_frame0();
  }

  bool begin_from_noise(const DiffusionModel& model, const StepTable& table, const TrajectoryLayout& layout,
                        uint64_t seed, Precision precision) override {
    start(model, table, layout, seed, precision);
    m_be.start_noise_device(m_d_x.data(), layout.B, seed, m_be.stream());
    write_frame0();
    return true;
  }

  void start(const DiffusionModel& model, const StepTable& table, const TrajectoryLayout& layout, uint64_t seed,
             Precision precision) {
    unmap();
    m_be.set_model(model);
    m_be.set_step_table(table);
    m_model = &model;
    m_layout = layout;
    m_seed = seed;
    m_precision = precision;
    const size_t bytes = layout.total_bytes();
    if (m_target->size_bytes() != bytes || (m_interop && m_reg.gl_buffer() != m_target->gl_buffer())) {
      unregister();  // never reallocate a registered buffer
      if (m_target->size_bytes() != bytes) m_target->resize(bytes);
      if (m_interop) try_register();
    }
    m_d_x.resize(layout.frame_floats());
  }

  // Frame 0 (the start state in m_d_x) into slot 0 of the trajectory buffer.
  void write_frame0() {
    const size_t fb = m_layout.frame_bytes();
    if (m_interop) {
      map();
      CUDA_CHECK_THROW(cudaMemcpyAsync(m_mapping->data(), m_d_x.data(), fb, cudaMemcpyDeviceToDevice, m_be.stream()));
    } else {
      m_pinned.reserve(fb);
      CUDA_CHECK_THROW(cudaMemcpyAsync(m_pinned.data(), m_d_x.data(), fb, cudaMemcpyDeviceToHost, m_be.stream()));
      CUDA_CHECK_THROW(cudaStreamSynchronize(m_be.stream()));
      count_readback();  // staging's own round trip (PERFORMANCE.md: the interop path has none)
      const double t0 = now_ms();
      m_target->upload(0, fb, m_pinned.data());
      m_timings.upload_ms += now_ms() - t0;
    }
  }

  void advance(int k_begin, int k_end) override {
    if (!m_model || k_end <= k_begin) return;
    cudaStream_t s = m_be.stream();
    const size_t ff = m_layout.frame_floats(), fb = m_layout.frame_bytes();
    if (m_timer < 0) start_timer(s);
    if (m_interop) {
      map();
      float* base = static_cast<float*>(m_mapping->data());
      if (m_layout.stride == 1) {  // frames land in place: slot j = frame j
        m_be.run_steps_device(k_begin, k_end, m_d_x.data(), m_layout.B, m_seed, base + size_t(k_begin + 1) * ff,
                              m_precision, s);
      } else {
        m_d_frames.reserve(size_t(k_end - k_begin) * ff);  // grows only
        m_be.run_steps_device(k_begin, k_end, m_d_x.data(), m_layout.B, m_seed, m_d_frames.data(), m_precision, s);
        for (int j = k_begin + 1; j <= k_end; ++j) {
          const int slot = m_layout.slot_of_frame(j);
          if (slot >= 0)
            CUDA_CHECK_THROW(cudaMemcpyAsync(base + size_t(slot) * ff, m_d_frames.data() + size_t(j - k_begin - 1) * ff,
                                             fb, cudaMemcpyDeviceToDevice, s));
        }
      }
    } else {
      // Staging: device frames -> pinned host -> glBufferSubData.
      m_d_frames.reserve(size_t(k_end - k_begin) * ff);  // grows only
      m_be.run_steps_device(k_begin, k_end, m_d_x.data(), m_layout.B, m_seed, m_d_frames.data(), m_precision, s);
      int kept = 0;
      for (int j = k_begin + 1; j <= k_end; ++j) kept += m_layout.slot_of_frame(j) >= 0;
      if (kept == 0) return;
      m_pinned.reserve(size_t(kept) * fb);
      int i = 0;
      for (int j = k_begin + 1; j <= k_end; ++j)
        if (m_layout.slot_of_frame(j) >= 0)
          CUDA_CHECK_THROW(cudaMemcpyAsync(m_pinned.data() + size_t(i++) * fb,
                                           m_d_frames.data() + size_t(j - k_begin - 1) * ff, fb, cudaMemcpyDeviceToHost,
                                           s));
      CUDA_CHECK_THROW(cudaStreamSynchronize(s));
      count_readback();
      const double t0 = now_ms();
      i = 0;
      for (int j = k_begin + 1; j <= k_end; ++j) {
        const int slot = m_layout.slot_of_frame(j);
        if (slot >= 0) m_target->upload(size_t(slot) * fb, fb, m_pinned.data() + size_t(i++) * fb);
      }
      m_timings.upload_ms += now_ms() - t0;
    }
    m_timings.steps += k_end - k_begin;
  }

  void field(const float* pts, int n, int t, bool x0, float* out) override {
    if (!m_model || n <= 0) return;
    // An analytic mixture has no network for the eps-field kernel: its exact eps on the host, as the CPU path
    // and `sample --png` draw it (DenoiserBackend::eps_field), so the GUI and the CLI draw the same arrows.
    if (m_model->mixture) return eval_field_cpu(*m_model, pts, n, t, x0, out);
    const size_t bytes = size_t(n) * m_model->net.dim * sizeof(float);
    m_d_pts.reserve(size_t(n) * m_model->net.dim);
    m_d_out.reserve(size_t(n) * m_model->net.dim);
    cudaStream_t s = m_be.stream();
    CUDA_CHECK_THROW(cudaMemcpyAsync(m_d_pts.data(), pts, bytes, cudaMemcpyHostToDevice, s));
    m_be.eps_field_device(m_d_pts.data(), n, t, x0, m_d_out.data(), s);
    CUDA_CHECK_THROW(cudaMemcpyAsync(out, m_d_out.data(), bytes, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));
    count_readback();
  }

  // Unmaps (GL draws next). The launches' timing is read later, when its stop event has completed: no wait here.
  void before_draw() override {
    if (m_timer >= 0) {
      m_timers[m_timer].stop(m_be.stream());
      m_timer_pending[m_timer] = true;
      m_timer = -1;
    }
    unmap();
  }

  // steps_ms: the launches whose timing finished since the last call (a frame or more after they ran).
  ComputeTimings take_timings() override {
    collect_timers();
    ComputeTimings t = m_timings;
    m_timings = {};
    return t;
  }

  double device_memory_used_mb() const override {
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) {
      cudaGetLastError();
      return -1;
    }
    return double(total_b - free_b) / (1 << 20);
  }

 private:
  void try_register() {
    // DIFFSCOPE_FAULT=interop_register: the registration fails as it does when the GL context cannot share
    // with CUDA (the run must go on through host staging: tests/RELIABILITY.md).
    cudaGraphicsResource_t res = nullptr;
    cudaError_t e = fault_injected("interop_register")
                        ? cudaErrorUnknown
                        : cudaGraphicsGLRegisterBuffer(&res, m_target->gl_buffer(), cudaGraphicsRegisterFlagsNone);
    if (e != cudaSuccess) {
      cudaGetLastError();
      m_interop = false;
      m_why = std::string("interop registration failed (") + cudaGetErrorString(e) + "): host staging";
      return;
    }
    m_reg = GraphicsRegistration(res, m_target->gl_buffer());
  }
  void unregister() { m_reg.reset(); }
  // One cudaGraphicsMapResources for every shared resource (here: the trajectory) on the compute stream.
  void map() {
    if (m_mapping || !m_reg) return;
    const double t0 = now_ms();
    m_mapping.emplace(m_reg, m_be.stream());
    m_timings.map_ms += now_ms() - t0;
  }
  void unmap() {
    if (!m_mapping) return;
    const double t0 = now_ms();
    try {
      m_mapping->unmap();
    } catch (...) {
      m_mapping.reset();
      throw;
    }
    m_mapping.reset();
    m_timings.unmap_ms += now_ms() - t0;
  }
  // Starts timing this frame's launches on a free timer of the ring (none free: this frame goes untimed).
  void start_timer(cudaStream_t s) {
    collect_timers();
    for (int k = 0; k < kTimers; ++k)
      if (!m_timer_pending[k]) {
        m_timer = k;
        m_timers[k].start(s);
        return;
      }
  }
  // Adds every finished timing to m_timings.steps_ms (cudaEventQuery: never waits).
  void collect_timers() {
    for (int k = 0; k < kTimers; ++k)
      if (m_timer_pending[k] && m_timers[k].ready()) {
        m_timings.steps_ms += m_timers[k].elapsed_ms();
        m_timer_pending[k] = false;
      }
  }
  TrajectoryBufferTarget* m_target;
  bool m_interop;
  std::string m_why, m_device;
  CudaBackend m_be;
  const DiffusionModel* m_model = nullptr;
  TrajectoryLayout m_layout;
  uint64_t m_seed = 0;
  Precision m_precision = Precision::Fp32;
  GpuBuffer<float> m_d_x, m_d_frames, m_d_pts, m_d_out;
  GraphicsRegistration m_reg;              // the trajectory buffer's registration (interop only)
  std::optional<GraphicsMapping> m_mapping;  // mapped from the first launch of a frame to before_draw
  PinnedBuffer m_pinned;                     // staging only: device frames on their way to glBufferSubData
  static constexpr int kTimers = 4;
  GpuTimer m_timers[kTimers];
  bool m_timer_pending[kTimers] = {};
  int m_timer = -1;  // the timer of the launches enqueued since the last before_draw, -1 when none
  ComputeTimings m_timings;
};

}  // namespace

bool interop_cuda_device_available() { return cuda_device_available(); }

std::unique_ptr<ComputePath> make_cuda_compute_path(TrajectoryBufferTarget* target, std::string* why) {
  if (!cuda_device_available()) {
    if (why) *why = "no CUDA device";
    return nullptr;
  }
  // Is the current GL context on a CUDA device? Mesa's GL (llvmpipe under Xvfb) lists none.
  unsigned int count = 0;
  int devices[8];
  cudaError_t e = cudaGLGetDevices(&count, devices, 8, cudaGLDeviceListAll);
  bool interop = e == cudaSuccess && count > 0;
  std::string w;
  if (interop) {
    w = "GL buffer registered with CUDA, mapped once per frame";
  } else {
    cudaGetLastError();
    const char* vendor = reinterpret_cast<const char*>(glGetString(GL_VENDOR));
    w = std::string("the GL context (") + (vendor ? vendor : "?") +
        ") is not on a CUDA device (cudaGLGetDevices: " + (e == cudaSuccess ? "none" : cudaGetErrorString(e)) +
        "): host staging";
  }
  auto p = std::make_unique<CudaComputePath>(target, interop, w);
  if (why) *why = w;
  return p;
}

}  // namespace diffscope::gpu
