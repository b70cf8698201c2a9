// kernel_plan.cpp — the kernel choice of every family (kernel_plan.h). Host-only.
#include "kernels/plan/kernel_plan.h"

#include <algorithm>
#include <stdexcept>

#include "base/errors.h"

namespace diffscope::kernels {

namespace {

[[noreturn]] void bad_option(const std::string& key, const std::string& value, const std::string& valid) {
  throw InvalidInput("kernel option " + key + " = '" + value + "' is not valid; valid: " + valid);
}

bool parse_bool(const std::string& key, const std::string& v) {
  if (v == "1" || v == "on" || v == "true") return true;
  if (v == "0" || v == "off" || v == "false") return false;
  bad_option(key, v, "1 or 0 (on / off)");
}

// One row per option: key, valid values (with the default), setter.
struct OptionRow {
  const char* key;
  const char* valid;
  void (*set)(KernelOptions&, const std::string& key, const std::string& value);
};

const OptionRow kOptions[] = {
    {"wgmma", "1 or 0 (default 1: Auto may choose the wgmma denoiser)",
     [](KernelOptions& o, const std::string& k, const std::string& v) { o.wgmma = parse_bool(k, v); }},
    {"pdl", "1 or 0 (default 1: programmatic dependent launch on sm_90+)",
     [](KernelOptions& o, const std::string& k, const std::string& v) { o.pdl = parse_bool(k, v); }},
    {"cta", "n8 or m16 (default n8: the B <= 8 single-CTA kernel)",
     [](KernelOptions& o, const std::string& k, const std::string& v) {
       if (v != "n8" && v != "m16") bad_option(k, v, "n8 or m16");
       o.cta_n8 = v == "n8";
     }},
    {"cluster_size", "0, 8 or 16 (default 0: 16 where hidden allows, else 8)",
     [](KernelOptions& o, const std::string& k, const std::string& v) {
       if (v != "0" && v != "8" && v != "16") bad_option(k, v, "0, 8 or 16");
       o.cluster_size = std::stoi(v);
     }},
    {"cluster_no_push", "1 or 0 (default 0; 1 skips the DSMEM pushes: wrong results, timing only)",
     [](KernelOptions& o, const std::string& k, const std::string& v) { o.cluster_no_push = parse_bool(k, v); }},
    {"wgmma_pingpong", "1 or 0 (default 1)",
     [](KernelOptions& o, const std::string& k, const std::string& v) { o.wgmma_pingpong = parse_bool(k, v); }},
    {"wgmma_silu", "f32 or bf16x2 (default f32)",
     [](KernelOptions& o, const std::string& k, const std::string& v) {
       if (v != "f32" && v != "bf16x2") bad_option(k, v, "f32 or bf16x2");
       o.wgmma_silu_bf16x2 = v == "bf16x2";
     }},
    {"mlp3_rows_per_cta", "1, 2, 4 or 16 (default 1)",
     [](KernelOptions& o, const std::string& k, const std::string& v) {
       if (v != "1" && v != "2" && v != "4" && v != "16") bad_option(k, v, "1, 2, 4 or 16");
       o.mlp3_rows_per_cta = std::stoi(v);
     }},
    {"mlp3_fp32", "tiled or rows (default tiled)",
     [](KernelOptions& o, const std::string& k, const std::string& v) {
       if (v != "tiled" && v != "rows") bad_option(k, v, "tiled or rows");
       o.mlp3_fp32_rows = v == "rows";
     }},
    {"mlp3_tc_prefetch", "1 or 0 (default 1)",
     [](KernelOptions& o, const std::string& k, const std::string& v) { o.mlp3_tc_prefetch = parse_bool(k, v); }},
    {"mlp3_tc_tiles", "auto, 1, 1s or 2s (default auto: 1s for bf16, 2s for tf32)",
     [](KernelOptions& o, const std::string& k, const std::string& v) {
       if (v == "auto") o.mlp3_tc_tiles = Mlp3TcTiles::Auto;
       else if (v == "1") o.mlp3_tc_tiles = Mlp3TcTiles::One;
       else if (v == "1s") o.mlp3_tc_tiles = Mlp3TcTiles::OneStaged;
       else if (v == "2s") o.mlp3_tc_tiles = Mlp3TcTiles::TwoStaged;
       else bad_option(k, v, "auto, 1, 1s or 2s");
     }},
    {"plain_tables", "auto, denoiser or solver (default auto: the faster measured kernel per precision)",
     [](KernelOptions& o, const std::string& k, const std::string& v) {
       if (v == "auto") o.plain_tables = PlainTables::Auto;
       else if (v == "denoiser") o.plain_tables = PlainTables::Denoiser;
       else if (v == "solver") o.plain_tables = PlainTables::Solver;
       else bad_option(k, v, "auto, denoiser or solver");
     }},
};

std::string option_keys() {
  std::string s;
  for (const OptionRow& r : kOptions) s += (s.empty() ? "" : ", ") + std::string(r.key);
  return s;
}

// Cluster size for a hidden width: the option where it divides hidden, else 16 where it does, else 8, else 0.
int cluster_size_for(int hidden, const KernelOptions& o) {
  if ((o.cluster_size == 8 || o.cluster_size == 16) && hidden % o.cluster_size == 0) return o.cluster_size;
  return hidden % 16 == 0 ? 16 : (hidden % 8 == 0 ? 8 : 0);
}

}  // namespace

void set_kernel_option(KernelOptions& o, const std::string& key, const std::string& value) {
  for (const OptionRow& r : kOptions)
    if (key == r.key) return r.set(o, key, value);
  throw InvalidInput("kernel option '" + key + "' is not known; valid: " + option_keys());
}

void set_kernel_option(KernelOptions& o, const std::string& kv) {
  const size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InvalidInput("kernel option '" + kv + "' is not KEY=VALUE; valid keys: " + option_keys());
  set_kernel_option(o, kv.substr(0, eq), kv.substr(eq + 1));
}

void set_kernel_options(KernelOptions& o, const std::string& list) {
  for (size_t begin = 0; begin <= list.size();) {
    const size_t end = std::min(list.find(',', begin), list.size());
    if (end > begin) set_kernel_option(o, list.substr(begin, end - begin));
    begin = end + 1;
  }
}

std::vector<std::string> kernel_option_help() {
  std::vector<std::string> lines;
  for (const OptionRow& r : kOptions) lines.push_back(std::string(r.key) + ": " + r.valid);
  return lines;
}

// ---- denoiser -----------------------------------------------------------------------------------------------

const char* denoise_path_name(DenoisePath p) {
  switch (p) {
    case DenoisePath::Auto: return "auto";
    case DenoisePath::General: return "general";
    case DenoisePath::TensorCore: return "tensor-core";
    case DenoisePath::Cluster: return "cluster";
    case DenoisePath::Tiled: return "tiled-fp32";
    case DenoisePath::SingleCta: return "single-cta";
    case DenoisePath::Wgmma: return "wgmma";
  }
  return "?";
}

std::string denoise_kernel_name(const DenoisePlan& plan) {
  std::string name = denoise_path_name(plan.path);
  switch (plan.path) {
    case DenoisePath::Cluster:
      name += "-" + std::to_string(plan.cluster_size);
      if (plan.cluster_no_push) name += "-no-push";
      break;
    case DenoisePath::SingleCta: name += plan.cta_n8 ? "-n8" : "-m16"; break;
    case DenoisePath::Wgmma:
      if (plan.wgmma_pingpong) name += "-pingpong";
      if (plan.wgmma_silu_bf16x2) name += "-silu-bf16x2";
      break;
    default: break;
  }
  return name;
}

bool denoise_path_supported(DenoisePath path, const DenoiseProblem& pr, Precision p, const DeviceCaps& caps,
                            const KernelOptions& o) {
  switch (path) {
    case DenoisePath::Auto:
    case DenoisePath::General: return true;
    case DenoisePath::TensorCore: return p != Precision::Fp32 && denoise_tc_shape(pr.dim, pr.hidden);
    // Cluster computes in fp32, which is a legal (more accurate) tf32: it also serves tf32 at tiny batches.
    case DenoisePath::Cluster:
      return (p == Precision::Fp32 || p == Precision::Tf32) && caps.clusters() &&
             cluster_shape(pr.dim, pr.hidden, pr.B, cluster_size_for(pr.hidden, o));
    case DenoisePath::Tiled: return f32_tile_shape(pr.dim, pr.hidden);
    case DenoisePath::SingleCta:
      return precision_16bit(p) && denoise_tc_shape(pr.dim, pr.hidden) && pr.B >= 1 && pr.B <= kCtaRows;
    case DenoisePath::Wgmma: return precision_16bit(p) && caps.wgmma() && denoise_tc_shape(pr.dim, pr.hidden);
  }
  return false;
}

DenoisePlan plan_denoise(const DenoiseProblem& pr, Precision p, const DeviceCaps& caps, const KernelOptions& o,
                         DenoisePath force) {
  auto ok = [&](DenoisePath path) { return denoise_path_supported(path, pr, p, caps, o); };
  DenoisePath path = force;
  if (path == DenoisePath::Auto) {
    if (ok(DenoisePath::SingleCta) && pr.bf16_fragments)
      path = DenoisePath::SingleCta;
    else if (pr.B >= kWgmmaMinBatch && o.wgmma && ok(DenoisePath::Wgmma))
      path = DenoisePath::Wgmma;
    else if (p == Precision::Tf32 && ok(DenoisePath::Cluster))
      path = DenoisePath::Cluster;  // B <= 8: latency-bound; the one-warp tensor-core kernel is ~4x slower here
    else if (ok(DenoisePath::TensorCore) && pr.bf16_fragments)
      path = DenoisePath::TensorCore;
    else if (ok(DenoisePath::Cluster))
      path = DenoisePath::Cluster;
    else if (ok(DenoisePath::Tiled))
      path = DenoisePath::Tiled;
    else
      path = DenoisePath::General;
  }
  if (!ok(path))
    throw std::invalid_argument(std::string("denoiser path '") + denoise_path_name(path) + "' cannot run dim=" +
                                std::to_string(pr.dim) + " hidden=" + std::to_string(pr.hidden) + " B=" +
                                std::to_string(pr.B) + " precision=" + precision_name(p));
  DenoisePlan plan;
  plan.path = path;
  plan.pdl = o.pdl && caps.pdl();
  if (path == DenoisePath::Cluster) {
    plan.cluster_size = cluster_size_for(pr.hidden, o);
    plan.cluster_no_push = o.cluster_no_push;
  }
  if (path == DenoisePath::SingleCta) plan.cta_n8 = o.cta_n8 && pr.B <= kCta8Rows;
  if (path == DenoisePath::Wgmma) {
    plan.wgmma_pingpong = o.wgmma_pingpong;
    plan.wgmma_silu_bf16x2 = o.wgmma_silu_bf16x2 && p == Precision::Bf16;  // built for bf16 only
  }
  return plan;
}

SolverPlan plan_solver(const DenoiseProblem& pr, Precision p, const DeviceCaps& caps, const KernelOptions& o,
                       DenoisePath force) {
  const bool wgmma_ok = precision_16bit(p) && caps.wgmma() && denoise_tc_shape(pr.dim, pr.hidden);
  const bool tc_ok = p != Precision::Fp32 && denoise_tc_shape(pr.dim, pr.hidden) && pr.bf16_fragments;
  const bool tiled_ok = f32_tile_shape(pr.dim, pr.hidden);
  SolverPlan plan;
  switch (force) {
    case DenoisePath::Auto:
      plan.path = pr.B >= kWgmmaMinBatch && o.wgmma && wgmma_ok ? DenoisePath::Wgmma
                  : tc_ok                                       ? DenoisePath::TensorCore
                  : tiled_ok                                    ? DenoisePath::Tiled
                                                                : DenoisePath::General;
      break;
    case DenoisePath::Wgmma:
    case DenoisePath::TensorCore:
    case DenoisePath::Tiled:
    case DenoisePath::General:
      if ((force == DenoisePath::Wgmma && !wgmma_ok) || (force == DenoisePath::TensorCore && !tc_ok) ||
          (force == DenoisePath::Tiled && !tiled_ok))
        throw std::invalid_argument(std::string("solver path '") + denoise_path_name(force) + "' cannot run dim=" +
                                    std::to_string(pr.dim) + " hidden=" + std::to_string(pr.hidden) +
                                    " precision=" + precision_name(p));
      plan.path = force;
      break;
    default:
      // The denoiser's latency paths (Cluster, SingleCta) have no solver kernel: the fp32 ones run the call.
      plan.path = tiled_ok ? DenoisePath::Tiled : DenoisePath::General;
  }
  return plan;
}

std::string solver_kernel_name(const SolverPlan& plan) {
  switch (plan.path) {
    case DenoisePath::Wgmma: return "solver-wgmma-pingpong";
    case DenoisePath::TensorCore: return "solver-tensor-core";
    case DenoisePath::Tiled: return "solver-tiled-fp32";
    default: return "solver-general";
  }
}

bool plain_table_on_solver(const DenoiseProblem& pr, Precision p, const DeviceCaps& caps, const KernelOptions& o,
                           DenoisePath force) {
  if (!solver_shape(pr.dim, pr.hidden)) return false;
  switch (o.plain_tables) {
    case PlainTables::Denoiser: return false;
    case PlainTables::Solver: return true;
    case PlainTables::Auto: break;
  }
  if (force != DenoisePath::Auto) return false;  // a forced denoiser path runs the denoiser
  return p == Precision::Tf32 && pr.B >= kWgmmaMinBatch && pr.dim <= 16 && plan_denoise(pr, p, caps, o).path == DenoisePath::TensorCore &&
         plan_solver(pr, p, caps, o).path == DenoisePath::TensorCore;
}

// ---- 3-layer MLP ----------------------------------------------------------------------------------------------

const char* mlp3_path_name(Mlp3Path p) {
  switch (p) {
    case Mlp3Path::Auto: return "auto";
    case Mlp3Path::General: return "general";
    case Mlp3Path::TensorCore: return "tensor-core";
  }
  return "?";
}

std::string mlp3_kernel_name(const Mlp3Plan& plan, Precision p) {
  switch (plan.kernel) {
    case Mlp3Kernel::TinyFixed: return "tiny-fixed-r" + std::to_string(plan.rows_per_cta);
    case Mlp3Kernel::Tiny: return "tiny";
    case Mlp3Kernel::Small: return "small";
    case Mlp3Kernel::Tiled: return "tiled-fp32";
    case Mlp3Kernel::Rows: return "rows-fp32";
    case Mlp3Kernel::General: return "general-r" + std::to_string(plan.rows_per_cta);
    case Mlp3Kernel::TensorCore: {
      std::string name = std::string("tc-") + precision_name(p);
      if (!plan.tc_prefetch) return name + "-no-prefetch";
      return name + "-" + std::to_string(plan.tc_tiles) + (plan.tc_x_staged ? "s" : "");
    }
  }
  return "?";
}

Mlp3Plan plan_mlp3(const Mlp3Problem& pr, Precision p, const DeviceCaps& caps, const KernelOptions& o,
                   Mlp3Path force) {
  const bool tc_ok = p != Precision::Fp32 && mlp3_tc_shape(pr.d0, pr.d1, pr.d2, pr.d3) && pr.fragments;
  Mlp3Plan plan;
  plan.pdl = o.pdl && caps.pdl();
  plan.path = force == Mlp3Path::Auto ? (tc_ok ? Mlp3Path::TensorCore : Mlp3Path::General) : force;
  if (plan.path == Mlp3Path::TensorCore) {
    if (!tc_ok) throw std::invalid_argument("mlp3: tensor-core path unsupported here");
    plan.kernel = Mlp3Kernel::TensorCore;
    plan.tc_prefetch = o.mlp3_tc_prefetch;
    if (!plan.tc_prefetch) return plan;
    // x staged in shared memory needs d0 = 48 and x 16-byte aligned; the defaults by precision are the faster
    // measured (docs/PERFORMANCE.md, MLP rows): bf16 (and fp16, the same kernel) one tile per warp, tf32 two.
    const bool bf16 = precision_16bit(p);
    Mlp3TcTiles t = o.mlp3_tc_tiles;
    if (t == Mlp3TcTiles::Auto) t = bf16 ? Mlp3TcTiles::OneStaged : Mlp3TcTiles::TwoStaged;
    const bool xs_ok = pr.d0 == 48 && pr.x_aligned;
    if (t == Mlp3TcTiles::TwoStaged && xs_ok) {
      plan.tc_tiles = 2, plan.tc_x_staged = true, plan.tc_min_ctas = bf16 ? 2 : 0;
    } else if (t == Mlp3TcTiles::OneStaged && xs_ok) {
      plan.tc_tiles = 1, plan.tc_x_staged = true, plan.tc_min_ctas = bf16 ? 4 : 3;
    }
    return plan;
  }
  // fp32 kernels: at B <= 16 the register-held tiny kernel for the reference sizes (one CTA per rows_per_cta
  // rows), else one CTA with the weights in shared memory; up to 64 rows one CTA holding them all; the
  // register-blocked tiles for the reference sizes; the general kernel for everything else.
  plan.kernel = Mlp3Kernel::General;
  if (pr.B <= kMlpTinyRows && pr.aligned && mlp3_reference_shape(pr.d0, pr.d1, pr.d2, pr.d3)) {
    plan.kernel = Mlp3Kernel::TinyFixed;
    plan.rows_per_cta = o.mlp3_rows_per_cta;
    return plan;
  }
  const size_t tiny = mlp3_tiny_layout(pr.d0, pr.d1, pr.d2, pr.d3).total * sizeof(float);
  if (pr.B <= kMlpTinyRows && pr.d1 <= 256 && pr.d2 <= 256 && pr.d3 <= 256 && tiny <= kMlpMaxSmem) {
    plan.kernel = Mlp3Kernel::Tiny;
    plan.smem_bytes = tiny;
    return plan;
  }
  const size_t small = mlp3_small_smem(pr.d0, pr.d1, pr.d2, pr.d3, pr.B);
  if (pr.B <= 64 && small <= kMlpMaxSmem) {
    plan.kernel = Mlp3Kernel::Small;
    plan.smem_bytes = small;
    return plan;
  }
  if (pr.aligned && mlp3_reference_shape(pr.d0, pr.d1, pr.d2, pr.d3)) {
    plan.kernel = o.mlp3_fp32_rows ? Mlp3Kernel::Rows : Mlp3Kernel::Tiled;
    return plan;
  }
  // The general kernel: 32 rows per CTA when their activations fit in 96 KB, else 8.
  const size_t per_row = sizeof(float) * (size_t(pr.d0) + pr.d1 + pr.d2);
  plan.rows_per_cta = 32 * per_row <= 96 * 1024 ? 32 : 8;
  if (plan.rows_per_cta == 8 && 8 * per_row > 227 * 1024)
    throw std::invalid_argument("mlp3: layer sizes too large for the general kernel");
  plan.smem_bytes = plan.rows_per_cta * per_row;
  return plan;
}

}  // namespace diffscope::kernels
