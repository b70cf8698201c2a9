// mlp3_tiled.h — the register-blocked fp32 fused 3-layer MLP for large batches (mlp3_tiled.cu), called by
// launch_mlp3 (mlp3.cu); not part of the public kernel interface (kernels.h).
#pragma once
#include <cuda_runtime.h>

#include "kernels/kernels.h"

namespace diffscope::kernels {

// y (B, d3) = relu(relu(x W1^T) W2^T) W3^T in fp32 (SEMANTICS §5), B >= 1, x and y 16-byte aligned (row-major,
// (B, d0) and (B, d3)), the reference sizes 48-64-40-24 (mlp3_reference_shape). Persistent CTAs of 128 threads,
// 128 rows per tile, two CTAs per SM; with PDL when `pdl`; returns the launch's error.
cudaError_t launch_mlp3_tiled(const DeviceMlp3& w, const float* x, int B, float* y, bool pdl, const LaunchContext& ctx,
                              cudaStream_t s);

}  // namespace diffscope::kernels
