// frame_probe.h — where one UI frame's time goes and how often it waited on the GPU (docs/PERFORMANCE.md
// "The live loop"). Plain C++: the waits are counted where they happen (render/, gpu/, ui/) through the
// count_* functions; FrameProbe turns the running totals into per-frame figures and splits the frame's wall
// time into phases that add up to it.
#pragma once
#include <array>
#include <chrono>
#include <string>

namespace diffscope {

// The phases of one frame, in the order the frame runs them. `other` is what no mark claimed (event polling,
// input, the exporter's tick), so the phases always add up to the frame time.
enum class FramePhase { apply, enqueue, camera, field, imgui_build, scene_draw, imgui_render, present, autosave, other };
inline constexpr int kFramePhases = 10;
// Short names used by the headless `print` line, `measure` and the kernel panel: "apply", "enqueue", ...
const char* frame_phase_name(FramePhase p);

// {"apply": ms, "enqueue": ms, ...}: phase times (times `scale`, e.g. 1/frames for a mean) as one JSON object.
std::string phase_ms_json(const std::array<double, kFramePhases>& ms, double scale = 1.0);

// Waits on the GPU that the frame loop must not do in steady state (unless the user asked: export, Fit view).
struct FrameCounts {
  long readbacks = 0;    // GPU -> host copies: glGetBufferSubData, glReadPixels, device-to-host cudaMemcpy + wait
  long syncs = 0;        // explicit waits: cudaStreamSynchronize, cudaEventSynchronize, glFinish outside present
  long camera_fits = 0;  // automatic or requested camera fits (O(data) CPU work)
  FrameCounts operator-(const FrameCounts& o) const {
    return {readbacks - o.readbacks, syncs - o.syncs, camera_fits - o.camera_fits};
  }
  FrameCounts& operator+=(const FrameCounts& o) {
    readbacks += o.readbacks, syncs += o.syncs, camera_fits += o.camera_fits;
    return *this;
  }
};

// Process-wide running totals (atomic; any thread).
void count_readback();
void count_sync();
void count_camera_fit();
FrameCounts frame_counts_total();

// One finished frame: its wall time (ms, from one begin_frame to the next), the split by phase (ms, sums to
// frame_ms) and the waits counted in it.
struct FrameReport {
  double frame_ms = 0;
  std::array<double, kFramePhases> phase_ms{};
  FrameCounts counts;
};

class FrameProbe {
 public:
  // Closes the running frame (if any) into last() and starts the next one. Call first thing in a loop iteration.
  void begin_frame();
  // The time since the previous mark (or begin_frame) belongs to phase p.
  void mark(FramePhase p);
  const FrameReport& last() const { return m_last; }
  int frames() const { return m_frames; }  // frames closed so far

 private:
  using clock = std::chrono::steady_clock;
  bool m_open = false;
  clock::time_point m_begin, m_mark;
  FrameReport m_cur, m_last;
  FrameCounts m_counts_at_begin;
  int m_frames = 0;
};

}  // namespace diffscope
