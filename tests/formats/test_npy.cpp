// test_npy.cpp — .npy reading and writing (SEMANTICS §6): NumPy's exact header bytes, round trips,
// int32/int64, float64 -> float32, atomic writes, and malformed files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.h"
#include "formats/npy.h"
#include "formats/npy_parse.h"
#include "io_test_util.h"
#include "platform/output_files.h"

namespace diffscope {
namespace {

using test::invalid_input_message;
using test::raw_bytes;
using test::TempDir;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// What np.save(path, np.zeros((2, 3), np.float32)) writes (numpy/lib/format.py, format 1.0): magic,
// version 1.0, header length 118 = 0x76 (little-endian uint16), the dict, spaces up to byte 127 and '\n';
// the data starts at byte 128, a multiple of 64.
TEST(Npy, HeaderBytesMatchNumpy) {
  TempDir dir;
  const std::string path = dir.file("a.npy");
  const std::vector<float> data = {1, 2, 3, 4, 5, 6};
  write_npy_float(path, {2, 3}, data.data(), "--out");
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  ASSERT_EQ(dict.size(), 59u);
  // 10 + 59 + 1 = 70 -> pad to 128: 58 spaces (numpy >= 1.24 adds 20 "growth" spaces first: same bytes).
  const std::string want_header = std::string("\x93NUMPY\x01\x00\x76\x00", 10) + dict + std::string(58, ' ') + "\n";
  ASSERT_EQ(want_header.size(), 128u);
  const std::string bytes = read_file(path);
  ASSERT_EQ(bytes.size(), 128u + 24u);
  EXPECT_EQ(bytes.substr(0, 128), want_header);
  EXPECT_EQ(bytes.substr(128), raw_bytes(data));
}

// 1-D and 0-d shapes print as Python tuples "(5,)" and "()"; every header ends on a 64-byte boundary.
TEST(Npy, HeaderShapesAndAlignment) {
  const std::string h1 = npy_header("<i8", {5});
  EXPECT_TRUE(has(h1, "'shape': (5,), }")) << h1;
  const std::string h0 = npy_header("<f8", {});
  EXPECT_TRUE(has(h0, "'shape': (), }")) << h0;
  for (const auto& shape : std::vector<std::vector<int64_t>>{{}, {1}, {7, 1, 2}, {123456789, 2, 3, 4, 5, 6, 7}}) {
    const std::string h = npy_header("<f4", shape);
    EXPECT_EQ(h.size() % 64, 0u);
    EXPECT_EQ(h.back(), '\n');
    EXPECT_EQ(static_cast<unsigned char>(h[8]) + 256u * static_cast<unsigned char>(h[9]), h.size() - 10);
  }
}

TEST(Npy, FloatRoundTrip) {
  TempDir dir;
  const std::string path = dir.file("x.npy");
  const std::vector<float> data = {0.5f, -1.25f, 3.0e-8f, 1.0e30f, -0.0f, 7.0f};
  write_npy_float(path, {3, 2}, data.data(), "--out");
  const NpyFloat f = read_npy_float(path, "--x");
  EXPECT_EQ(f.shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(f.data, data);
  const NpyDouble d = read_npy_double(path, "--x");
  EXPECT_EQ(d.data[2], static_cast<double>(3.0e-8f));
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"x.npy"});  // no temporary file left
}

TEST(Npy, DoubleWrittenReadAsFloatAndDouble) {
  TempDir dir;
  const std::string path = dir.file("g.npy");
  const std::vector<double> data = {0.1, 1.0 / 3.0, -2.5};
  write_npy_double(path, {3}, data.data(), "");
  EXPECT_TRUE(has(read_file(path), "'descr': '<f8'"));
  EXPECT_EQ(read_npy_double(path, "").data, data);
  EXPECT_EQ(read_npy_float(path, "--x").data, (std::vector<float>{0.1f, 1.0f / 3.0f, -2.5f}));
}

TEST(Npy, IntegerArrays) {
  TempDir dir;
  const std::vector<int64_t> v64 = {999, 500, 1, 0, -1, int64_t{1} << 40};
  test::write_bytes(dir.file("i8.npy"), npy_header("<i8", {6}) + raw_bytes(v64));
  EXPECT_EQ(read_npy_int(dir.file("i8.npy"), "--t-start").data, v64);
  const std::vector<int32_t> v32 = {999, 500, 1, 0, -7, 2147483647};
  test::write_bytes(dir.file("i4.npy"), npy_header("<i4", {2, 3}) + raw_bytes(v32));
  const NpyInt r = read_npy_int(dir.file("i4.npy"), "--t-start");
  EXPECT_EQ(r.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(r.data, (std::vector<int64_t>{999, 500, 1, 0, -7, 2147483647}));
  test::write_bytes(dir.file("u1.npy"), npy_header("|u1", {2}) + std::string("\xff\x01", 2));
  EXPECT_EQ(read_npy_int(dir.file("u1.npy"), "").data, (std::vector<int64_t>{255, 1}));
  const std::vector<uint64_t> big = {uint64_t{1} << 63};
  test::write_bytes(dir.file("u8.npy"), npy_header("<u8", {1}) + raw_bytes(big));
  EXPECT_TRUE(has(invalid_input_message([&] { read_npy_int(dir.file("u8.npy"), "--t-start"); }),
                  "does not fit in int64"));
  // dtype kinds are not mixed up: ints are not floats and floats are not ints.
  EXPECT_TRUE(has(invalid_input_message([&] { read_npy_float(dir.file("i8.npy"), "--x"); }),
                  "dtype '<i8' (valid: '<f2', '<f4', '<f8')"));
  write_npy_float(dir.file("f.npy"), {1}, std::vector<float>{1.f}.data(), "");
  EXPECT_TRUE(has(invalid_input_message([&] { read_npy_int(dir.file("f.npy"), "--t-start"); }),
                  "--t-start " + dir.file("f.npy") + ": dtype '<f4' (valid: '<i8', '<i4')"));
}

// float16 arrays read as floats (SEMANTICS §6: x is float16, float32 or float64 in the CLI and in Python alike):
// IEEE 754 binary16 bit patterns and their exact values.
TEST(Npy, Float16Reads) {
  TempDir dir;
  const std::vector<uint16_t> bits = {0x3C00, 0xC000, 0x3555, 0x0001, 0x7BFF, 0x8000};
  test::write_bytes(dir.file("f2.npy"), npy_header("<f2", {3, 2}) + raw_bytes(bits));
  const NpyFloat r = read_npy_float(dir.file("f2.npy"), "--x");
  EXPECT_EQ(r.shape, (std::vector<int64_t>{3, 2}));
  const std::vector<float> want = {1.0f, -2.0f, 0.333251953125f, std::ldexp(1.0f, -24), 65504.0f, -0.0f};
  ASSERT_EQ(r.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(r.data[i], want[i]) << i;
  EXPECT_TRUE(std::signbit(r.data[5]));
  EXPECT_EQ(read_npy_double(dir.file("f2.npy"), "--x").data[2], 0.333251953125);
  // integers stay refused as x (no silent conversion in either front end)
  test::write_bytes(dir.file("i4.npy"), npy_header("<i4", {1, 2}) + raw_bytes(std::vector<int32_t>{1, 2}));
  EXPECT_TRUE(has(invalid_input_message([&] { read_npy_float(dir.file("i4.npy"), "--x"); }),
                  "dtype '<i4' (valid: '<f2', '<f4', '<f8')"));
}

// Format 2.0 (4-byte header length) reads like 1.0.
TEST(Npy, Version2Reads) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  dict += std::string(64 - (12 + dict.size() + 1) % 64, ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
  const uint32_t len = static_cast<uint32_t>(dict.size());
  bytes += std::string(reinterpret_cast<const char*>(&len), 4) + dict + raw_bytes(std::vector<float>{1.5f, -2.f});
  const NpyView v = parse_npy(bytes, "v2");
  EXPECT_EQ(v.major, 2);
  EXPECT_EQ(v.shape, std::vector<int64_t>{2});
  EXPECT_EQ(v.numel, 2u);
}

// Header variants numpy has written over the years: key order, Python-2 longs, double quotes, '=' order.
TEST(Npy, HeaderVariantsAccepted) {
  auto with_header = [](const std::string& dict, size_t data_bytes) {
    std::string h = dict + "\n";
    std::string out = std::string("\x93NUMPY\x01\x00", 8);
    out.push_back(static_cast<char>(h.size() & 0xff));
    out.push_back(static_cast<char>(h.size() >> 8));
    return out + h + std::string(data_bytes, '\0');
  };
  EXPECT_EQ(parse_npy(with_header("{'shape': (2L, 3L), 'fortran_order': False, 'descr': '<f8'}", 48), "a").numel, 6u);
  EXPECT_EQ(parse_npy(with_header("{\"descr\": \"=i4\", \"fortran_order\": False, \"shape\": ()}", 4), "b").numel, 1u);
  EXPECT_EQ(parse_npy(with_header("{'descr':'<f4','fortran_order':False,'shape':(0, 5)}", 0), "c").numel, 0u);
}

TEST(Npy, MalformedFilesRefused) {
  auto npy = [](const std::string& dict, size_t data_bytes) {
    std::string h = dict + "\n";
    std::string out = std::string("\x93NUMPY\x01\x00", 8);
    out.push_back(static_cast<char>(h.size() & 0xff));
    out.push_back(static_cast<char>(h.size() >> 8));
    return out + h + std::string(data_bytes, '\0');
  };
  const std::string ok = "'fortran_order': False, 'shape': (2,)";
  struct Case {
    std::string bytes, expect;
  };
  const std::vector<Case> cases = {
      {"PK\x03\x04 not numpy at all", "no \\x93NUMPY magic"},
      {std::string("\x93NUMPY\x09\x00\x10\x00", 10), "format version 9"},
      {std::string("\x93NUMPY\x01\x00\xff\x00{}", 12), "header length 255 runs past the end"},
      {std::string("\x93NUMPY\x02\x00\x01", 9), "ends inside the .npy header length"},
      {npy("{'descr': '>f4', " + ok + "}", 8), "big-endian"},
      {npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2)}", 16), "fortran_order is True"},
      {npy("{'descr': '|O', " + ok + "}", 16), "object arrays"},
      {npy("{'descr': [('a', '<f4')], " + ok + "}", 8), "structured dtypes"},
      {npy("{'descr': '<c8', " + ok + "}", 16), "dtype '<c8' is not supported"},
      {npy("{'descr': '|f4', " + ok + "}", 8), "has no byte order"},
      {npy("{'descr': '<f4', " + ok + "}", 7), "truncated: the data section holds 7 bytes, shape (2,) of '<f4' needs 8"},
      {npy("{'descr': '<f4', " + ok + "}", 9), "trailing bytes"},
      {npy("{'descr': '<f4', 'shape': (2,)}", 8), "needs 'descr', 'fortran_order' and 'shape'"},
      {npy("{'descr': '<f4', " + ok + ", 'extra': 1}", 8), "unexpected key 'extra'"},
      {npy("{'descr': '<f4', 'descr': '<f4', " + ok + "}", 8), "duplicate 'descr'"},
      {npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,)}", 8), "True or False"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", 8), "non-negative integer"},
      {npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", 8), "too large"},
      {npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}", 8), "too large"},
      {npy("{'descr': '<f4', " + ok + "} junk", 8), "text after the dict"},
      {npy("{'descr': '<f4', " + ok, 8), "expected '}'"},
  };
  for (const Case& c : cases) {
    const std::string msg = invalid_input_message([&] { parse_npy(c.bytes, "--x in.npy"); });
    EXPECT_TRUE(has(msg, "--x in.npy: ")) << msg;
    EXPECT_TRUE(has(msg, c.expect)) << "expected '" << c.expect << "' in: " << msg;
  }
}

