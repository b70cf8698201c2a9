// safetensors.h — a validating reader for .safetensors files (SEMANTICS §6): header, tensor table, dtype
// conversion to float32/float64.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace diffscope {

// One entry of the header's tensor table, already validated against the data section.
struct TensorInfo {
  std::string name;
  std::string dtype;            // as written in the file: "F32", "BF16", "I64", ...
  size_t dtype_bits = 0;        // bits per element (F4: 4, F6_*: 6, ...); 0 for a dtype this reader does not know
  std::vector<int64_t> shape;   // row-major; empty for a scalar
  uint64_t numel = 0;           // product(shape) (1 for a scalar)
  uint64_t begin = 0, end = 0;  // byte range inside the data section (after the header)
};

// Largest header accepted, in bytes (the reference implementation's own limit is 100 MB).
constexpr uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// A parsed .safetensors file held in memory (a single read of the whole file).
// Layout: 8-byte little-endian header length N, N bytes of JSON (may end in spaces), then the data section.
// Every check of SEMANTICS §6 runs in the constructor: 2 <= N <= file size - 8 (and <= 100 MB), the header
// is a JSON object of tensors {dtype, shape, data_offsets} plus an optional "__metadata__" of strings,
// begin <= end <= data size, end - begin == ceil(product(shape) * dtype bits / 8) (computed without overflow)
// for every dtype of safetensors' list, and no two tensors overlap. A dtype outside the list is kept (its
// offsets checked, its size not): only a tensor that is read must have a dtype read_float knows. Any failure throws InvalidInput naming the file (the
// `label`), the tensor and the numbers.
class SafetensorsFile {
 public:
  // Reads and validates `path`; throws InvalidInput if it cannot be read or is malformed.
  static SafetensorsFile open(const std::string& path);
  // Validates an in-memory image of a file; `label` names it in messages (tests and fuzzing).
  static SafetensorsFile from_bytes(std::string bytes, const std::string& label);

  const std::string& label() const { return m_label; }
  const std::map<std::string, std::string>& metadata() const { return m_metadata; }
  // Tensors sorted by name.
  const std::vector<TensorInfo>& tensors() const { return m_tensors; }
  // nullptr if there is no tensor called `name`.
  const TensorInfo* find(const std::string& name) const;

  // Values of tensor `name` converted to float32 (dtypes F64, F32, F16, BF16). Throws InvalidInput if the
  // tensor is missing ("missing tensor") or of another dtype ("has dtype I64; valid: F64, F32, F16, BF16").
  std::vector<float> read_float(const std::string& name) const;
  // Values converted to float64. F64 and F32 only: the schedule must not come from half precision
  // (SEMANTICS §1: F16/BF16 rounds abar to 1 at small t, which makes coef_eps infinite).
  std::vector<double> read_double_schedule(const std::string& name) const;

 private:
  SafetensorsFile() = default;
  void parse();
  const TensorInfo& require(const std::string& name) const;
  const unsigned char* tensor_bytes(const TensorInfo& t) const;

  std::string m_label;
  std::string m_bytes;          // the whole file
  uint64_t m_data_start = 0;    // offset of the data section in m_bytes
  std::map<std::string, std::string> m_metadata;
  std::vector<TensorInfo> m_tensors;
};

// Bits per element of a safetensors dtype name (safetensors' Dtype::bitsize), or 0 if the name is unknown.
size_t safetensors_dtype_bits(const std::string& dtype);
// The bytes of `numel` elements of `bits` bits each, packed: ceil(numel * bits / 8). False when it overflows.
bool safetensors_tensor_bytes(uint64_t numel, size_t bits, uint64_t* bytes);

// "(2, 3)", "(5,)", "()" — a shape as Python prints it, for messages.
std::string format_shape(const std::vector<int64_t>& shape);

// IEEE half / bfloat16 bit patterns to float32 (exact: every half and bfloat16 value is a float32 value).
float half_to_float(uint16_t bits);
float bfloat16_to_float(uint16_t bits);

}  // namespace diffscope
