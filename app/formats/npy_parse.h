// npy_parse.h — parsing and formatting the .npy container in memory (the layer under npy.h; exposed for
// tests and fuzzing).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace diffscope {

// A validated .npy image: header parsed, data section exactly numel * item_bytes long.
struct NpyView {
  int major = 1;                 // format version 1, 2 or 3
  char kind = 0;                 // 'f' float, 'i' signed int, 'u' unsigned int
  size_t item_bytes = 0;         // 1, 2, 4 or 8
  std::string descr;             // as written, e.g. "<f4"
  std::vector<int64_t> shape;    // C order; empty for a 0-d array
  uint64_t numel = 1;
  const unsigned char* data = nullptr;  // into the caller's bytes (little-endian, maybe unaligned)
};

// Parses `bytes` (a whole .npy file). `label` opens every message (the CLI's --x in.npy). Throws InvalidInput for a
// bad magic, an unknown version, a header that is not the dict {'descr', 'fortran_order', 'shape'},
// big-endian data, fortran_order True, object/structured/unsupported dtypes, or a data section whose length
// is not product(shape) * itemsize. Accepted dtypes: f4, f8, i1, i2, i4, i8, u1, u2, u4, u8 with byte order
// '<' or '=' (or '|' for one-byte types).
NpyView parse_npy(const std::string& bytes, const std::string& label);

// The header NumPy writes for a C-order little-endian array: magic, version 1.0 (2.0 if the header exceeds
// 65535 bytes), length, the dict "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", spaces, and
// '\n' so that the data starts at a multiple of 64 bytes.
std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape);

}  // namespace diffscope