TEST(Npy, MissingFileAndUnwritablePath) {
  TempDir dir;
  EXPECT_TRUE(has(invalid_input_message([&] { read_npy_float(dir.file("none.npy"), "--x"); }),
                  "--x " + dir.file("none.npy") + ": cannot open"));
  EXPECT_TRUE(has(invalid_input_message([&] { read_npy_float(dir.path(), "--x"); }), "not a regular file"));
  const float v = 1.f;
  const std::string bad = dir.file("no/such/folder/out.npy");
  EXPECT_TRUE(has(invalid_input_message([&] { write_npy_float(bad, {1}, &v, "--out"); }),
                  "--out " + bad + ": cannot write"));
  // Writing over a folder fails at the rename: the temporary file must be gone and the folder untouched.
  const std::string sub = dir.file("sub");
  std::filesystem::create_directory(sub);
  std::filesystem::create_directory(sub + "/occupied");
  EXPECT_TRUE(has(invalid_input_message([&] { write_npy_float(sub + "/occupied", {1}, &v, "--out"); }),
                  "cannot write"));
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(sub)) left.push_back(e.path().filename().string());
  EXPECT_EQ(left, std::vector<std::string>{"occupied"});
}

TEST(Npy, OverwriteReplacesWholeFile) {
  TempDir dir;
  const std::string path = dir.file("y.npy");
  const std::vector<float> big(100, 1.f), small = {2.f};
  write_npy_float(path, {100}, big.data(), "--out");
  write_npy_float(path, {1}, small.data(), "--out");
  EXPECT_EQ(read_npy_float(path, "--out").data, small);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"y.npy"});
}

