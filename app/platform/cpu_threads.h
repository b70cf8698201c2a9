// cpu_threads.h — the threads of the CPU backend (docs/decisions/cpu-threading.md): oneTBB's work-stealing
// pool, limited by set_cpu_threads (`--threads`, Python's diffscope.set_threads). Work is cut into blocks whose
// boundaries do not depend on the thread count, each block is computed by one thread, and reductions combine
// the blocks' results in block order, so every result is the same bit for bit whatever the thread count.
// A forked child (Python's multiprocessing, DataLoader workers) computes on its calling thread: the parent's
// pool threads do not exist there, and oneTBB does not wait for them (measured in the decision record).
#pragma once
#include <cstdint>
#include <functional>

#include "base/ranges.h"

namespace diffscope {

// The valid thread counts of `--threads` / threads= (0 is not among them: leave the option out for the default).
constexpr IntRange kCpuThreadsRange{1, 1024};

// The threads the CPU backend uses when none was set: the cores this process may run on (its affinity mask).
int default_cpu_threads();
// The current limit: set_cpu_threads' value, else default_cpu_threads().
int cpu_threads();
// Limits the CPU backend to n threads (the calling thread included) for the whole process; 0 restores the
// default. Throws InvalidInput naming `arg` (nullptr: ArgumentError with Arg::Threads, base/arg_error.h) when n
// is outside kCpuThreadsRange (and not 0).
void set_cpu_threads(int64_t n, const char* arg = nullptr);

// Calls body(b) once for every block b in [0, n_blocks): on the calling thread alone when n_blocks == 1 or the
// limit is 1 (small work never waits for another thread), else on up to cpu_threads() threads, the calling
// one among them, one block at a time (simple partitioning: a preempted thread holds back one block only).
// Returns when every block is done; the first exception a block throws is rethrown.
void parallel_blocks(int64_t n_blocks, const std::function<void(int64_t)>& body);

}  // namespace diffscope
