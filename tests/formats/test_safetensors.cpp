// test_safetensors.cpp — the .safetensors container checks of SEMANTICS §6 and the bad-file cases:
// header length, JSON, dtypes, offsets, overlaps, byte counts, padding, F16/BF16 conversion.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "base/errors.h"
#include "formats/safetensors.h"
#include "io_test_util.h"
#include "model/model.h"
#include "test_paths.h"

namespace diffscope {
namespace {

using test::invalid_input_message;
using test::le_u64;
using test::StBuilder;
using test::TempDir;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A 16-byte file whose header length says 132,095,296 must fail cleanly (no huge allocation).
TEST(Safetensors, SixteenByteFileWithHugeHeaderLength) {
  TempDir dir;
  const std::string path = dir.file("huge.safetensors");
  test::write_bytes(path, le_u64(132095296) + std::string("{}      "));
  const std::string msg = invalid_input_message([&] { SafetensorsFile::open(path); });
  EXPECT_TRUE(has(msg, path)) << msg;
  EXPECT_TRUE(has(msg, "132095296")) << msg;
  EXPECT_TRUE(has(msg, "16 bytes")) << msg;
}

// An empty path (Python's load("")) says so, instead of ": cannot open model file" (a newcomer trial).
TEST(Safetensors, EmptyPathSaysItIsEmpty) {
  const std::string msg = invalid_input_message([&] { SafetensorsFile::open(""); });
  EXPECT_EQ(msg, "the model file path is empty; valid: a file path") << msg;
}

// A zip archive renamed .safetensors: its first 8 bytes read as an absurd header length.
TEST(Safetensors, ZipFileRenamed) {
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  std::string zip("PK\x03\x04\x14\x00\x00\x00\x08\x00", 10);
  zip += std::string(40, '\x01') + "PK\x05\x06" + std::string(18, '\0');
  test::write_bytes(path, zip);
  const std::string msg = invalid_input_message([&] { SafetensorsFile::open(path); });
  EXPECT_TRUE(has(msg, "header length")) << msg;
  EXPECT_TRUE(has(msg, "not a .safetensors file")) << msg;
}

TEST(Safetensors, HeaderLengthZeroOneAndPastEnd) {
  const std::string body = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}";
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{body.size() + 5}, uint64_t{1} << 63}) {
    const std::string msg =
        invalid_input_message([&] { SafetensorsFile::from_bytes(le_u64(n) + body + "abcd", "f.safetensors"); });
    EXPECT_TRUE(has(msg, "f.safetensors: header length " + std::to_string(n))) << msg;
  }
}

TEST(Safetensors, ShorterThanEightBytes) {
  const std::string msg = invalid_input_message([] { SafetensorsFile::from_bytes(std::string("\x05\x00\x00", 3), "short"); });
  EXPECT_TRUE(has(msg, "3 bytes")) << msg;
}

TEST(Safetensors, MissingFileNamesThePath) {
  TempDir dir;
  const std::string msg = invalid_input_message([&] { SafetensorsFile::open(dir.file("nope.safetensors")); });
  EXPECT_TRUE(has(msg, "nope.safetensors")) << msg;
}

TEST(Safetensors, HeaderNotJsonOrNotObject) {
  for (const std::string h : {std::string("{\"a\": "), std::string("[1, 2, 3]"), std::string("\"text\"")}) {
    const std::string msg = invalid_input_message([&] { SafetensorsFile::from_bytes(le_u64(h.size()) + h, "f"); });
    EXPECT_TRUE(has(msg, "JSON")) << msg;
  }
}

TEST(Safetensors, DeeplyNestedHeaderRefused) {
  const std::string h = "{\"a\":" + std::string(10000, '[') + std::string(10000, ']') + "}";
  const std::string msg = invalid_input_message([&] { SafetensorsFile::from_bytes(le_u64(h.size()) + h, "f"); });
  EXPECT_TRUE(has(msg, "deeper")) << msg;
}

TEST(Safetensors, DuplicateTensorNameRefused) {
  const std::string h = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                        R"("a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  const std::string msg =
      invalid_input_message([&] { SafetensorsFile::from_bytes(test::le_u64(h.size()) + h + "12345678", "f"); });
  EXPECT_TRUE(has(msg, "header names tensor 'a' twice")) << msg;
}

