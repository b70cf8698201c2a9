// launch_context.h — what a launcher needs besides a call's arguments and its plan (plan/kernel_plan.h): the
// device's capabilities, the per-device cache of launch settings, and the latency stamp buffer
// (latency_stamps.h). Owned by gpu::CudaBackend, one per device; the kernels keep no state of their own.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <mutex>
#include <utility>

#include "kernels/plan/kernel_plan.h"

namespace diffscope::kernels {

// Values computed once per (kernel, key) on one device: a kernel's shared-memory opt-in, its resident CTAs from
// the occupancy calculator. Thread-safe (two host threads may launch on one backend's device).
class LaunchCache {
 public:
  // The value for (kernel, key), computed by `init` (CUDA calls on the current device) on its first use.
  int get(const void* kernel, int key, const std::function<int()>& init) {
    std::lock_guard<std::mutex> lock(m_mutex);
    const auto k = std::make_pair(kernel, key);
    const auto it = m_values.find(k);
    if (it != m_values.end()) return it->second;
    const int v = init();
    m_values.emplace(k, v);
    return v;
  }

 private:
  std::mutex m_mutex;
  std::map<std::pair<const void*, int>, int> m_values;
};

struct LaunchContext {
  DeviceCaps caps;
  LaunchCache* cache = nullptr;  // never null for a launch
  long long* stamps = nullptr;   // the buffer the stamp builds write (latency_stamps.h), or null: off
  size_t stamp_capacity = 0;     // its elements
  // The stamp buffer when it holds `need` elements, else null (the launch runs the normal build).
  long long* stamps_for(size_t need) const { return stamps && need <= stamp_capacity ? stamps : nullptr; }
};

}  // namespace diffscope::kernels
