// safetensors_write.h — writing a .safetensors image (the format safetensors.h reads; SEMANTICS §6): 8-byte
// little-endian header length, the JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {strings}}
// padded with spaces to a multiple of 8 bytes, then the tensors' bytes one after the other in the given order.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace diffscope {

// One tensor to write: F32 or F64 values (little-endian, as this machine stores them), row-major.
struct TensorOut {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<float> f32;    // used when f64 is empty
  std::vector<double> f64;
};

// The whole file's bytes. Throws InvalidInput when a tensor's value count disagrees with its shape.
std::string safetensors_bytes(const std::vector<TensorOut>& tensors, const std::map<std::string, std::string>& metadata);

}  // namespace diffscope
