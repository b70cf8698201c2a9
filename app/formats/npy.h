// npy.h — NumPy .npy arrays (format 1.0/2.0, little-endian, C order), SEMANTICS §6.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace diffscope {

class AtomicFileSet;

struct NpyFloat {
  std::vector<int64_t> shape;
  std::vector<float> data;  // C order
};
struct NpyDouble {
  std::vector<int64_t> shape;
  std::vector<double> data;  // C order
};
struct NpyInt {
  std::vector<int64_t> shape;
  std::vector<int64_t> data;
};

// Reads a float16, float32 or float64 array (converted to float32). `arg` names the CLI argument in error messages.
// Throws InvalidInput for a missing file, bad magic/header, other dtypes, big-endian or Fortran order,
// or a data section shorter than the shape says.
NpyFloat read_npy_float(const std::string& path, const std::string& arg);
// Reads a float16, float32 or float64 array as float64 (golden reference outputs are float64).
NpyDouble read_npy_double(const std::string& path, const std::string& arg);
// Reads an int64 or int32 array.
NpyInt read_npy_int(const std::string& path, const std::string& arg);
// Writes a float64 array atomically (tests and tools only).
void write_npy_double(const std::string& path, const std::vector<int64_t>& shape, const double* data,
                      const std::string& arg);
// Writes a float32 array atomically (temporary file in the same folder, then rename).
// Throws InvalidInput naming `arg` and the path if it cannot be written; nothing is left behind.
void write_npy_float(const std::string& path, const std::vector<int64_t>& shape, const float* data,
                     const std::string& arg);
// Adds a float32 array to a set of files written together (platform/atomic_write.h); `data` must outlive the
// commit. Throws InvalidInput for a negative dimension or a size that overflows 64 bits.
void add_npy_float(AtomicFileSet& set, const std::string& path, const std::vector<int64_t>& shape, const float* data,
                   const std::string& arg);
// Size in bytes of the .npy file of `shape` with items of `item_bytes` (4: float32, 8: float64): header plus
// data, in 64-bit arithmetic and without allocating. Throws InvalidInput when it overflows 64 bits.
uint64_t npy_file_bytes(const std::vector<int64_t>& shape, size_t item_bytes);

}  // namespace diffscope
