// test_cpu_threads.cpp — the CPU backend's threads (platform/cpu_threads.h): every block runs once, one block runs on
// the calling thread, errors propagate, `--threads` is range-checked, and every CPU computation gives the same
// bits whatever the thread count (blocks and reductions do not depend on it).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "base/arg_error.h"
#include "base/errors.h"
#include "diffusion/field_eval.h"
#include "diffusion/metrics.h"
#include "diffusion/step_table.h"
#include "model/random_weights.h"
#include "model_fixtures.h"
#include "platform/cpu_threads.h"
#include "platform/cpu_threads.h"
#include "run/backend.h"
#include "run/backend.h"
#include "run/finite_checks.h"
#include "run/finite_checks.h"

namespace diffscope {
namespace {

// Restores the default thread count when a test ends.
struct ThreadsGuard {
  ~ThreadsGuard() { set_cpu_threads(0); }
};

TEST(CpuThreads, EveryBlockRunsOnce) {
  ThreadsGuard guard;
  for (int threads : {1, 2, 4}) {
    set_cpu_threads(threads);
    std::vector<std::atomic<int>> hits(1000);
    parallel_blocks(1000, [&](int64_t b) { hits[static_cast<size_t>(b)]++; });
    for (size_t b = 0; b < hits.size(); ++b) ASSERT_EQ(hits[b].load(), 1) << "block " << b << ", threads " << threads;
  }
  int calls = 0;
  parallel_blocks(0, [&](int64_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(CpuThreads, SmallWorkRunsOnTheCallingThread) {
  ThreadsGuard guard;
  const std::thread::id me = std::this_thread::get_id();
  std::thread::id ran;
  parallel_blocks(1, [&](int64_t) { ran = std::this_thread::get_id(); });
  EXPECT_EQ(ran, me);
  set_cpu_threads(1);
  std::vector<std::thread::id> ids(64);
  parallel_blocks(64, [&](int64_t b) { ids[static_cast<size_t>(b)] = std::this_thread::get_id(); });
  for (const auto& id : ids) EXPECT_EQ(id, me);
}

TEST(CpuThreads, ExceptionsPropagate) {
  ThreadsGuard guard;
  set_cpu_threads(2);
  EXPECT_THROW(parallel_blocks(50, [](int64_t b) {
                 if (b == 37) throw InvalidInput("block 37");
               }),
               InvalidInput);
}

TEST(CpuThreads, RangeOfTheThreadCount) {
  ThreadsGuard guard;
  set_cpu_threads(3);
  EXPECT_EQ(cpu_threads(), 3);
  set_cpu_threads(0);
  EXPECT_EQ(cpu_threads(), default_cpu_threads());
  EXPECT_GE(default_cpu_threads(), 1);
  for (int64_t bad : {int64_t{-1}, int64_t{1025}, std::numeric_limits<int64_t>::max()}) {
    try {
      set_cpu_threads(bad);
      FAIL() << bad;
    } catch (const ArgumentError& e) {  // named by id: the CLI's --threads, Python's threads
      EXPECT_EQ(e.arg, Arg::Threads);
      EXPECT_EQ(std::string(e.what()), "threads = " + std::to_string(bad) + " is out of range; valid: [1, 1024]");
    }
  }
  EXPECT_EQ(cpu_threads(), default_cpu_threads());  // a refused value changes nothing
}

// Everything the CPU computes, for one thread count.
struct CpuResults {
  std::vector<float> denoised, denoise_traj, sampled, frames, prev, mlp3, field;
  double energy = 0, nearest = 0;
  int64_t first_bad = 0;
};

CpuResults compute_all(int threads) {
  set_cpu_threads(threads);
  CpuResults r;
  const DiffusionModel m = test::random_model(2, 64, 21);
  auto be = make_cpu_backend();
  const int B = 1500, dim = 2;  // six blocks of 256 rows, the last one short
  std::vector<int64_t> t_start(B);
  for (int b = 0; b < B; ++b) t_start[b] = (b * 53) % 1000;
  r.denoised = test::random_values(B * dim, 5);
  r.denoise_traj.resize(size_t(31) * B * dim);
  be->denoise(m, r.denoised.data(), t_start.data(), B, 30, r.denoise_traj.data(), Precision::Fp32);

  for (Sampler s : {Sampler::Ddpm, Sampler::Dpmpp2m}) {  // fresh noise each step; a carried prediction
    const StepTable tab = build_step_table(m.schedule, s, 700, 25, 0.0);
    std::vector<float> x(size_t(B) * dim), frames(size_t(25) * B * dim), prev(size_t(B) * dim);
    be->start_noise(m, 77, B, x.data());
    be->run_steps(m, tab, 0, 25, x.data(), B, 77, frames.data(), Precision::Fp32, 0, prev.data());
    r.sampled.insert(r.sampled.end(), x.begin(), x.end());
    r.frames.insert(r.frames.end(), frames.begin(), frames.end());
    r.prev.insert(r.prev.end(), prev.begin(), prev.end());
  }

  const Mlp3Weights w = make_random_mlp3(48, 64, 40, 24, 3);
  const std::vector<float> xw = test::random_values(size_t(1100) * 48, 6);
  r.mlp3.resize(size_t(1100) * 24);
  be->mlp3(w, xw.data(), 1100, r.mlp3.data(), Precision::Fp32);

  const std::vector<float> pts = test::random_values(size_t(3000) * 2, 7);
  r.field.resize(pts.size());
  eval_field_cpu(m, pts.data(), 3000, 400, true, r.field.data());

  const std::vector<float> a = test::random_values(size_t(2000) * 2, 8), b = test::random_values(size_t(1500) * 2, 9);
  r.energy = energy_distance(a.data(), 2000, b.data(), 1500, 2);
  r.nearest = mean_nearest_distance(a.data(), 2000, b.data(), 1500, 2);

  std::vector<float> big(size_t(3) << 20, 1.f);  // 12 blocks of the finite scan; NaNs in blocks 9 and 4
  big[size_t(9) << 18] = std::nanf("");
  big[(size_t(4) << 18) + 5] = std::numeric_limits<float>::infinity();
  r.first_bad = first_nonfinite(big.data(), static_cast<int64_t>(big.size()));
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(CpuThreads, ResultsDoNotDependOnTheThreadCount) {
  ThreadsGuard guard;
  const CpuResults one = compute_all(1);
  EXPECT_EQ(one.first_bad, (int64_t{4} << 18) + 5);
  for (int threads : {2, 3, 7}) {
    const CpuResults r = compute_all(threads);
    EXPECT_TRUE(same_bits(r.denoised, one.denoised)) << threads;
    EXPECT_TRUE(same_bits(r.denoise_traj, one.denoise_traj)) << threads;
    EXPECT_TRUE(same_bits(r.sampled, one.sampled)) << threads;
    EXPECT_TRUE(same_bits(r.frames, one.frames)) << threads;
    EXPECT_TRUE(same_bits(r.prev, one.prev)) << threads;
    EXPECT_TRUE(same_bits(r.mlp3, one.mlp3)) << threads;
    EXPECT_TRUE(same_bits(r.field, one.field)) << threads;
    EXPECT_EQ(std::memcmp(&r.energy, &one.energy, sizeof(double)), 0) << threads;
    EXPECT_EQ(std::memcmp(&r.nearest, &one.nearest, sizeof(double)), 0) << threads;
    EXPECT_EQ(r.first_bad, one.first_bad) << threads;
  }
}

}  // namespace
}  // namespace diffscope