TEST(Safetensors, ValidFileReadsValuesAndMetadata) {
  StBuilder b;
  b.add_f32("x", {2, 2}, {1.f, 2.f, 3.f, 4.f}).add_f64("y", {3}, {0.5, -1.5, 2.25}).meta("dataset", "moons");
  const SafetensorsFile f = SafetensorsFile::from_bytes(b.build(), "ok");
  ASSERT_EQ(f.tensors().size(), 2u);
  EXPECT_EQ(f.metadata().at("dataset"), "moons");
  EXPECT_EQ(f.read_float("x"), (std::vector<float>{1.f, 2.f, 3.f, 4.f}));
  EXPECT_EQ(f.read_float("y"), (std::vector<float>{0.5f, -1.5f, 2.25f}));
  EXPECT_EQ(f.read_double_schedule("y"), (std::vector<double>{0.5, -1.5, 2.25}));
  ASSERT_NE(f.find("x"), nullptr);
  EXPECT_EQ(f.find("x")->shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(f.find("z"), nullptr);
}

// The format allows the JSON header to be padded with trailing spaces (8-byte alignment of the data).
TEST(Safetensors, HeaderPaddedWithSpacesLoads) {
  StBuilder b;
  b.add_f32("x", {3}, {1.f, 2.f, 3.f}).pad_header(13);
  const SafetensorsFile f = SafetensorsFile::from_bytes(b.build(), "padded");
  EXPECT_EQ(f.read_float("x"), (std::vector<float>{1.f, 2.f, 3.f}));
}

TEST(Safetensors, OverlappingOffsetsRefused) {
  StBuilder b;
  b.extra_data(std::string(16, '\0')).add_at("a", "F32", {2}, 0, 8).add_at("b", "F32", {2}, 4, 12);
  const std::string msg = invalid_input_message([&] { SafetensorsFile::from_bytes(b.build(), "f"); });
  EXPECT_TRUE(has(msg, "'a' [0, 8] and 'b' [4, 12] overlap")) << msg;
}

TEST(Safetensors, OffsetsOutsideDataRefused) {
  StBuilder b;
  b.extra_data(std::string(8, '\0')).add_at("a", "F32", {2}, 4, 12);
  const std::string msg = invalid_input_message([&] { SafetensorsFile::from_bytes(b.build(), "f"); });
  EXPECT_TRUE(has(msg, "tensor 'a': data_offsets [4, 12] lie outside the data section of 8 bytes")) << msg;
  StBuilder c;  // begin > end
  c.extra_data(std::string(8, '\0')).add_at("a", "F32", {0}, 8, 4);
  EXPECT_TRUE(has(invalid_input_message([&] { SafetensorsFile::from_bytes(c.build(), "f"); }), "[8, 4]"));
}

TEST(Safetensors, WrongByteCountRefused) {
  StBuilder b;
  b.extra_data(std::string(12, '\0')).add_at("w", "F32", {2, 2}, 0, 12);
  const std::string msg = invalid_input_message([&] { SafetensorsFile::from_bytes(b.build(), "f"); });
  EXPECT_TRUE(has(msg, "tensor 'w'")) << msg;
  EXPECT_TRUE(has(msg, "hold 12 bytes, but shape (2, 2) of F32 needs 16")) << msg;
}

TEST(Safetensors, ShapeProductOverflowRefused) {
  StBuilder b;
  b.extra_data(std::string(8, '\0')).add_at("w", "F64", {int64_t{1} << 40, int64_t{1} << 40}, 0, 8);
  const std::string msg = invalid_input_message([&] { SafetensorsFile::from_bytes(b.build(), "f"); });
  EXPECT_TRUE(has(msg, "too large")) << msg;
  StBuilder c;  // numel fits in 64 bits, numel * 8 does not
  c.extra_data(std::string(8, '\0')).add_at("w", "F64", {int64_t{1} << 62}, 0, 8);
  EXPECT_TRUE(has(invalid_input_message([&] { SafetensorsFile::from_bytes(c.build(), "f"); }), "too large"));
}

TEST(Safetensors, MalformedEntriesRefused) {
  struct Case {
    std::string entry, expect;
  };
  const std::vector<Case> cases = {
      {R"({"dtype":"F32","shape":[1]})", "data_offsets"},
      {R"({"shape":[1],"data_offsets":[0,4]})", "dtype"},
      {R"({"dtype":"F32","data_offsets":[0,4]})", "shape"},
      {R"({"dtype":"F32","shape":[-1],"data_offsets":[0,4]})", "shape entry -1"},
      {R"({"dtype":"F32","shape":[1.5],"data_offsets":[0,4]})", "shape entry 1.5"},
      {R"({"dtype":"F32","shape":[1],"data_offsets":[0,4,8]})", "data_offsets"},
      {R"({"dtype":"F32","shape":[1],"data_offsets":[-4,0]})", "data_offsets entry -4"},
      {R"({"dtype":"C64","shape":[1],"data_offsets":[0,4]})", "shape (1,) of C64 needs 8"},  // 64 bits, 2 x F32
      {R"([1,2])", "not an object"},
  };
  for (const Case& c : cases) {
    const std::string h = "{\"t\":" + c.entry + "}";
    const std::string msg =
        invalid_input_message([&] { SafetensorsFile::from_bytes(le_u64(h.size()) + h + "abcd", "f"); });
    EXPECT_TRUE(has(msg, "tensor 't'")) << c.entry << " -> " << msg;
    EXPECT_TRUE(has(msg, c.expect)) << c.entry << " -> " << msg;
  }
  const std::string h = R"({"__metadata__":{"T":1000}})";
  EXPECT_TRUE(has(invalid_input_message([&] { SafetensorsFile::from_bytes(le_u64(h.size()) + h, "f"); }),
                  "'T' is not a string"));
}

// safetensors' dtype list (its Dtype enum and bitsize(), 0.8), sizes in bits: packed sub-byte types take
// ceil(numel * bits / 8) bytes. A dtype outside that list keeps its offsets checked, not its size.
TEST(Safetensors, EveryDtypeOfTheFormatSizedInBits) {
  struct Case {
    const char* dtype;
    std::vector<int64_t> shape;
    uint64_t bytes;  // worked by hand: numel * bits / 8, rounded up
  };
  const std::vector<Case> cases = {
      {"F4", {2, 8}, 8},           {"F4", {3}, 2},           {"F6_E2M3", {4, 4}, 12}, {"F6_E3M2", {5}, 4},
      {"F8_E4M3FNUZ", {4}, 4},     {"F8_E5M2FNUZ", {3}, 3},  {"F8_E8M0", {2}, 2},     {"C64", {3}, 24},
      {"BOOL", {5}, 5},            {"U16", {3}, 6},          {"U32", {2}, 8},         {"U64", {1}, 8},
      {"F4", {0}, 0},              {"F6_E2M3", {}, 1},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.dtype) + " " + format_shape(c.shape));
    StBuilder ok;
    ok.add("q", c.dtype, c.shape, std::string(c.bytes, '\x5a'));
    const SafetensorsFile f = SafetensorsFile::from_bytes(ok.build(), "m.safetensors");
    EXPECT_EQ(f.find("q")->end - f.find("q")->begin, c.bytes);
    EXPECT_TRUE(has(invalid_input_message([&] { f.read_float("q"); }), std::string("has dtype ") + c.dtype));
    StBuilder wrong;  // one byte more than the packed size
    wrong.add("q", c.dtype, c.shape, std::string(c.bytes + 1, '\x5a'));
    EXPECT_TRUE(has(invalid_input_message([&] { SafetensorsFile::from_bytes(wrong.build(), "m.safetensors"); }),
                    "needs " + std::to_string(c.bytes)));
  }
  // An unknown dtype: any size, but inside the data and overlapping nothing.
  StBuilder unknown;
  unknown.add("future", "F3_E1M1", {7}, std::string(5, '\1')).add_f32("w", {1}, {1.5f});
  const SafetensorsFile f = SafetensorsFile::from_bytes(unknown.build(), "m.safetensors");
  EXPECT_EQ(f.find("future")->dtype, "F3_E1M1");
  EXPECT_EQ(f.read_float("w"), std::vector<float>{1.5f});
  EXPECT_TRUE(has(invalid_input_message([&] { f.read_float("future"); }), "has dtype F3_E1M1"));
  StBuilder outside;
  outside.add_at("future", "F3_E1M1", {7}, 0, 9).extra_data(std::string(4, '\0'));
  EXPECT_TRUE(has(invalid_input_message([&] { SafetensorsFile::from_bytes(outside.build(), "m.safetensors"); }),
                  "lie outside the data section of 4 bytes"));
  StBuilder overlap;
  overlap.add_f32("w", {2}, {1.f, 2.f}).add_at("future", "F3_E1M1", {7}, 4, 6);
  EXPECT_TRUE(has(invalid_input_message([&] { SafetensorsFile::from_bytes(overlap.build(), "m.safetensors"); }),
                  "overlap"));
}

