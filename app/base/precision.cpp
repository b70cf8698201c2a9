// precision.cpp — names of the precision modes (SEMANTICS §8) and their parsing.
#include "base/precision.h"

#include "base/arg_error.h"

namespace diffscope {

Precision parse_precision(const std::string& name) {
  if (name == "fp32") return Precision::Fp32;
  if (name == "tf32") return Precision::Tf32;
  if (name == "bf16") return Precision::Bf16;
  if (name == "fp16") return Precision::F16;
  throw ArgumentError(Arg::Precision, name, precision_names(),
                      arg_ref(Arg::Precision) + " = '" + name + "' is not a precision; valid: " + precision_names());
}

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::Fp32: return "fp32";
    case Precision::Tf32: return "tf32";
    case Precision::Bf16: return "bf16";
    case Precision::F16: return "fp16";
  }
  return "unknown";
}

const char* precision_names() { return "fp32, tf32, bf16, fp16"; }

}  // namespace diffscope
