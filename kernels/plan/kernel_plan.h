// kernel_plan.h — which kernel runs a call: the one place where the denoiser, solver and 3-layer MLP families
// choose among their kernels. Host-only C++ (no CUDA headers), so every choice is unit-tested on the CPU for every
// shape x precision x device (tests/kernels/test_kernel_plan.cpp). Inputs are explicit: the problem's shape, the
// precision, the device's capabilities (DeviceCaps, captured once per device by gpu::CudaBackend) and the kernel
// options (KernelOptions, parsed once at a front end: `diffscope bench --kernel-option KEY=VALUE`, tests); nothing
// here reads the environment or keeps state. The launchers (kernels/*.cu) execute a plan; they choose nothing.
#pragma once
#include <string>
#include <vector>

#include "base/precision.h"
#include "kernels/plan/kernel_shapes.h"

namespace diffscope::kernels {

// What the plan needs to know of a device: its compute capability, its SM count, and whether this build holds
// sm_90a code (the wgmma kernels run only on compute capability 9.0 and only when compiled for sm_90a).
struct DeviceCaps {
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  bool sm90a_code = false;
  bool clusters() const { return cc_major >= 9; }  // thread-block clusters and distributed shared memory
  bool pdl() const { return cc_major >= 9; }       // programmatic dependent launch (griddepcontrol)
  bool wgmma() const { return sm90a_code && cc_major == 9 && cc_minor == 0; }
};

// Kernel options: variants kept for benchmarking and testing, off the default path. Each has a key of
// set_kernel_option; the defaults are the fastest measured on the H200 (docs/PERFORMANCE.md).
enum class Mlp3TcTiles { Auto, One, OneStaged, TwoStaged };  // "auto", "1", "1s", "2s"
enum class PlainTables { Auto, Denoiser, Solver };            // "auto", "denoiser", "solver"
struct KernelOptions {
  bool wgmma = true;               // "wgmma": Auto may choose the wgmma denoiser for large bf16 batches
  bool pdl = true;                 // "pdl": programmatic dependent launch on sm_90+
  bool cta_n8 = true;              // "cta": the bf16 single-CTA kernel at B <= 8, "n8" (weights as A) or "m16"
  int cluster_size = 0;            // "cluster_size": 0 (16 where hidden allows, else 8), 8 or 16
  bool cluster_no_push = false;    // "cluster_no_push": the cluster kernel skips its DSMEM pushes (WRONG
                                   // results; the timing of the exchange alone)
  bool wgmma_pingpong = true;      // "wgmma_pingpong": the two warpgroups alternate their tensor-core turns
  bool wgmma_silu_bf16x2 = false;  // "wgmma_silu": "f32" or "bf16x2" (packed SiLU, a special-function measure)
  int mlp3_rows_per_cta = 1;       // "mlp3_rows_per_cta": the tiny fp32 MLP kernel's rows per CTA, 1, 2, 4, 16
  bool mlp3_fp32_rows = false;     // "mlp3_fp32": "tiled" (register-blocked) or "rows" (one thread per row)
  bool mlp3_tc_prefetch = true;    // "mlp3_tc_prefetch": persistent tensor-core MLP CTAs prefetching the next x
  Mlp3TcTiles mlp3_tc_tiles = Mlp3TcTiles::Auto;  // "mlp3_tc_tiles"
  PlainTables plain_tables = PlainTables::Auto;   // "plain_tables": which kernels run the integer-t tables
};

// Sets one option from its text; throws InvalidInput naming the key, the value and the valid values.
void set_kernel_option(KernelOptions& o, const std::string& key, const std::string& value);
// "KEY=VALUE" (as `bench --kernel-option` takes it); throws InvalidInput.
void set_kernel_option(KernelOptions& o, const std::string& key_equals_value);
// A comma-separated list of KEY=VALUE (DIFFSCOPE_KERNEL_OPTIONS); empty entries are skipped; throws InvalidInput.
void set_kernel_options(KernelOptions& o, const std::string& comma_separated);
// One line per key: "KEY: valid values (default)".
std::vector<std::string> kernel_option_help();

// ---- The fused denoiser ------------------------------------------------------------------------------------
// The kernel families of a fused denoiser call. Auto picks with plan_denoise.
enum class DenoisePath { Auto, General, TensorCore, Cluster, Tiled, SingleCta, Wgmma };
const char* denoise_path_name(DenoisePath p);

// Smallest batch for which Auto picks the Wgmma path (64-row tiles; below this the mma.sync path's 32-row warp
// tiles spread the work over more SMs).
constexpr int kWgmmaMinBatch = 4096;

// A fused denoiser call: B rows of the network of SEMANTICS §2 (dim, hidden); bf16_fragments: the backend built
// the tensor-core weight fragments (it does for every shape denoise_tc_shape accepts).
struct DenoiseProblem {
  int B = 0, dim = 0, hidden = 0;
  bool bf16_fragments = false;
};

// The kernel that runs a call, with its variant.
struct DenoisePlan {
  DenoisePath path = DenoisePath::General;
  bool pdl = false;               // launched with programmatic dependent launch
  int cluster_size = 0;           // Cluster: CTAs per cluster (8 or 16)
  bool cluster_no_push = false;   // Cluster: timing-only variant
  bool cta_n8 = false;            // SingleCta: the B <= 8 weights-as-A kernel
  bool wgmma_pingpong = false;    // Wgmma
  bool wgmma_silu_bf16x2 = false; // Wgmma
};
// The exact kernel: "general", "tensor-core", "cluster-16", "tiled-fp32", "single-cta-n8", "wgmma-pingpong", ...
std::string denoise_kernel_name(const DenoisePlan& plan);

// Whether `path` can run the problem at precision p on the device (Auto and General: always).
bool denoise_path_supported(DenoisePath path, const DenoiseProblem& pr, Precision p, const DeviceCaps& caps,
                            const KernelOptions& o);

// The plan for a call. With force = Auto the fastest path that runs it: SingleCta (bf16 / fp16, B <= 16, hidden 256,
// dim <= 64), Wgmma (bf16 / fp16, B >= kWgmmaMinBatch, hidden 256, dim <= 64, caps.wgmma()), Cluster for tf32 at B <= 8
// (latency-bound: fp32 arithmetic, a legal and more accurate tf32), TensorCore (tf32 / bf16, hidden 256,
// dim <= 64), Cluster (fp32, B <= 8), Tiled (fp32, hidden 256), General (any). Shapes without a fast path run
// the general kernel (fp32 arithmetic whatever the precision). Throws std::invalid_argument if `force` names a
// path that cannot run the problem.
DenoisePlan plan_denoise(const DenoiseProblem& pr, Precision p, const DeviceCaps& caps, const KernelOptions& o,
                         DenoisePath force = DenoisePath::Auto);

// The solver kernels (dpmpp-2m, dpmpp-2m-sde, heun, euler-ancestral, karras and custom-sigma tables, family tables;
// SEMANTICS §3), with force = Auto: Wgmma for bf16 / fp16 at B >= kWgmmaMinBatch where the device and shape have it
// (hidden 256, dim <= 64, caps.wgmma(), o.wgmma); else TensorCore (mma.sync) for tf32 / bf16 / fp16 where the shape
// has the fragments (hidden 256, dim <= 64); else fp32 arithmetic whatever the precision: Tiled where the shape has
// it, else General. A forced Wgmma, TensorCore, Tiled or General runs that kernel (std::invalid_argument when it
// cannot run the problem); the denoiser's latency paths (Cluster, SingleCta) run the fp32 kernels.
struct SolverPlan {
  DenoisePath path = DenoisePath::General;  // Wgmma (always the ping-pong schedule), TensorCore, Tiled or General
};
SolverPlan plan_solver(const DenoiseProblem& pr, Precision p, const DeviceCaps& caps, const KernelOptions& o,
                       DenoisePath force = DenoisePath::Auto);
// The exact kernel: "solver-wgmma-pingpong", "solver-tensor-core", "solver-tiled-fp32", "solver-general".
std::string solver_kernel_name(const SolverPlan& plan);

// A plain table (integer t, coefficients A, C, S: ddim, ddpm, ... on a linear / leading / trailing spacing, one start
// for every row) runs on the fused denoiser or, equally exactly (SEMANTICS §3), on the solver kernels. Whether it
// runs on the solver kernels (plan_solver then picks which): o.plain_tables = Solver where solver_shape holds,
// Denoiser never; Auto (with force = Auto) where the measured solver kernel is faster than the denoiser's
// (docs/PERFORMANCE.md "Plain tables"): tf32 at B >= kWgmmaMinBatch and dim <= 16 where both would run their
// mma.sync kernels (measured at B = 65,536, dim 2; other shapes keep the denoiser). Per-row starts (denoise's t_start per row) run the
// denoiser: the caller asks only for a table with one start.
bool plain_table_on_solver(const DenoiseProblem& pr, Precision p, const DeviceCaps& caps, const KernelOptions& o,
                           DenoisePath force = DenoisePath::Auto);

// ---- The fused 3-layer MLP ----------------------------------------------------------------------------------
enum class Mlp3Path { Auto, General, TensorCore };
const char* mlp3_path_name(Mlp3Path p);

// The fp32 kernels and the tensor-core kernel of the MLP (SEMANTICS §5).
enum class Mlp3Kernel { TinyFixed, Tiny, Small, Tiled, Rows, General, TensorCore };

// One MLP call: B rows through d0 -> d1 -> d2 -> d3; aligned: x, y and the fp32 weights 16-byte aligned;
// x_aligned: x alone; fragments: the tensor-core fragments of the call's precision exist.
struct Mlp3Problem {
  int B = 0, d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  bool aligned = false, x_aligned = false, fragments = false;
};

struct Mlp3Plan {
  Mlp3Path path = Mlp3Path::General;
  Mlp3Kernel kernel = Mlp3Kernel::General;
  bool pdl = false;
  int rows_per_cta = 0;     // TinyFixed: 1, 2, 4, 16; General: 32 or 8
  size_t smem_bytes = 0;    // dynamic shared memory (Tiny, Small, General)
  bool tc_prefetch = false; // TensorCore: persistent CTAs, each warp's next x loaded during its tile
  int tc_tiles = 1;         // TensorCore: 16-row tiles per warp (1 or 2)
  bool tc_x_staged = false; // TensorCore: x staged in shared memory
  int tc_min_ctas = 0;      // TensorCore: CTAs per SM the register count is capped for (0: not capped)
};
// The exact kernel: "tiny-fixed-r1", "tiny", "small", "tiled-fp32", "rows-fp32", "general-r32", "tc-bf16-2s", ...
std::string mlp3_kernel_name(const Mlp3Plan& plan, Precision p);

// The plan for an MLP call (force = Auto: the tensor-core kernel for tf32 / bf16 where the sizes pad to
// 48-64-48-32 and the fragments exist, else the fp32 kernels by batch and sizes). Throws std::invalid_argument
// for a forced TensorCore path that cannot run, or layer sizes too large for the general kernel.
Mlp3Plan plan_mlp3(const Mlp3Problem& pr, Precision p, const DeviceCaps& caps, const KernelOptions& o,
                   Mlp3Path force = Mlp3Path::Auto);

}  // namespace diffscope::kernels