// The new-dtypes report: plain.safetensors plus one unused tensor of F4, F6_*, C64 or F8_*FNUZ loads as plain does,
// the extra tensor listed with its dtype.
TEST(Safetensors, ReportedNewDtypeFilesLoadAsPlain) {
  const std::string d = test::data_path("reported/new-dtypes/");
  const DiffusionModel plain = load_diffusion_model(d + "plain.safetensors");
  const std::vector<std::pair<std::string, std::vector<std::string>>> files = {
      {"extra_f4.safetensors", {"packed_fp4"}},
      {"extra_f6.safetensors", {"mx_fp6a", "mx_fp6b"}},
      {"extra_c64.safetensors", {"complex"}},
      {"extra_fnuz.safetensors", {"q1", "q2"}}};
  for (const auto& [name, extra] : files) {
    SCOPED_TRACE(name);
    const DiffusionModel m = load_diffusion_model(d + name);
    EXPECT_EQ(m.ignored_tensors, extra);
    EXPECT_EQ(m.net.W1, plain.net.W1);
    EXPECT_EQ(m.net.b1, plain.net.b1);
    EXPECT_EQ(m.net.W2, plain.net.W2);
    EXPECT_EQ(m.net.b2, plain.net.b2);
    EXPECT_EQ(m.net.W3, plain.net.W3);
    EXPECT_EQ(m.net.b3, plain.net.b3);
    EXPECT_EQ(m.schedule.betas, plain.schedule.betas);
  }
}

