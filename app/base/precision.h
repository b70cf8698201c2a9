// precision.h — the arithmetic of the network's matrix products (SEMANTICS §8), shared by every backend and
// by the kernels (kernels/kernels.h includes this alone, not the backend interface).
#pragma once
#include <string>

namespace diffscope {

// fp32 everywhere; tf32 / bf16 / fp16 (tensor-core operands, fp32 accumulation) on the GPU only (SEMANTICS §8).
enum class Precision { Fp32, Tf32, Bf16, F16 };
Precision parse_precision(const std::string& name);  // "fp32" | "tf32" | "bf16" | "fp16"; throws InvalidInput
const char* precision_name(Precision p);
// The valid names, comma-separated, for messages and help.
const char* precision_names();
// bf16 or fp16: 16-bit operands (the same kernels; fp16 keeps 3 more mantissa bits and a range of +-65504).
inline bool precision_16bit(Precision p) { return p == Precision::Bf16 || p == Precision::F16; }

}  // namespace diffscope
