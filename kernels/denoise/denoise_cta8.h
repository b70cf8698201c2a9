// denoise_cta8.h — the single-CTA bf16 denoiser for B <= 8 (denoise_cta8.cu): the weights as the mma A operand,
// the batch as N = 8. Reached through launch_denoise_cta (denoise_cta.cu) when the plan says cta_n8 (B <= 8).
#pragma once
#include <cuda_runtime.h>

#include "kernels/kernels.h"

namespace diffscope::kernels {

// Runs a.k_begin .. a.k_end on one CTA (hidden 256, 1 <= dim <= 64, 1 <= B <= 8); needs the bf16 fragments of
// a.net (f1_bf16, f2_bf16, f3_bf16).
void launch_denoise_cta8(const DenoiseArgs& a, const DenoisePlan& plan, const LaunchContext& ctx, cudaStream_t s);

}  // namespace diffscope::kernels
