// test_kernel_plan.cpp — the kernel plan (kernels/plan/kernel_plan.h) on the CPU: for every shape x precision x
// device capability the kernel the documented rule names (kernel_plan.h's comments, docs/PERFORMANCE.md), the
// options that select the variants, and the errors for what cannot run.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "base/errors.h"
#include "kernels/plan/kernel_plan.h"

namespace diffscope::kernels {
namespace {

DeviceCaps h200() {  // NVIDIA H200: compute capability 9.0, 132 SMs, this build's sm_90a code
  DeviceCaps c;
  c.cc_major = 9, c.cc_minor = 0, c.sm_count = 132, c.sm90a_code = true;
  return c;
}
DeviceCaps h200_without_sm90a() {  // the same device, a build for sm_90 only
  DeviceCaps c = h200();
  c.sm90a_code = false;
  return c;
}
DeviceCaps ada() {  // compute capability 8.9: no clusters, no PDL, no wgmma
  DeviceCaps c;
  c.cc_major = 8, c.cc_minor = 9, c.sm_count = 128, c.sm90a_code = true;
  return c;
}
DeviceCaps blackwell() {  // compute capability 10.0: clusters and PDL, but sm_90a code does not run there
  DeviceCaps c;
  c.cc_major = 10, c.cc_minor = 0, c.sm_count = 148, c.sm90a_code = true;
  return c;
}

DenoiseProblem problem(int B, int dim, int hidden = 256, bool fragments = true) {
  DenoiseProblem p;
  p.B = B, p.dim = dim, p.hidden = hidden, p.bf16_fragments = fragments;
  return p;
}

std::string chosen(const DenoiseProblem& pr, Precision p, const DeviceCaps& caps, const KernelOptions& o = {}) {
  return denoise_kernel_name(plan_denoise(pr, p, caps, o));
}

// The rule of plan_denoise's comment, written out independently for one (problem, precision, device).
std::string expected_denoise(const DenoiseProblem& pr, Precision p, const DeviceCaps& caps) {
  const bool tc_shape = pr.hidden == 256 && pr.dim >= 1 && pr.dim <= 64;
  const bool tile_shape = pr.hidden == 256 && (pr.dim <= 4 || (pr.dim % 4 == 0 && pr.dim <= 64));
  const bool cluster = caps.cc_major >= 9 && pr.B <= 8 && (p == Precision::Fp32 || p == Precision::Tf32) &&
                       pr.hidden % 8 == 0;
  if (p == Precision::Bf16 && tc_shape && pr.B <= 16 && pr.bf16_fragments) return pr.B <= 8 ? "single-cta-n8" : "single-cta-m16";
  if (p == Precision::Bf16 && tc_shape && pr.B >= 4096 && caps.sm90a_code && caps.cc_major == 9 && caps.cc_minor == 0)
    return "wgmma-pingpong";
  if (p == Precision::Tf32 && cluster) return pr.hidden % 16 == 0 ? "cluster-16" : "cluster-8";
  if (p != Precision::Fp32 && tc_shape && pr.bf16_fragments) return "tensor-core";
  if (cluster) return pr.hidden % 16 == 0 ? "cluster-16" : "cluster-8";
  if (tile_shape) return "tiled-fp32";
  return "general";
}

TEST(KernelPlan, DenoiserFollowsTheRuleForEveryShapePrecisionAndDevice) {
  int cases = 0;
  for (const DeviceCaps& caps : {h200(), h200_without_sm90a(), ada(), blackwell()})
    for (int B : {1, 8, 9, 16, 17, 4095, 4096, 65536})
      for (int dim : {1, 2, 3, 4, 5, 8, 48, 64, 65})
        for (int hidden : {64, 256, 512})
          for (Precision p : {Precision::Fp32, Precision::Tf32, Precision::Bf16}) {
            const DenoiseProblem pr = problem(B, dim, hidden);  // every cluster layout here fits its 200 KB
            EXPECT_EQ(chosen(pr, p, caps), expected_denoise(pr, p, caps))
                << "B=" << B << " dim=" << dim << " hidden=" << hidden << " " << precision_name(p) << " cc "
                << caps.cc_major << "." << caps.cc_minor << (caps.sm90a_code ? " sm_90a" : "");
            ++cases;
          }
  EXPECT_EQ(cases, 4 * 8 * 9 * 3 * 3);
}

TEST(KernelPlan, WithoutFragmentsTheTensorCorePathsAreNotChosen) {
  for (int B : {1, 16, 100}) {
    const std::string k = chosen(problem(B, 64, 256, false), Precision::Bf16, h200());
    EXPECT_TRUE(k == "tiled-fp32" || k == "cluster-16") << k;
  }
}

TEST(KernelPlan, OptionsSelectTheVariants) {
  KernelOptions o;
  set_kernel_option(o, "wgmma", "0");
  EXPECT_EQ(chosen(problem(65536, 2), Precision::Bf16, h200(), o), "tensor-core");
  o = {};
  set_kernel_option(o, "cta", "m16");
  EXPECT_EQ(chosen(problem(8, 64), Precision::Bf16, h200(), o), "single-cta-m16");
  o = {};
  set_kernel_option(o, "cluster_size", "8");
  EXPECT_EQ(chosen(problem(8, 64), Precision::Fp32, h200(), o), "cluster-8");
  set_kernel_option(o, "cluster_no_push", "1");
  EXPECT_EQ(chosen(problem(8, 64), Precision::Fp32, h200(), o), "cluster-8-no-push");
  o = {};
  set_kernel_option(o, "wgmma_pingpong", "0");
  set_kernel_option(o, "wgmma_silu", "bf16x2");
  EXPECT_EQ(chosen(problem(65536, 2), Precision::Bf16, h200(), o), "wgmma-silu-bf16x2");
  o = {};
  EXPECT_TRUE(plan_denoise(problem(8, 64), Precision::Fp32, h200(), o).pdl);
  EXPECT_FALSE(plan_denoise(problem(8, 64), Precision::Fp32, ada(), o).pdl);
  set_kernel_option(o, "pdl", "off");
  EXPECT_FALSE(plan_denoise(problem(8, 64), Precision::Fp32, h200(), o).pdl);
}

TEST(KernelPlan, AForcedPathThatCannotRunThrows) {
  EXPECT_THROW(plan_denoise(problem(100, 64), Precision::Bf16, ada(), {}, DenoisePath::Wgmma), std::invalid_argument);
  EXPECT_THROW(plan_denoise(problem(9, 64), Precision::Fp32, h200(), {}, DenoisePath::Cluster), std::invalid_argument);
  EXPECT_THROW(plan_denoise(problem(8, 64), Precision::Fp32, h200(), {}, DenoisePath::TensorCore), std::invalid_argument);
  EXPECT_THROW(plan_denoise(problem(8, 64, 512), Precision::Bf16, h200(), {}, DenoisePath::SingleCta),
               std::invalid_argument);
  EXPECT_EQ(plan_denoise(problem(8, 64, 512), Precision::Bf16, h200(), {}, DenoisePath::General).path,
            DenoisePath::General);
}

TEST(KernelPlan, SolverRunsTiledWhereTheTileHoldsTheShape) {
  auto path = [](const DenoiseProblem& pr, Precision p = Precision::Fp32, DenoisePath force = DenoisePath::Auto) {
    return plan_solver(pr, p, h200(), {}, force).path;
  };
  EXPECT_EQ(path(problem(100, 2)), DenoisePath::Tiled);
  EXPECT_EQ(path(problem(100, 64)), DenoisePath::Tiled);
  EXPECT_EQ(path(problem(100, 5)), DenoisePath::General);  // dim 5: neither <= 4 nor a multiple of 4
  EXPECT_EQ(path(problem(100, 2, 512)), DenoisePath::General);
  EXPECT_EQ(path(problem(100, 2), Precision::Fp32, DenoisePath::General), DenoisePath::General);
  // The denoiser's latency paths have no solver kernel: the fp32 ones run the call.
  EXPECT_EQ(path(problem(8, 2), Precision::Bf16, DenoisePath::SingleCta), DenoisePath::Tiled);
  EXPECT_EQ(path(problem(8, 5), Precision::Tf32, DenoisePath::Cluster), DenoisePath::General);
}

TEST(KernelPlan, SolverRunsMmaSyncForTensorCorePrecisionsBelowTheWgmmaBatch) {
  for (Precision p : {Precision::Tf32, Precision::Bf16, Precision::F16}) {
    const SolverPlan plan = plan_solver(problem(100, 2), p, h200(), {});
    EXPECT_EQ(plan.path, DenoisePath::TensorCore) << precision_name(p);
    EXPECT_EQ(solver_kernel_name(plan), "solver-tensor-core");
    EXPECT_EQ(plan_solver(problem(1, 64), p, ada(), {}).path, DenoisePath::TensorCore);
    EXPECT_EQ(plan_solver(problem(100, 5, 512), p, h200(), {}).path, DenoisePath::General);  // no fragments at 512
    EXPECT_EQ(plan_solver(problem(100, 2, 256, false), p, h200(), {}).path, DenoisePath::Tiled);  // none built
    EXPECT_EQ(plan_solver(problem(100, 2), p, h200(), {}, DenoisePath::Tiled).path, DenoisePath::Tiled);
  }
  // tf32 keeps mma.sync at every batch (no tf32 wgmma kernel).
  EXPECT_EQ(plan_solver(problem(65536, 2), Precision::Tf32, h200(), {}).path, DenoisePath::TensorCore);
  EXPECT_THROW(plan_solver(problem(100, 2), Precision::Fp32, h200(), {}, DenoisePath::TensorCore),
               std::invalid_argument);
}

TEST(KernelPlan, SolverRunsWgmmaForLarge16BitBatchesOnSm90a) {
  const int big = kWgmmaMinBatch;
  for (Precision p : {Precision::Bf16, Precision::F16}) {
    const SolverPlan plan = plan_solver(problem(big, 2), p, h200(), {});
    EXPECT_EQ(plan.path, DenoisePath::Wgmma) << precision_name(p);
    EXPECT_EQ(solver_kernel_name(plan), "solver-wgmma-pingpong");
    EXPECT_EQ(plan_solver(problem(big, 64), p, h200(), {}).path, DenoisePath::Wgmma);
    EXPECT_EQ(plan_solver(problem(big, 5), p, h200(), {}).path, DenoisePath::Wgmma);  // any dim <= 64
    // Below the batch threshold, without sm_90a code, on other devices: mma.sync; other shapes: the fp32 kernels.
    EXPECT_EQ(plan_solver(problem(big - 1, 2), p, h200(), {}).path, DenoisePath::TensorCore);
    EXPECT_EQ(plan_solver(problem(big, 2), p, h200_without_sm90a(), {}).path, DenoisePath::TensorCore);
    EXPECT_EQ(plan_solver(problem(big, 2), p, ada(), {}).path, DenoisePath::TensorCore);
    EXPECT_EQ(plan_solver(problem(big, 2), p, blackwell(), {}).path, DenoisePath::TensorCore);
    EXPECT_EQ(plan_solver(problem(big, 2, 512), p, h200(), {}).path, DenoisePath::General);
    EXPECT_EQ(plan_solver(problem(big, 65, 256), p, h200(), {}).path, DenoisePath::General);
    // Forced: below the threshold too; the option turns Auto's choice off.
    EXPECT_EQ(plan_solver(problem(10, 2), p, h200(), {}, DenoisePath::Wgmma).path, DenoisePath::Wgmma);
    KernelOptions off;
    set_kernel_option(off, "wgmma", "0");
    EXPECT_EQ(plan_solver(problem(big, 2), p, h200(), off).path, DenoisePath::TensorCore);
  }
  EXPECT_EQ(plan_solver(problem(big, 2), Precision::Fp32, h200(), {}).path, DenoisePath::Tiled);
  for (Precision p : {Precision::Fp32, Precision::Tf32})
    EXPECT_THROW(plan_solver(problem(big, 2), p, h200(), {}, DenoisePath::Wgmma), std::invalid_argument);
  EXPECT_THROW(plan_solver(problem(big, 5), Precision::Fp32, h200(), {}, DenoisePath::Tiled), std::invalid_argument);
}

TEST(KernelPlan, PlainTablesRunTheSolverKernelsOnlyWhereMeasuredFaster) {
  // Auto: tf32 at large batches where the denoiser and the solver would both run mma.sync (hidden 256, fragments).
  EXPECT_TRUE(plain_table_on_solver(problem(65536, 2), Precision::Tf32, h200(), {}));
  EXPECT_TRUE(plain_table_on_solver(problem(kWgmmaMinBatch, 16), Precision::Tf32, ada(), {}));
  EXPECT_FALSE(plain_table_on_solver(problem(65536, 17), Precision::Tf32, h200(), {}));  // the wide instances
  EXPECT_FALSE(plain_table_on_solver(problem(kWgmmaMinBatch - 1, 2), Precision::Tf32, h200(), {}));  // not measured
  EXPECT_FALSE(plain_table_on_solver(problem(8, 2), Precision::Tf32, h200(), {}));   // the cluster kernel's batch
  EXPECT_FALSE(plain_table_on_solver(problem(100, 2, 256, false), Precision::Tf32, h200(), {}));  // no fragments
  for (Precision p : {Precision::Fp32, Precision::Bf16, Precision::F16})
    EXPECT_FALSE(plain_table_on_solver(problem(65536, 2), p, h200(), {})) << precision_name(p);
  // A forced denoiser path runs the denoiser; the option decides either way where the solver shape holds.
  EXPECT_FALSE(plain_table_on_solver(problem(65536, 2), Precision::Tf32, h200(), {}, DenoisePath::TensorCore));
  KernelOptions solver, denoiser;
  set_kernel_option(solver, "plain_tables", "solver");
  set_kernel_option(denoiser, "plain_tables=denoiser");
  EXPECT_TRUE(plain_table_on_solver(problem(65536, 2), Precision::Bf16, h200(), solver));
  EXPECT_TRUE(plain_table_on_solver(problem(4, 2), Precision::Fp32, h200(), solver));
  EXPECT_FALSE(plain_table_on_solver(problem(65536, 2), Precision::Tf32, h200(), denoiser));
  EXPECT_FALSE(plain_table_on_solver(problem(100, 64, 4096), Precision::Fp32, h200(), solver));  // no solver shape
  EXPECT_THROW(set_kernel_option(solver, "plain_tables", "fast"), InvalidInput);
}

TEST(KernelPlan, Fp16TakesBf16sPaths) {
  const DeviceCaps c = h200();
  EXPECT_EQ(plan_denoise(problem(65536, 2), Precision::F16, c, {}).path, DenoisePath::Wgmma);
  EXPECT_EQ(plan_denoise(problem(1000, 2), Precision::F16, c, {}).path, DenoisePath::TensorCore);
  EXPECT_EQ(plan_denoise(problem(8, 64), Precision::F16, c, {}).path, DenoisePath::SingleCta);
  EXPECT_TRUE(plan_denoise(problem(8, 64), Precision::F16, c, {}).cta_n8);
  EXPECT_EQ(plan_denoise(problem(16, 64), Precision::F16, c, {}).path, DenoisePath::SingleCta);
  EXPECT_EQ(plan_denoise(problem(17, 64), Precision::F16, c, {}).path, DenoisePath::TensorCore);
  EXPECT_EQ(plan_denoise(problem(100, 2, 512), Precision::F16, c, {}).path, DenoisePath::General);
}

Mlp3Problem mlp(int B, int d0 = 48, int d1 = 64, int d2 = 40, int d3 = 24, bool aligned = true) {
  Mlp3Problem p;
  p.B = B, p.d0 = d0, p.d1 = d1, p.d2 = d2, p.d3 = d3, p.aligned = aligned, p.x_aligned = aligned, p.fragments = true;
  return p;
}
std::string mlp_chosen(const Mlp3Problem& pr, Precision p, const KernelOptions& o = {}) {
  return mlp3_kernel_name(plan_mlp3(pr, p, h200(), o), p);
}

TEST(KernelPlan, MlpNamesTheExactKernel) {
  EXPECT_EQ(mlp_chosen(mlp(16), Precision::Fp32), "tiny-fixed-r1");
  EXPECT_EQ(mlp_chosen(mlp(16, 48, 64, 40, 24, false), Precision::Fp32), "tiny");
  EXPECT_EQ(mlp_chosen(mlp(64), Precision::Fp32), "small");
  EXPECT_EQ(mlp_chosen(mlp(65), Precision::Fp32), "tiled-fp32");
  EXPECT_EQ(mlp_chosen(mlp(1 << 20), Precision::Fp32), "tiled-fp32");
  EXPECT_EQ(mlp_chosen(mlp(4097, 48, 64, 40, 24, false), Precision::Fp32), "general-r32");
  EXPECT_EQ(mlp_chosen(mlp(4097, 1000, 1000, 1000, 8), Precision::Fp32), "general-r8");
  EXPECT_EQ(mlp_chosen(mlp(1 << 20), Precision::Bf16), "tc-bf16-1s");
  EXPECT_EQ(mlp_chosen(mlp(1 << 20), Precision::Tf32), "tc-tf32-2s");
  EXPECT_EQ(mlp_chosen(mlp(1 << 20, 48, 64, 40, 24, false), Precision::Tf32), "tc-tf32-1");  // x not staged
  EXPECT_EQ(mlp_chosen(mlp(1 << 20, 40, 64, 40, 24), Precision::Bf16), "tc-bf16-1");          // d0 != 48
  EXPECT_EQ(mlp_chosen(mlp(1 << 20, 100, 64, 40, 24), Precision::Bf16), "general-r32");  // no tensor-core shape
  Mlp3Problem no_frag = mlp(1 << 20);
  no_frag.fragments = false;
  EXPECT_EQ(mlp_chosen(no_frag, Precision::Bf16), "tiled-fp32");  // fp32 arithmetic without the fragments
}

TEST(KernelPlan, MlpOptionsSelectTheVariants) {
  KernelOptions o;
  set_kernel_option(o, "mlp3_rows_per_cta", "16");
  EXPECT_EQ(mlp_chosen(mlp(16), Precision::Fp32, o), "tiny-fixed-r16");
  set_kernel_option(o, "mlp3_fp32", "rows");
  EXPECT_EQ(mlp_chosen(mlp(1 << 20), Precision::Fp32, o), "rows-fp32");
  set_kernel_option(o, "mlp3_tc_prefetch", "0");
  EXPECT_EQ(mlp_chosen(mlp(1 << 20), Precision::Bf16, o), "tc-bf16-no-prefetch");
  o = {};
  set_kernel_option(o, "mlp3_tc_tiles", "2s");
  const Mlp3Plan p = plan_mlp3(mlp(1 << 20), Precision::Bf16, h200(), o);
  EXPECT_EQ(mlp3_kernel_name(p, Precision::Bf16), "tc-bf16-2s");
  EXPECT_EQ(p.tc_min_ctas, 2);
  EXPECT_THROW(plan_mlp3(mlp(16, 8, 8, 8, 8), Precision::Bf16, h200(), {}, Mlp3Path::TensorCore), std::invalid_argument);
}

TEST(KernelPlan, OptionErrorsNameTheKeyTheValueAndWhatIsValid) {
  KernelOptions o;
  try {
    set_kernel_option(o, "cta", "n9");
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("cta"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'n9'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("n8 or m16"), std::string::npos) << e.what();
  }
  try {
    set_kernel_option(o, "ctas=n8");
    FAIL() << "no error";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("'ctas'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("mlp3_tc_tiles"), std::string::npos) << e.what();  // lists the keys
  }
  EXPECT_THROW(set_kernel_option(o, "novalue"), InvalidInput);
  EXPECT_THROW(set_kernel_option(o, "=1"), InvalidInput);
  EXPECT_THROW(set_kernel_option(o, "cluster_size=12"), InvalidInput);
  EXPECT_THROW(set_kernel_option(o, "pdl=yes"), InvalidInput);
  set_kernel_options(o, "wgmma=0,,pdl=0,");  // DIFFSCOPE_KERNEL_OPTIONS' list: empty entries skipped
  EXPECT_FALSE(o.wgmma);
  EXPECT_FALSE(o.pdl);
  EXPECT_THROW(set_kernel_options(o, "wgmma=0,cta=n9"), InvalidInput);
  set_kernel_option(o, "mlp3_tc_tiles=1s");
  EXPECT_EQ(o.mlp3_tc_tiles, Mlp3TcTiles::OneStaged);
  std::set<std::string> keys;
  for (const std::string& line : kernel_option_help()) keys.insert(line.substr(0, line.find(':')));
  EXPECT_EQ(keys.size(), 12u);  // one line per option of KernelOptions
}

}  // namespace
}  // namespace diffscope::kernels
