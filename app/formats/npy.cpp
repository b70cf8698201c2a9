// npy.cpp — NumPy .npy reading and (atomic) writing, SEMANTICS §6; format per numpy/lib/format.py.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <sys/stat.h>

#include <Eigen/Core>  // Eigen::half: float16 elements (IEEE 754 binary16)

#include "base/errors.h"
#include "formats/npy.h"
#include "formats/npy_parse.h"
#include "formats/safetensors.h"  // format_shape
#include "platform/atomic_write.h"
#include "platform/file_read.h"

namespace diffscope {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;
constexpr size_t kMaxDims = 64;  // NPY_MAXDIMS

[[noreturn]] void fail(const std::string& label, const std::string& what) {
  throw InvalidInput(label + ": " + what);
}

// A cursor over the header's Python-literal dict.
struct Lexer {
  const std::string& s;
  size_t i = 0;
  const std::string& label;
  void ws() {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  }
  bool eat(char c) {
    ws();
    if (i < s.size() && s[i] == c) {
      ++i;
      return true;
    }
    return false;
  }
  [[noreturn]] void bad(const std::string& what) const {
    fail(label, "malformed .npy header (" + what + " at byte " + std::to_string(i) + "): " + s.substr(0, 120));
  }
  void expect(char c) {
    if (!eat(c)) bad(std::string("expected '") + c + "'");
  }
  std::string str() {
    ws();
    if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) bad("expected a quoted string");
    const char q = s[i++];
    const size_t start = i;
    while (i < s.size() && s[i] != q) {
      if (s[i] == '\\') bad("escape in string");
      ++i;
    }
    if (i >= s.size()) bad("unterminated string");
    return s.substr(start, i++ - start);
  }
  std::string word() {
    ws();
    const size_t start = i;
    while (i < s.size() && ((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z'))) ++i;
    return s.substr(start, i - start);
  }
  int64_t integer() {
    ws();
    const size_t start = i;
    uint64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      const unsigned d = static_cast<unsigned>(s[i] - '0');
      if (v > (static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) - d) / 10) bad("dimension too large");
      v = v * 10 + d;
      ++i;
    }
    if (i == start) bad("expected a non-negative integer");
    if (i < s.size() && s[i] == 'L') ++i;  // Python 2 longs: (3L, 4L)
    return static_cast<int64_t>(v);
  }
};

uint64_t numel_of(const std::vector<int64_t>& shape, size_t item, const std::string& label) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    const uint64_t u = static_cast<uint64_t>(d);
    if (u != 0 && n > std::numeric_limits<uint64_t>::max() / u) fail(label, "shape " + format_shape(shape) + " is too large");
    n *= u;
  }
  if (item && n > std::numeric_limits<uint64_t>::max() / item) fail(label, "shape " + format_shape(shape) + " is too large");
  return n;
}

template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

std::string label_of(const std::string& arg, const std::string& path) {
  return arg.empty() ? path : arg + " " + path;
}

// The header's dict {'descr': ..., 'fortran_order': ..., 'shape': (...)} into v.descr and v.shape: each key once,
// nothing else, C order only. Throws InvalidInput naming `label`.
void parse_header_dict(const std::string& header, const std::string& label, NpyView& v) {
  Lexer lx{header, 0, label};
  bool have_descr = false, have_fortran = false, have_shape = false, fortran = false;
  lx.expect('{');
  while (!lx.eat('}')) {
    const std::string key = lx.str();
    lx.expect(':');
    if (key == "descr") {
      if (have_descr) lx.bad("duplicate 'descr'");
      have_descr = true;
      lx.ws();
      if (lx.i < header.size() && header[lx.i] == '[') fail(label, "structured dtypes are not supported");
      v.descr = lx.str();
    } else if (key == "fortran_order") {
      if (have_fortran) lx.bad("duplicate 'fortran_order'");
      have_fortran = true;
      const std::string w = lx.word();
      if (w != "True" && w != "False") lx.bad("fortran_order must be True or False");
      fortran = w == "True";
    } else if (key == "shape") {
      if (have_shape) lx.bad("duplicate 'shape'");
      have_shape = true;
      lx.expect('(');
      while (!lx.eat(')')) {
        if (v.shape.size() >= kMaxDims) lx.bad("more than 64 dimensions");
        v.shape.push_back(lx.integer());
        if (!lx.eat(',')) {
          lx.expect(')');
          break;
        }
      }
    } else {
      lx.bad("unexpected key '" + key + "'");
    }
    if (!lx.eat(',')) {
      lx.expect('}');
      break;
    }
  }
  lx.ws();
  if (lx.i != header.size()) lx.bad("text after the dict");
  if (!have_descr || !have_fortran || !have_shape) lx.bad("the dict needs 'descr', 'fortran_order' and 'shape'");
  if (fortran) fail(label, "fortran_order is True; only C-order arrays are supported (save with np.ascontiguousarray)");
}

