// cpu_threads.cpp — see cpu_threads.h.
#include "platform/cpu_threads.h"

#include "base/arg_error.h"

#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

namespace diffscope {
namespace {
std::mutex g_limit_mutex;
std::unique_ptr<tbb::global_control> g_limit;  // set_cpu_threads' limit, or none
std::atomic<int> g_threads{0};                 // 0: the default
}  // namespace

int default_cpu_threads() { return std::max(1, tbb::info::default_concurrency()); }

int cpu_threads() {
  const int n = g_threads.load(std::memory_order_relaxed);
  return n > 0 ? n : default_cpu_threads();
}

void set_cpu_threads(int64_t n, const char* arg) {
  if (n != 0 && arg) check_range(arg, n, kCpuThreadsRange);
  if (n != 0 && !arg) check_arg_range(Arg::Threads, n, kCpuThreadsRange.lo, kCpuThreadsRange.hi);
  std::lock_guard<std::mutex> lock(g_limit_mutex);
  g_limit.reset();
  if (n > 0)
    g_limit = std::make_unique<tbb::global_control>(tbb::global_control::max_allowed_parallelism,
                                                    static_cast<size_t>(n));
  g_threads.store(static_cast<int>(n), std::memory_order_relaxed);
}

void parallel_blocks(int64_t n_blocks, const std::function<void(int64_t)>& body) {
  if (n_blocks <= 0) return;
  if (n_blocks == 1 || cpu_threads() == 1) {
    for (int64_t b = 0; b < n_blocks; ++b) body(b);
    return;
  }
  tbb::parallel_for(
      tbb::blocked_range<int64_t>(0, n_blocks, 1),
      [&](const tbb::blocked_range<int64_t>& r) {
        for (int64_t b = r.begin(); b < r.end(); ++b) body(b);
      },
      tbb::simple_partitioner());
}

}  // namespace diffscope
