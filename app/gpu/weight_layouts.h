// weight_layouts.h — host-side conversions of (out, in) fp32 weights into the other layouts the kernels read:
// the transpose (in, out) and bf16 bits. Used by DeviceEpsNet and DeviceMlp3 before upload.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "kernels/shared/frag_pack.h"

namespace diffscope::gpu {

// W (rows, cols) row-major -> (cols, rows) row-major.
inline std::vector<float> transpose(const std::vector<float>& W, int rows, int cols) {
  std::vector<float> T(W.size());
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) T[static_cast<size_t>(c) * rows + r] = W[static_cast<size_t>(r) * cols + c];
  return T;
}

// Elementwise round-to-nearest-even bf16 bits (kernels::float_to_bf16_bits).
inline std::vector<uint16_t> to_bf16(const std::vector<float>& W) {
  std::vector<uint16_t> o(W.size());
  for (size_t i = 0; i < W.size(); ++i) o[i] = kernels::float_to_bf16_bits(W[i]);
  return o;
}
// Elementwise round-to-nearest-even IEEE fp16 bits (kernels::float_to_f16_bits; beyond +-65504: Inf).
inline std::vector<uint16_t> to_f16(const std::vector<float>& W) {
  std::vector<uint16_t> o(W.size());
  for (size_t i = 0; i < W.size(); ++i) o[i] = kernels::float_to_f16_bits(W[i]);
  return o;
}

}  // namespace diffscope::gpu
