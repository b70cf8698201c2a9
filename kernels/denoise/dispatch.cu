// dispatch.cu — runs the denoiser kernel a plan names (plan_denoise, plan/kernel_plan.h); it chooses nothing.
#include <stdexcept>

#include "kernels/kernels.h"

namespace diffscope::kernels {

void launch_denoise_general(const DenoiseArgs& a, cudaStream_t s);
void launch_denoise_tc(const DenoiseArgs& a, Precision p, cudaStream_t s);
void launch_denoise_cluster(const DenoiseArgs& a, const DenoisePlan& plan, const LaunchContext& ctx, cudaStream_t s);
void launch_denoise_f32(const DenoiseArgs& a, cudaStream_t s);
void launch_denoise_cta(const DenoiseArgs& a, Precision p, const DenoisePlan& plan, const LaunchContext& ctx,
                        cudaStream_t s);
void launch_denoise_wgmma(const DenoiseArgs& a, Precision p, const DenoisePlan& plan, const LaunchContext& ctx,
                          cudaStream_t s);

void launch_denoise(const DenoiseArgs& a, Precision p, const DenoisePlan& plan, const LaunchContext& ctx, cudaStream_t s) {
  if (a.B <= 0 || a.k_end <= a.k_begin) return;
  switch (plan.path) {
    case DenoisePath::TensorCore: launch_denoise_tc(a, p, s); break;
    case DenoisePath::Cluster: launch_denoise_cluster(a, plan, ctx, s); break;
    case DenoisePath::Tiled: launch_denoise_f32(a, s); break;
    case DenoisePath::SingleCta: launch_denoise_cta(a, p, plan, ctx, s); break;
    case DenoisePath::Wgmma: launch_denoise_wgmma(a, p, plan, ctx, s); break;
    case DenoisePath::General: launch_denoise_general(a, s); break;
    case DenoisePath::Auto: throw std::invalid_argument("launch_denoise: the plan names no kernel (Auto)");
  }
}

}  // namespace diffscope::kernels
