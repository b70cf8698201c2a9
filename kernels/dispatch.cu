// dispatch.cu — picks the denoiser kernel for a call (kernels.h): tensor cores for tf32/bf16 where the shape has
// a fast path (warpgroup wgmma for large bf16 batches on sm_90a), the thread-block-cluster kernel (fp32 arithmetic) for small fp32 and tf32 batches, the general
// kernel for everything else.
#include <cstdlib>
#include <stdexcept>

#include "kernels/kernels.h"

namespace diffscope::kernels {

void launch_denoise_general(const DenoiseArgs& a, cudaStream_t s);
void launch_denoise_tc(const DenoiseArgs& a, Precision p, cudaStream_t s);
bool denoise_tc_supported(int dim, int hidden);
void launch_denoise_cluster(const DenoiseArgs& a, cudaStream_t s);
bool denoise_cluster_supported(int dim, int hidden, int B);
void launch_denoise_f32(const DenoiseArgs& a, cudaStream_t s);
bool denoise_f32_supported(int dim, int hidden);
void launch_denoise_cta(const DenoiseArgs& a, cudaStream_t s);
bool denoise_cta_supported(int dim, int hidden, int B);
void launch_denoise_wgmma(const DenoiseArgs& a, cudaStream_t s);
bool denoise_wgmma_supported(int dim, int hidden);

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

bool denoise_path_supported(DenoisePath path, int dim, int hidden, int B, Precision p) {
  switch (path) {
    case DenoisePath::Auto:
    case DenoisePath::General: return true;
    case DenoisePath::TensorCore: return p != Precision::Fp32 && denoise_tc_supported(dim, hidden);
    // Cluster computes in fp32, which is a legal (more accurate) tf32: it also serves tf32 at tiny batches.
    case DenoisePath::Cluster:
      return (p == Precision::Fp32 || p == Precision::Tf32) && denoise_cluster_supported(dim, hidden, B);
    case DenoisePath::Tiled: return denoise_f32_supported(dim, hidden);
    case DenoisePath::SingleCta: return p == Precision::Bf16 && denoise_cta_supported(dim, hidden, B);
    case DenoisePath::Wgmma: return p == Precision::Bf16 && denoise_wgmma_supported(dim, hidden);
  }
  return false;
}

// Auto's use of the wgmma kernel; DIFFSCOPE_WGMMA=0 turns it off (read on each call, like DIFFSCOPE_PDL: the
// benchmark's before/after rows in one process, and a switch should the path misbehave on some driver).
bool wgmma_auto_enabled() {
  const char* e = std::getenv("DIFFSCOPE_WGMMA");
  return !(e && e[0] == '0');
}

DenoisePath launch_denoise(const DenoiseArgs& a, Precision p, cudaStream_t s, DenoisePath force) {
  if (a.B <= 0 || a.k_end <= a.k_begin) return DenoisePath::General;
  DenoisePath path = force;
  const int dim = a.net.dim, H = a.net.hidden;
  if (path == DenoisePath::Auto) {
    if (denoise_path_supported(DenoisePath::SingleCta, dim, H, a.B, p) && a.net.f2_bf16)
      path = DenoisePath::SingleCta;
    else if (a.B >= kWgmmaMinBatch && denoise_path_supported(DenoisePath::Wgmma, dim, H, a.B, p) &&
             wgmma_auto_enabled())
      path = DenoisePath::Wgmma;
    else if (p == Precision::Tf32 && denoise_path_supported(DenoisePath::Cluster, dim, H, a.B, p))
      path = DenoisePath::Cluster;  // B <= 8: latency-bound; the one-warp tensor-core kernel is ~4x slower here
    else if (denoise_path_supported(DenoisePath::TensorCore, dim, H, a.B, p) && a.net.f2_bf16)
      path = DenoisePath::TensorCore;
    else if (denoise_path_supported(DenoisePath::Cluster, dim, H, a.B, p))
      path = DenoisePath::Cluster;
    else if (denoise_path_supported(DenoisePath::Tiled, dim, H, a.B, p))
      path = DenoisePath::Tiled;
    else
      path = DenoisePath::General;
  }
  if (!denoise_path_supported(path, dim, H, a.B, p))
    throw std::invalid_argument(std::string("denoiser path '") + denoise_path_name(path) + "' cannot run dim=" +
                                std::to_string(dim) + " hidden=" + std::to_string(H) + " B=" + std::to_string(a.B) +
                                " precision=" + precision_name(p));
  switch (path) {
    case DenoisePath::TensorCore: launch_denoise_tc(a, p, s); break;
    case DenoisePath::Cluster: launch_denoise_cluster(a, s); break;
    case DenoisePath::Tiled: launch_denoise_f32(a, s); break;
    case DenoisePath::SingleCta: launch_denoise_cta(a, s); break;
    case DenoisePath::Wgmma: launch_denoise_wgmma(a, s); break;
    default: launch_denoise_general(a, s); break;
  }
  return path;
}

}  // namespace diffscope::kernels