// Found by the public bug reports (tests/data/reported/): "64-bit sizes".
TEST(NpySizes, TrajectoryOf2To31FramesIn64Bits) {
  // denoise --steps 2147483647 --trajectory: shape (S + 1, B, dim) = (2147483648, 1, 1) float32. The header is
  // NumPy's: magic (6) + version (2) + length (2) + dict + padding + '\n' to a multiple of 64 (format.py).
  const std::vector<int64_t> shape{2147483648LL, 1, 1};
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 1, 1), }";
  const uint64_t header = (10 + dict.size() + 1 + 63) / 64 * 64;
  EXPECT_EQ(npy_header("<f4", shape).size(), header);
  EXPECT_TRUE(has(npy_header("<f4", shape), "(2147483648, 1, 1)"));
  EXPECT_EQ(npy_file_bytes(shape, 4), header + 8589934592ULL);
  // Just below 2^64 bytes: 2^31 (2^31 - 1) float32 = 2^64 - 2^33.
  const std::vector<int64_t> big{2147483648LL, 2147483647LL};
  EXPECT_EQ(npy_file_bytes(big, 4) - npy_header("<f4", big).size(), 18446744065119617024ULL);
  // Overflow of 64 bits is refused, not wrapped.
  EXPECT_THROW(npy_file_bytes({4294967296LL, 4294967296LL}, 4), InvalidInput);
  EXPECT_THROW(npy_file_bytes({-1, 2}, 4), InvalidInput);
}

// Found by the public bug reports (tests/data/reported/): "64-bit sizes".
TEST(NpySizes, OutputsThatDoNotFitTheFileSystemAreRefusedBeforeAnyWork) {
  TempDir dir;
  // 1 EB cannot be free anywhere; the message names the argument and the size.
  try {
    check_output_space({{"--trajectory", dir.file("t.npy"), 1ULL << 60}, {"--out", dir.file("o.npy"), 128}});
    ADD_FAILURE() << "expected ResourceUnavailable";
  } catch (const ResourceUnavailable& e) {
    EXPECT_TRUE(has(e.what(), "--trajectory '" + dir.file("t.npy") + "'")) << e.what();
  }
  EXPECT_NO_THROW(check_output_space({{"--out", dir.file("o.npy"), 128}}));
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
}  // namespace diffscope
