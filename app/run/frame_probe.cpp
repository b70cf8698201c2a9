// frame_probe.cpp — per-frame phase timing and GPU-wait counting (frame_probe.h).
#include "run/frame_probe.h"

#include <atomic>
#include <sstream>

namespace diffscope {
namespace {
std::atomic<long> g_readbacks{0}, g_syncs{0}, g_camera_fits{0};
}  // namespace

const char* frame_phase_name(FramePhase p) {
  static const char* const kNames[kFramePhases] = {"apply",        "enqueue",    "camera",  "field",    "imgui_build",
                                                   "scene_draw",   "imgui_render", "present", "autosave", "other"};
  const int i = static_cast<int>(p);
  return i >= 0 && i < kFramePhases ? kNames[i] : "?";
}

std::string phase_ms_json(const std::array<double, kFramePhases>& ms, double scale) {
  std::ostringstream s;
  s.precision(4);
  s << '{';
  for (int p = 0; p < kFramePhases; ++p)
    s << (p ? ", " : "") << '"' << frame_phase_name(FramePhase(p)) << "\": " << ms[p] * scale;
  s << '}';
  return s.str();
}

void count_readback() { g_readbacks.fetch_add(1, std::memory_order_relaxed); }
void count_sync() { g_syncs.fetch_add(1, std::memory_order_relaxed); }
void count_camera_fit() { g_camera_fits.fetch_add(1, std::memory_order_relaxed); }

FrameCounts frame_counts_total() {
  return {g_readbacks.load(std::memory_order_relaxed), g_syncs.load(std::memory_order_relaxed),
          g_camera_fits.load(std::memory_order_relaxed)};
}

void FrameProbe::begin_frame() {
  const clock::time_point now = clock::now();
  const FrameCounts totals = frame_counts_total();
  if (m_open) {
    m_cur.phase_ms[static_cast<int>(FramePhase::other)] +=
        std::chrono::duration<double, std::milli>(now - m_mark).count();
    m_cur.frame_ms = std::chrono::duration<double, std::milli>(now - m_begin).count();
    m_cur.counts = totals - m_counts_at_begin;
    m_last = m_cur;
    ++m_frames;
  }
  m_cur = FrameReport{};
  m_begin = m_mark = now;
  m_counts_at_begin = totals;
  m_open = true;
}

void FrameProbe::mark(FramePhase p) {
  if (!m_open) return;
  const clock::time_point now = clock::now();
  m_cur.phase_ms[static_cast<int>(p)] += std::chrono::duration<double, std::milli>(now - m_mark).count();
  m_mark = now;
}

}  // namespace diffscope