// Non-float dtypes of a used tensor are refused naming the tensor and the dtype.
TEST(Safetensors, IntegerDtypeRefusedWhenRead) {
  StBuilder b;
  b.add("idx", "I64", {2}, std::string(16, '\0'));
  const SafetensorsFile f = SafetensorsFile::from_bytes(b.build(), "m.safetensors");
  EXPECT_EQ(invalid_input_message([&] { f.read_float("idx"); }),
            "m.safetensors: tensor 'idx' has dtype I64; valid: F64, F32, F16, BF16");
  EXPECT_TRUE(has(invalid_input_message([&] { f.read_float("nothere"); }), "missing tensor 'nothere'"));
}

// F16 bit patterns and their values, worked out by hand from sign * 2^(e-15) * (1 + m/1024):
// 0x3C00 = 1, 0xC000 = -2, 0x3555 = 2^-2 * (1 + 341/1024) = 1365/4096, 0x7BFF = 65504 (largest),
// 0x0001 = 2^-24 (smallest subnormal), 0x0200 = 2^-15 (subnormal 512 * 2^-24), 0x8000 = -0.
TEST(Safetensors, F16ConvertsExactly) {
  const std::vector<uint16_t> bits = {0x3C00, 0xC000, 0x3555, 0x7BFF, 0x0001, 0x0200, 0x8000};
  const std::vector<float> want = {1.0f, -2.0f, 1365.0f / 4096.0f, 65504.0f, std::ldexp(1.0f, -24),
                                   std::ldexp(1.0f, -15), -0.0f};
  StBuilder b;
  b.add("h", "F16", {static_cast<int64_t>(bits.size())}, test::raw_bytes(bits));
  const std::vector<float> got = SafetensorsFile::from_bytes(b.build(), "f").read_float("h");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
  EXPECT_TRUE(std::signbit(got[6]));
  EXPECT_TRUE(std::isinf(half_to_float(0x7C00)));
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
}