// v.descr as v.kind and v.item_bytes: little-endian (or one-byte) floats of 2, 4, 8 bytes and integers.
// Throws InvalidInput naming `label` and the dtype.
void parse_descr(const std::string& label, NpyView& v) {
  const std::string& d = v.descr;
  if (d.size() < 3 || (d[0] != '<' && d[0] != '>' && d[0] != '|' && d[0] != '=')) {
    if (d.find('O') != std::string::npos) fail(label, "object arrays ('" + d + "') are not supported");
    fail(label, "dtype '" + d + "' is not supported (valid: '<f2', '<f4', '<f8', '<i4', '<i8')");
  }
  v.kind = d[1];
  if (v.kind == 'O') fail(label, "object arrays ('" + d + "') are not supported");
  const std::string size = d.substr(2);
  v.item_bytes = size == "1" ? 1 : size == "2" ? 2 : size == "4" ? 4 : size == "8" ? 8 : 0;
  const bool float_ok = v.kind == 'f' && (v.item_bytes == 2 || v.item_bytes == 4 || v.item_bytes == 8);
  const bool int_ok = (v.kind == 'i' || v.kind == 'u') && v.item_bytes != 0;
  if (!float_ok && !int_ok) fail(label, "dtype '" + d + "' is not supported (valid: '<f2', '<f4', '<f8', '<i4', '<i8')");
  if (d[0] == '>' && v.item_bytes > 1)
    fail(label, "dtype '" + d + "' is big-endian; save little-endian data (e.g. a.astype('<" + d.substr(1) + "'))");
  if (d[0] == '|' && v.item_bytes > 1) fail(label, "dtype '" + d + "' has no byte order; expected '<" + d.substr(1) + "'");
}

}  // namespace

NpyView parse_npy(const std::string& bytes, const std::string& label) {
  if (bytes.size() < kMagicLen + 2 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    fail(label, "not a .npy file (no \\x93NUMPY magic)");
  NpyView v;
  v.major = static_cast<unsigned char>(bytes[6]);
  const size_t len_bytes = v.major == 1 ? 2 : (v.major == 2 || v.major == 3) ? 4 : 0;
  if (!len_bytes) fail(label, ".npy format version " + std::to_string(v.major) + " (valid: 1, 2, 3)");
  const size_t hstart = kMagicLen + 2 + len_bytes;
  if (bytes.size() < hstart) fail(label, "file ends inside the .npy header length");
  uint64_t hlen = 0;
  for (size_t k = len_bytes; k-- > 0;) hlen = (hlen << 8) | static_cast<unsigned char>(bytes[kMagicLen + 2 + k]);
  if (hlen > bytes.size() - hstart)
    fail(label, ".npy header length " + std::to_string(hlen) + " runs past the end of the " +
                    std::to_string(bytes.size()) + "-byte file");
  const std::string header = bytes.substr(hstart, hlen);

  parse_header_dict(header, label, v);
  parse_descr(label, v);

  v.numel = numel_of(v.shape, v.item_bytes, label);
  const uint64_t want = v.numel * v.item_bytes;
  const uint64_t have = bytes.size() - hstart - hlen;
  if (have != want)
    fail(label, std::string(have < want ? "truncated: " : "trailing bytes: ") + "the data section holds " +
                    std::to_string(have) + " bytes, shape " + format_shape(v.shape) + " of '" + v.descr + "' needs " +
                    std::to_string(want));
  v.data = reinterpret_cast<const unsigned char*>(bytes.data()) + hstart + hlen;
  return v;
}

std::string npy_header(const std::string& descr, const std::vector<int64_t>& shape) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + format_shape(shape) + ", }";
  // numpy/lib/format.py _wrap_header: padlen = 64 - ((8 + len_bytes + len(dict) + 1) % 64) spaces (1 to 64),
  // then '\n', so that the data starts at a multiple of 64 bytes. Version 1.0 unless that exceeds 65535.
  auto padded = [&](size_t len_bytes) { return dict.size() + (64 - (kMagicLen + 2 + len_bytes + dict.size() + 1) % 64) + 1; };
  const bool v1 = padded(2) <= 65535;
  const size_t pad = padded(v1 ? 2 : 4) - dict.size() - 1;
  dict.append(pad, ' ');
  dict.push_back('\n');
  std::string out(kMagic, kMagicLen);
  out.push_back(static_cast<char>(v1 ? 1 : 2));
  out.push_back('\0');
  uint64_t len = dict.size();
  for (size_t k = 0; k < (v1 ? 2u : 4u); ++k, len >>= 8) out.push_back(static_cast<char>(len & 0xff));
  return out + dict;
}

