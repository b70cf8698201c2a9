// fuzz_npy.cpp — libFuzzer target for the .npy parser: any input must either parse or throw
// InvalidInput; a parsed array must survive a write/parse round trip through npy_header unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/errors.h"
#include "formats/npy_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace diffscope;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const NpyView v = parse_npy(bytes, "fuzz.npy");
    const size_t payload = v.numel * v.item_bytes;
    if (v.data + payload != reinterpret_cast<const unsigned char*>(bytes.data()) + bytes.size()) std::abort();
    // Round trip: our header + the same payload parses to the same shape and bytes.
    const std::string descr = std::string("<") + v.kind + std::to_string(v.item_bytes);
    const std::string again = npy_header(descr, v.shape) + std::string(reinterpret_cast<const char*>(v.data), payload);
    const NpyView w = parse_npy(again, "roundtrip.npy");
    if (w.shape != v.shape || w.kind != v.kind || w.item_bytes != v.item_bytes || w.numel != v.numel) std::abort();
    if (payload && std::memcmp(w.data, v.data, payload) != 0) std::abort();
    if ((w.data - reinterpret_cast<const unsigned char*>(again.data())) % 64 != 0) std::abort();
  } catch (const InvalidInput&) {
  }
  return 0;
}
