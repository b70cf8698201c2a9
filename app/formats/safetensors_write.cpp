// safetensors_write.cpp — the .safetensors image of safetensors_write.h (nlohmann-json for the header).
#include "formats/safetensors_write.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "base/errors.h"

namespace diffscope {

std::string safetensors_bytes(const std::vector<TensorOut>& tensors, const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header;
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const TensorOut& t : tensors) {
    uint64_t numel = 1;
    for (int64_t n : t.shape) numel *= uint64_t(n);
    const bool f64 = !t.f64.empty();
    const uint64_t have = f64 ? t.f64.size() : t.f32.size();
    if (have != numel)
      throw InvalidInput("tensor " + t.name + " has " + std::to_string(have) + " values but its shape holds " +
                         std::to_string(numel));
    const uint64_t bytes = numel * (f64 ? 8 : 4);
    header[t.name] = {{"dtype", f64 ? "F64" : "F32"}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string json = header.dump();
  json.append((8 - json.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) out[size_t(i)] = char((n >> (8 * i)) & 0xFF);
  out += json;
  out.reserve(out.size() + offset);
  for (const TensorOut& t : tensors) {
    const char* p = t.f64.empty() ? reinterpret_cast<const char*>(t.f32.data()) : reinterpret_cast<const char*>(t.f64.data());
    out.append(p, t.f64.empty() ? t.f32.size() * 4 : t.f64.size() * 8);
  }
  return out;
}

}  // namespace diffscope