namespace {

template <typename Out>
std::vector<Out> convert_float(const NpyView& v) {
  std::vector<Out> out(v.numel);
  for (uint64_t i = 0; i < v.numel; ++i)
    out[i] = v.item_bytes == 2   ? static_cast<Out>(static_cast<float>(
                                       Eigen::numext::bit_cast<Eigen::half>(load<uint16_t>(v.data + 2 * i))))
             : v.item_bytes == 4 ? static_cast<Out>(load<float>(v.data + 4 * i))
                                 : static_cast<Out>(load<double>(v.data + 8 * i));
  return out;
}

// Checks the shape (64-bit dimensions, no negative one, no overflow of numel * itemsize) and returns the
// header; the data is written from `data` as is.
std::string checked_header(const std::vector<int64_t>& shape, size_t item, const char* descr, const std::string& label,
                           uint64_t* data_bytes) {
  for (int64_t d : shape)
    if (d < 0) fail(label, "cannot write shape " + format_shape(shape) + " (negative dimension)");
  *data_bytes = numel_of(shape, item, label) * item;
  return npy_header(descr, shape);
}

template <typename T>
void write_array(const std::string& path, const std::vector<int64_t>& shape, const T* data, const char* descr,
                 const std::string& arg) {
  AtomicFileSet set;
  uint64_t n = 0;
  std::string head = checked_header(shape, sizeof(T), descr, label_of(arg, path), &n);
  set.add(path, arg, std::move(head), data, n);
  set.commit();
}

}  // namespace

NpyFloat read_npy_float(const std::string& path, const std::string& arg) {
  const std::string label = label_of(arg, path);
  const std::string bytes = read_file_bytes(path, label, ".npy file");
  const NpyView v = parse_npy(bytes, label);
  if (v.kind != 'f') fail(label, "dtype '" + v.descr + "' (valid: '<f2', '<f4', '<f8')");
  return NpyFloat{v.shape, convert_float<float>(v)};
}

NpyDouble read_npy_double(const std::string& path, const std::string& arg) {
  const std::string label = label_of(arg, path);
  const std::string bytes = read_file_bytes(path, label, ".npy file");
  const NpyView v = parse_npy(bytes, label);
  if (v.kind != 'f') fail(label, "dtype '" + v.descr + "' (valid: '<f2', '<f4', '<f8')");
  return NpyDouble{v.shape, convert_float<double>(v)};
}

NpyInt read_npy_int(const std::string& path, const std::string& arg) {
  const std::string label = label_of(arg, path);
  const std::string bytes = read_file_bytes(path, label, ".npy file");
  const NpyView v = parse_npy(bytes, label);
  if (v.kind != 'i' && v.kind != 'u') fail(label, "dtype '" + v.descr + "' (valid: '<i8', '<i4')");
  NpyInt out{v.shape, std::vector<int64_t>(v.numel)};
  for (uint64_t i = 0; i < v.numel; ++i) {
    const unsigned char* p = v.data + v.item_bytes * i;
    int64_t x = 0;
    if (v.kind == 'i') {
      x = v.item_bytes == 1 ? load<int8_t>(p) : v.item_bytes == 2 ? load<int16_t>(p)
        : v.item_bytes == 4 ? load<int32_t>(p) : load<int64_t>(p);
    } else {
      const uint64_t u = v.item_bytes == 1 ? load<uint8_t>(p) : v.item_bytes == 2 ? load<uint16_t>(p)
                       : v.item_bytes == 4 ? load<uint32_t>(p) : load<uint64_t>(p);
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        fail(label, "element " + std::to_string(i) + " = " + std::to_string(u) + " does not fit in int64");
      x = static_cast<int64_t>(u);
    }
    out.data[i] = x;
  }
  return out;
}

void write_npy_float(const std::string& path, const std::vector<int64_t>& shape, const float* data,
                     const std::string& arg) {
  write_array(path, shape, data, "<f4", arg);
}

uint64_t npy_file_bytes(const std::vector<int64_t>& shape, size_t item_bytes) {
  uint64_t data = 0;
  const std::string head = checked_header(shape, item_bytes, item_bytes == 8 ? "<f8" : "<f4", "npy", &data);
  if (data > std::numeric_limits<uint64_t>::max() - head.size()) fail("npy", "shape " + format_shape(shape) + " is too large");
  return head.size() + data;
}

void add_npy_float(AtomicFileSet& set, const std::string& path, const std::vector<int64_t>& shape, const float* data,
                   const std::string& arg) {
  uint64_t n = 0;
  std::string head = checked_header(shape, sizeof(float), "<f4", label_of(arg, path), &n);
  set.add(path, arg, std::move(head), data, n);
}

void write_npy_double(const std::string& path, const std::vector<int64_t>& shape, const double* data,
                      const std::string& arg) {
  write_array(path, shape, data, "<f8", arg);
}

}  // namespace diffscope