// BF16 is the top half of a float32: 0x3F80 = 1, 0xC0A0 = -5, 0x3EAB = 2^-2 * (1 + 43/128) = 171/512,
// 0x0001 = 2^-133 (float32 subnormal 2^16 * 2^-149).
TEST(Safetensors, BF16ConvertsExactly) {
  const std::vector<uint16_t> bits = {0x3F80, 0xC0A0, 0x3EAB, 0x0001};
  const std::vector<float> want = {1.0f, -5.0f, 171.0f / 512.0f, std::ldexp(1.0f, -133)};
  StBuilder b;
  b.add("h", "BF16", {2, 2}, test::raw_bytes(bits));
  const std::vector<float> got = SafetensorsFile::from_bytes(b.build(), "f").read_float("h");
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << "element " << i;
}

// Schedule tensors must not come from half precision; SEMANTICS §1 gives the reason, the message repeats it.
TEST(Safetensors, HalfPrecisionScheduleRefused) {
  StBuilder b;
  b.add("betas", "F16", {2}, std::string(4, '\0')).add("ints", "I32", {1}, std::string(4, '\0'));
  const SafetensorsFile f = SafetensorsFile::from_bytes(b.build(), "f");
  const std::string msg = invalid_input_message([&] { f.read_double_schedule("betas"); });
  EXPECT_TRUE(has(msg, "'betas' has dtype F16")) << msg;
  EXPECT_TRUE(has(msg, "coef_eps infinite")) << msg;
  EXPECT_TRUE(has(invalid_input_message([&] { f.read_double_schedule("ints"); }), "dtype I32; valid: F64, F32"));
}

TEST(Safetensors, EmptyAndScalarTensors) {
  StBuilder b;
  b.add_f32("s", {}, {7.5f}).add("e", "F32", {0, 3}, "");
  const SafetensorsFile f = SafetensorsFile::from_bytes(b.build(), "f");
  EXPECT_EQ(f.read_float("s"), std::vector<float>{7.5f});
  EXPECT_TRUE(f.read_float("e").empty());
  EXPECT_EQ(format_shape({}), "()");
  EXPECT_EQ(format_shape({5}), "(5,)");
  EXPECT_EQ(format_shape({2, 3}), "(2, 3)");
}

// Found by the public bug reports (tests/data/reported/, dup-key). The safetensors format forbids duplicate keys
// at every level. nlohmann's DOM parser keeps
// the last one silently; the reader must refuse, naming the tensor (or __metadata__) and the key.
TEST(Safetensors, DuplicateKeyAtEveryLevelRefused) {
  struct Case {
    std::string header, expect;
  };
  const Case cases[] = {
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"data_offsets":[4,8]}})",
       "tensor 'a': key 'data_offsets' appears twice"},
      {R"({"a":{"dtype":"F32","dtype":"F64","shape":[1],"data_offsets":[0,4]}})", "tensor 'a': key 'dtype' appears twice"},
      {R"({"a":{"shape":[1],"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", "tensor 'a': key 'shape' appears twice"},
      {R"({"__metadata__":{"T":"10","T":"20"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
       "__metadata__: key 'T' appears twice"},
      {R"({"__metadata__":{"T":"10"},"__metadata__":{"T":"20"}})", "header names tensor '__metadata__' twice"},
      {R"({"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
       R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
       "header names tensor 'b' twice"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.header);
    const std::string msg = invalid_input_message(
        [&] { SafetensorsFile::from_bytes(test::le_u64(c.header.size()) + c.header + "12345678", "f"); });
    EXPECT_TRUE(has(msg, c.expect)) << msg;
  }
  // The same key in two different objects is not a duplicate.
  const std::string ok = R"({"__metadata__":{"dtype":"x"},"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                         R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
  EXPECT_NO_THROW(SafetensorsFile::from_bytes(test::le_u64(ok.size()) + ok + "12345678", "f"));
}

// The two reported files (tests/data/reported/dup-key, from public bug reports): both used to load with the
// last value winning.
TEST(Safetensors, ReportedDuplicateKeyFilesRefused) {
  const std::string d = test::data_path("reported/dup-key/");
  std::string msg = invalid_input_message([&] { SafetensorsFile::open(d + "dup_offsets.safetensors"); });
  EXPECT_TRUE(has(msg, "tensor 'eps_net.4.bias': key 'data_offsets' appears twice")) << msg;
  msg = invalid_input_message([&] { SafetensorsFile::open(d + "dup_toplevel.safetensors"); });
  EXPECT_TRUE(has(msg, "header names tensor 'eps_net.4.bias' twice")) << msg;
}

}  // namespace
}  // namespace diffscope
