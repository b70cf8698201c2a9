// bench_command.cpp — `diffscope bench [--json] [--quick]`: the benchmark of PERFORMANCE.md's workloads. CPU rows
// (the CPU reference backend, small shapes only) in every build; GPU rows (fused vs unfused, every precision) in
// CUDA builds with a device — without one the command says clearly that the GPU rows need CUDA.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "base/errors.h"
#include "base/words.h"
#include "cli/cli.h"
#include "cli/cli_util.h"
#include "cli/text_table.h"
#include "diffusion/cpu_reference.h"
#include "diffusion/sampling.h"
#include "diffusion/step_table.h"
#include "gpu/bench/bench_row.h"
#include "kernels/plan/kernel_plan.h"
#include "model/model.h"
#include "model/random_weights.h"
#include "model/schedule.h"
#include "platform/model_paths.h"
#include "run/backend.h"
#if defined(DIFFSCOPE_HAVE_CUDA)
#include "gpu/cuda_backend.h"
#endif

namespace diffscope::cli {

namespace {

using bench::Row;



template <class F>
void time_host(Row& r, int reps, F run) {
  run();
  std::vector<double> us;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  auto q = [&](double f) { return us[std::min(us.size() - 1, static_cast<size_t>(f * (us.size() - 1) + 0.5))]; };
  r.median_us = q(0.5), r.p10_us = q(0.1), r.p90_us = q(0.9), r.reps = reps;
}

// FLOPs of one network evaluation of B rows (SEMANTICS §2).
double eval_flops(int B, int dim, int H) { return 2.0 * B * (double(dim + 1) * H + double(H) * H + double(H) * dim); }

// CPU reference backend rows: the small shapes only; each one only when `--only` selects its workload.
void cpu_denoise_row(const bench::Options& o, DenoiserBackend& cpu, std::vector<Row>& rows) {
  const int reps = o.quick ? 3 : 20;
  const DiffusionModel m = o.model64.empty() ? make_random_model(64, 256, 64) : load_diffusion_model(o.model64);
  const int B = 8, S = 16, dim = m.net.dim, H = m.net.hidden;
  Row r;
  r.workload = "denoise B=8 dim=" + std::to_string(dim) + " H=" + std::to_string(H) + " S=16";
  if (!bench::selected(o, r.workload)) return;
  std::mt19937 rng(1);
  std::normal_distribution<float> nd;
  std::vector<float> x0(size_t(B) * dim), x;
  for (float& v : x0) v = nd(rng);
  std::vector<int64_t> t(B, 999);
  r.impl = "cpu";
  r.precision = "fp32";
  r.path = "Eigen";
  time_host(r, reps, [&] {
    x = x0;
    cpu.denoise(m, x.data(), t.data(), B, S, nullptr, Precision::Fp32);
  });
  std::vector<double> xd(x0.begin(), x0.end());
  cpu_ref::denoise<double>(m, xd.data(), t.data(), B, S, nullptr);
  r.rel_err = relative_frobenius_error(x, xd);
  r.unit = "TFLOP/s";
  r.achieved = eval_flops(B, dim, H) * S / (r.median_us * 1e-6) / 1e12;
  r.note = "host clock, includes nothing but the call";
  rows.push_back(r);
}

void cpu_mlp3_row(const bench::Options& o, DenoiserBackend& cpu, std::vector<Row>& rows) {
  const int reps = o.quick ? 30 : 200;
  const Mlp3Weights w = o.mlp3.empty() ? make_random_mlp3(48, 64, 40, 24, 3) : load_mlp3(o.mlp3);
  const int B = 16;
  Row r;
  r.workload = "mlp3 B=16 " + std::to_string(w.d0) + "-" + std::to_string(w.d1) + "-" + std::to_string(w.d2) + "-" +
               std::to_string(w.d3);
  if (!bench::selected(o, r.workload)) return;
  std::mt19937 rng(2);
  std::normal_distribution<float> nd;
  std::vector<float> x(size_t(B) * w.d0), y(size_t(B) * w.d3);
  for (float& v : x) v = nd(rng);
  r.impl = "cpu";
  r.precision = "fp32";
  r.path = "Eigen";
  time_host(r, reps, [&] { cpu.mlp3(w, x.data(), B, y.data(), Precision::Fp32); });
  std::vector<double> xd(x.begin(), x.end()), yd(y.size());
  cpu_ref::mlp3<double>(w, xd.data(), B, yd.data());
  r.rel_err = relative_frobenius_error(y, yd);
  rows.push_back(r);
}

// The solver rows on the CPU backend: one run of N steps from pure noise, timed on the host clock and
// divided by its network evaluations; error against the float64 run of the same table and noise.
void cpu_solver_rows(const bench::Options& o, DenoiserBackend& cpu, std::vector<Row>& rows, Progress& progress,
                     int64_t done) {
  const DiffusionModel m = o.model2.empty() ? make_random_model(2, 256, 2) : load_diffusion_model(o.model2);
  const int B = 256, N = 20, dim = m.net.dim, H = m.net.hidden, reps = o.quick ? 3 : 10;
  const uint64_t seed = 1;
  const size_t first = rows.size();
  for (const std::string& name : bench::bench_solvers()) {
    progress.update(done++);
    Row r;
    r.workload = bench::solver_workload(name, B, dim, H, N);
    if (!bench::selected(o, r.workload)) continue;
    const StepTable tab = build_step_table(m.schedule, parse_sampler(name), m.schedule.T - 1, N);
    const int64_t evals = tab.evaluations(0, N);
    std::vector<float> x0(size_t(B) * dim), x, prev(x0.size());
    fill_start_noise(m, seed, B, x0.data());
    r.impl = "cpu";
    r.precision = "fp32";
    r.path = "Eigen";
    time_host(r, reps, [&] {
      x = x0;
      cpu.run_steps(m, tab, 0, N, x.data(), B, seed, nullptr, Precision::Fp32, 0, prev.data());
    });
    r.median_us /= evals, r.p10_us /= evals, r.p90_us /= evals;
    std::vector<double> xd(x0.begin(), x0.end()), prevd(xd.size());
    cpu_ref::run_steps<double>(m, tab, 0, N, xd.data(), B, seed, nullptr, 0, prevd.data());
    r.rel_err = relative_frobenius_error(x, xd);
    r.unit = "TFLOP/s";
    r.achieved = eval_flops(B, dim, H) / (r.median_us * 1e-6) / 1e12;
    r.note = "per network evaluation: host clock, one run of " + count_noun(N, "step") + " / its " + count_noun(evals, "evaluation");
    rows.push_back(r);
  }
  bench::note_ratio_to_ddim(rows, first);
}

// With progress (and the time left) on stderr over the CPU workloads (cli_util.h Progress).
std::vector<Row> cpu_rows(const bench::Options& o) {
  std::vector<Row> rows;
  auto cpu = make_cpu_backend();
  Progress progress("bench CPU workloads", 2 + static_cast<int64_t>(bench::bench_solvers().size()));
  cpu_denoise_row(o, *cpu, rows);
  progress.update(1);
  cpu_mlp3_row(o, *cpu, rows);
  cpu_solver_rows(o, *cpu, rows, progress, 2);
  return rows;
}

// A number, or "—" where the column does not apply to the row.
std::string cell(bool applies, const char* fmt, double v) {
  if (!applies) return "\u2014";
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// p90/p10 above this marks a figure as noisy (an idle H200 gives < 1.05; a loaded 2-core machine gives 2-700).
constexpr double kNoisySpread = 1.5;

void print_rows(const std::vector<Row>& rows, bool json, const std::string& gpu_note) {
  // Not applicable (CPU rows have no ceiling or floor; some rows no throughput or error): null / "—".
  auto opt = [](bool applies, double v) { return applies ? nlohmann::json(v) : nlohmann::json(nullptr); };
  if (json) {
    nlohmann::json j = nlohmann::json::array();
    for (const Row& r : rows)
      j.push_back({{"workload", r.workload}, {"impl", r.impl}, {"precision", r.precision}, {"path", r.path},
                   {"median_us", r.median_us}, {"p10_us", r.p10_us}, {"p90_us", r.p90_us}, {"reps", r.reps},
                   {"achieved", opt(!r.unit.empty(), r.achieved)}, {"unit", r.unit},
                   {"ceiling", opt(r.ceiling > 0, r.ceiling)}, {"floor_us", opt(r.floor_us > 0, r.floor_us)},
                   {"rel_err", opt(r.rel_err >= 0, r.rel_err)}, {"note", r.note}});
    nlohmann::json out = {{"rows", j}};
    if (!gpu_note.empty()) out["gpu_note"] = gpu_note;
    // replace: a note may quote a file name that is not UTF-8 (SEMANTICS §6 "Paths in JSON")
    std::printf("%s\n", out.dump(1, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
    return;
  }
  // Columns as wide as their widest cell: GPU rows have longer workloads and paths than the CPU's.
  TextTable t{{"workload", "impl", "prec", "path", "median_us", "p10_us", "p90_us", "achieved", "%ceil", "floor_us",
               "rel_err", "unit"},
              {false, false, false, false, true, true, true, true, true, true, true, false},
              {}};
  for (const Row& r : rows) {
    const bool has_ceiling = r.ceiling > 0 && !r.unit.empty();
    t.rows.push_back({r.workload, r.impl, r.precision, r.path, cell(true, "%.1f", r.median_us),
                      cell(true, "%.1f", r.p10_us), cell(true, "%.1f", r.p90_us), cell(!r.unit.empty(), "%.3g", r.achieved),
                      cell(has_ceiling, "%.1f%%", has_ceiling ? 100.0 * r.achieved / r.ceiling : 0),
                      cell(r.floor_us > 0, "%.1f", r.floor_us), cell(r.rel_err >= 0, "%.2e", r.rel_err), r.unit});
  }
  std::printf("%s", t.str().c_str());
  if (!gpu_note.empty()) std::printf("note: %s\n", gpu_note.c_str());
  // A spread this wide means the machine was busy while timing (other processes, clocks): say so.
  double worst = 0;
  for (const Row& r : rows)
    if (r.p10_us > 0) worst = std::max(worst, r.p90_us / r.p10_us);
  if (worst > kNoisySpread)
    std::printf("note: noisy timings (p90/p10 up to %.1f): the machine was busy; medians may be off, run again on "
                "an idle machine\n", worst);
}

// Parses every --kernel-option into `o` before any work (exit 2 naming it); true when one is "help", after
// printing the keys, their values and defaults.
bool parse_kernel_options(const std::vector<std::string>& kvs, kernels::KernelOptions& o) {
  for (const std::string& kv : kvs) {
    if (kv == "help") {
      for (const std::string& line : kernels::kernel_option_help()) std::printf("%s\n", line.c_str());
      return true;
    }
    try {
      kernels::set_kernel_option(o, kv);
    } catch (const InvalidInput& e) {
      throw InvalidInput(std::string("--kernel-option: ") + e.what());
    }
  }
  return false;
}

}  // namespace

void register_bench(CLI::App& app, Action& action) {
  auto o = std::make_shared<bench::Options>();
  CLI::App* sub = app.add_subcommand("bench", "benchmark the fused kernels against the unfused baseline and the CPU");
  sub->add_flag("--json", o->json, "print the rows as JSON");
  sub->add_flag("--quick", o->quick, "fewer repetitions");
  sub->add_option("--model64", o->model64, "dim-64 model (.safetensors); default seeded random weights");
  sub->add_option("--model2", o->model2, "dim-2 model (.safetensors); default seeded random weights");
  sub->add_option("--mlp3", o->mlp3, "3-layer MLP weights (.safetensors); default seeded random 48-64-40-24");
  sub->add_option("--only", o->only, "run only workloads whose name contains this text");
  sub->add_flag("--diag", o->diag, "latency diagnostics of the reference case (GPU)");
  auto kernel_options = std::make_shared<std::vector<std::string>>();
  sub->add_option("--kernel-option", *kernel_options,
                  "KEY=VALUE: a kernel variant for the GPU rows (repeatable; --kernel-option help lists them)");
  sub->callback([o, kernel_options, &action] {
    action = [o, kernel_options] {
      if (parse_kernel_options(*kernel_options, o->kernel_options)) return;
      if (!o->model64.empty()) o->model64 = resolve_model_arg("--model64", o->model64);
      if (!o->model2.empty()) o->model2 = resolve_model_arg("--model2", o->model2);
      std::vector<Row> rows;
      std::string gpu_note;
      bool have_device = false;
#if defined(DIFFSCOPE_HAVE_CUDA)
      have_device = cuda_device_available();
#endif
      if (o->diag && !have_device)
        throw ResourceUnavailable("--diag: the latency diagnostics of the reference case run on a CUDA device, and "
                                  "this machine (or build) has none; `diffscope bench` alone gives the CPU rows");
#if defined(DIFFSCOPE_HAVE_CUDA)
      if (have_device) {
        Progress progress("bench GPU workloads", 1);
        o->progress = [&](int done, int total) {
          progress.set_total(total);
          progress.update(done);
        };
        rows = bench::run_gpu_benchmarks(*o);
        o->progress = nullptr;
      } else {
        gpu_note = "GPU rows skipped: no CUDA device";
      }
#else
      gpu_note = "GPU rows need a CUDA build (this build has no CUDA): CPU rows only";
#endif
      std::vector<Row> cpu = cpu_rows(*o);
      rows.insert(rows.end(), cpu.begin(), cpu.end());
      if (rows.empty() && !o->only.empty()) {
        std::vector<std::string> names;
        for (const std::string& n : o->seen_workloads)
          if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
        std::string list;
        for (const std::string& n : names) list += (list.empty() ? "" : "; ") + n;
        throw InvalidInput("--only = " + o->only + " matches no workload; valid names contain: " + list);
      }
      print_rows(rows, o->json, gpu_note);
    };
  });
}

}  // namespace diffscope::cli
