// denoise_cta8.h — the single-CTA bf16 / fp16 denoiser for B <= 8 (denoise_cta8.cu): the weights as the mma A operand,
// the batch as N = 8. Reached through launch_denoise_cta (denoise_cta.cu) when the plan says cta_n8 (B <= 8).
#pragma once
#include <cuda_runtime.h>

#include "kernels/kernels.h"

namespace diffscope::kernels {

// Runs a.k_begin .. a.k_end on one CTA (hidden 256, 1 <= dim <= 64, 1 <= B <= 8) with p's 16-bit operands (bf16 or
// fp16); needs that precision's fragments of a.net.
void launch_denoise_cta8(const DenoiseArgs& a, Precision p, const DenoisePlan& plan, const LaunchContext& ctx,
                         cudaStream_t s);

}  // namespace diffscope::kernels
