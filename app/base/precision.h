// precision.h — the arithmetic of the network's matrix products (SEMANTICS §8), shared by every backend and
// by the kernels (kernels/kernels.h includes this alone, not the backend interface).
#pragma once
#include <string>

namespace diffscope {

// fp32 everywhere; tf32/bf16 (tensor cores, fp32 accumulation) on the GPU only (SEMANTICS §8).
enum class Precision { Fp32, Tf32, Bf16 };
Precision parse_precision(const std::string& name);  // "fp32" | "tf32" | "bf16"; throws InvalidInput
const char* precision_name(Precision p);

}  // namespace diffscope
