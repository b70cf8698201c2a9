// bench_stamps.h — `diffscope bench --diag` stamp rows: where the time goes inside the latency kernels,
// from their clock64() stamp builds (kernels/shared/latency_stamps.h).
#pragma once
#include <vector>

#include "gpu/bench/bench_row.h"
#include "gpu/cuda_backend.h"
#include "model/model.h"

namespace diffscope::bench {

// Runs a CUDA graph of 20 calls of each stamped kernel (single-CTA bf16 denoiser: the m16 and the n8 kernel; cluster
// fp32 denoiser: B=8, S=16 on m; tiny fp32 MLP B=16 on w, 16 / 4 / 1 rows per CTA) and appends one row per stage: median_us = the stage's
// mean time per step (per call for the MLP) over steps, warps and CTAs of the graph's last call; p10_us / p90_us =
// the mean over steps of the fastest / slowest warp; the note gives cycles and the measured SM clock.
void bench_stamps(CudaBackend& be, const DiffusionModel& m, const Mlp3Weights& w, std::vector<Row>& rows);

}  // namespace diffscope::bench
