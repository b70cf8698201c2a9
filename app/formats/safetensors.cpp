// safetensors.cpp — reading and validating .safetensors files (SEMANTICS §6); dtype conversion.
#include "formats/safetensors.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <set>
#include <sys/stat.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "platform/file_read.h"

namespace diffscope {
namespace {

using nlohmann::json;

struct DtypeBits {
  const char* name;
  size_t bits;
};
// The dtypes of the safetensors format (its `Dtype` enum and `bitsize()`, safetensors/src/tensor.rs, 0.6 and
// later, with the FNUZ float8 types of 0.8), sizes in bits. Only F64/F32/F16/BF16 can be read as numbers; the
// others are known so that an unused tensor of such a dtype is validated and listed, not refused.
constexpr DtypeBits kDtypes[] = {
    {"BOOL", 8},     {"F4", 4},           {"F6_E2M3", 6},      {"F6_E3M2", 6}, {"U8", 8},   {"I8", 8},
    {"F8_E5M2", 8},  {"F8_E4M3", 8},      {"F8_E8M0", 8},      {"F8_E4M3FNUZ", 8}, {"F8_E5M2FNUZ", 8},
    {"I16", 16},     {"U16", 16},         {"F16", 16},         {"BF16", 16},   {"I32", 32}, {"U32", 32},
    {"F32", 32},     {"C64", 64},         {"F64", 64},         {"I64", 64},    {"U64", 64},
};

// The JSON header of a valid file nests three levels deep ({name: {shape: [..]}}); anything much deeper is
// malformed, and refusing it early keeps a hostile header from costing deep recursion.
constexpr int kMaxJsonDepth = 8;

[[noreturn]] void fail(const std::string& label, const std::string& what) {
  throw InvalidInput(label + ": " + what);
}

uint64_t read_le_u64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// Reads a little-endian element of `n` bytes at p (n <= 8).
template <typename T>
T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

}  // namespace

std::string format_shape(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

size_t safetensors_dtype_bits(const std::string& dtype) {
  for (const auto& d : kDtypes)
    if (dtype == d.name) return d.bits;
  return 0;
}

bool safetensors_tensor_bytes(uint64_t numel, size_t bits, uint64_t* bytes) {
  // numel * bits / 8 rounded up, without forming numel * bits: (numel / 8) * bits + ceil((numel % 8) * bits / 8).
  const uint64_t whole = numel / 8, rest = numel % 8;
  if (bits != 0 && whole > (std::numeric_limits<uint64_t>::max() - bits) / bits) return false;
  *bytes = whole * bits + (rest * bits + 7) / 8;
  return true;
}

float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float32.
    float v = std::ldexp(static_cast<float>(mant), -24);
    std::memcpy(&bits, &v, 4);
    bits |= sign;
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf or nan
  } else {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);  // rebias 15 -> 127
  }
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

float bfloat16_to_float(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float out;
  std::memcpy(&out, &bits, 4);
  return out;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.m_label = path;
  f.m_bytes = read_file_bytes(path, path, "model file");
  f.parse();
  return f;
}

SafetensorsFile SafetensorsFile::from_bytes(std::string bytes, const std::string& label) {
  SafetensorsFile f;
  f.m_label = label;
  f.m_bytes = std::move(bytes);
  f.parse();
  return f;
}

namespace {

// The JSON header of n bytes at `first`, parsed with guards: nesting depth, and duplicate keys at every level
// (the format forbids them; a DOM parser silently keeps the last value, which would let a second `data_offsets`
// or a second entry for one tensor pass unnoticed). Throws InvalidInput naming `L`.
json parse_header(const std::string& L, const char* first, uint64_t n) {
  try {
    // One set of keys per open object; `path` holds the key that opened each level, so the message names the
    // tensor (or __metadata__) and the repeated key.
    std::vector<std::set<std::string>> keys;
    std::vector<std::string> path;
    json::parser_callback_t guard = [&L, &keys, &path](int depth, json::parse_event_t event, json& parsed) {
      if (depth > kMaxJsonDepth) fail(L, "JSON header nests deeper than " + std::to_string(kMaxJsonDepth));
      switch (event) {
        case json::parse_event_t::object_start: keys.emplace_back(); break;
        case json::parse_event_t::object_end:
          if (!keys.empty()) keys.pop_back();
          break;
        case json::parse_event_t::key: {
          const std::string key = parsed.get<std::string>();
          path.resize(static_cast<size_t>(std::max(depth, 1)));
          path[static_cast<size_t>(std::max(depth, 1)) - 1] = key;
          if (!keys.empty() && !keys.back().insert(key).second) {
            if (depth <= 1) fail(L, "header names tensor '" + key + "' twice (duplicate keys are not allowed)");
            const std::string& owner = path[0];
            fail(L, (owner == "__metadata__" ? std::string("__metadata__") : "tensor '" + owner + "'") +
                        ": key '" + key + "' appears twice (duplicate keys are not allowed)");
          }
          break;
        }
        default: break;
      }
      return true;
    };
    return json::parse(first, first + n, guard);
  } catch (const json::exception& e) {
    fail(L, std::string("header is not valid JSON (") + e.what() + ")");
  }
}

// The entry of tensor `name` ({dtype, shape, data_offsets}), checked against the data section of `data_size`
// bytes: its shape's size, its offsets inside the section and, for a known dtype, their span. Throws InvalidInput.
TensorInfo parse_tensor_entry(const std::string& L, const std::string& name, const json& v, uint64_t data_size) {
  const std::string T = "tensor '" + name + "'";
  if (!v.is_object()) fail(L, T + ": entry is not an object with dtype, shape, data_offsets");
  const auto dt = v.find("dtype");
  const auto sh = v.find("shape");
  const auto off = v.find("data_offsets");
  if (dt == v.end() || !dt->is_string()) fail(L, T + ": missing or non-string 'dtype'");
  if (sh == v.end() || !sh->is_array()) fail(L, T + ": missing or non-array 'shape'");
  if (off == v.end() || !off->is_array() || off->size() != 2)
    fail(L, T + ": 'data_offsets' must be an array [begin, end]");

  TensorInfo t;
  t.name = name;
  t.dtype = dt->get<std::string>();
  t.dtype_bits = safetensors_dtype_bits(t.dtype);  // 0: a dtype this reader does not know
  uint64_t numel = 1;
  bool overflow = false;
  for (const json& d : *sh) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(L, T + ": shape entry " + d.dump() + " is not a non-negative integer");
    const uint64_t di = d.get<uint64_t>();
    t.shape.push_back(static_cast<int64_t>(di));
    if (di != 0 && numel > std::numeric_limits<uint64_t>::max() / di) overflow = true;
    numel *= di;
  }
  uint64_t want = 0;
  if (overflow || !safetensors_tensor_bytes(numel, t.dtype_bits, &want))
    fail(L, T + ": shape " + format_shape(t.shape) + " is too large");
  t.numel = numel;
  for (const json& o : *off)
    if (!o.is_number_unsigned()) fail(L, T + ": data_offsets entry " + o.dump() + " is not a non-negative integer");
  t.begin = (*off)[0].get<uint64_t>();
  t.end = (*off)[1].get<uint64_t>();
  if (t.begin > t.end || t.end > data_size)
    fail(L, T + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                "] lie outside the data section of " + std::to_string(data_size) + " bytes");
  if (t.dtype_bits != 0 && t.end - t.begin != want)  // an unknown dtype's size is not known: offsets only
    fail(L, T + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] hold " +
                std::to_string(t.end - t.begin) + " bytes, but shape " + format_shape(t.shape) + " of " + t.dtype +
                " needs " + std::to_string(want));
  return t;
}

// No two non-empty tensors may share a byte: InvalidInput naming the first overlapping pair by offset.
void check_no_overlap(const std::string& L, const std::vector<TensorInfo>& tensors) {
  std::vector<const TensorInfo*> by_offset;
  for (const auto& t : tensors)
    if (t.end > t.begin) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->begin < b->begin; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& a = *by_offset[i - 1];
    const TensorInfo& b = *by_offset[i];
    if (b.begin < a.end)
      fail(L, "tensors '" + a.name + "' [" + std::to_string(a.begin) + ", " + std::to_string(a.end) + "] and '" +
                  b.name + "' [" + std::to_string(b.begin) + ", " + std::to_string(b.end) + "] overlap");
  }
}

}  // namespace

void SafetensorsFile::parse() {
  const std::string& L = m_label;
  const uint64_t file_size = m_bytes.size();
  if (file_size < 8)
    fail(L, "file is " + std::to_string(file_size) +
                " bytes; a .safetensors file starts with an 8-byte header length");
  const uint64_t n = read_le_u64(reinterpret_cast<const unsigned char*>(m_bytes.data()));
  if (n < 2 || n > file_size - 8 || n > kMaxSafetensorsHeaderBytes)
    fail(L, "header length " + std::to_string(n) + " is invalid for a file of " + std::to_string(file_size) +
                " bytes (valid: 2 to " + std::to_string(std::min(file_size - 8, kMaxSafetensorsHeaderBytes)) +
                "); not a .safetensors file?");
  m_data_start = 8 + n;
  const uint64_t data_size = file_size - m_data_start;

  const json header = parse_header(L, m_bytes.data() + 8, n);
  if (!header.is_object()) fail(L, "header is JSON but not an object");

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    const json& v = it.value();
    if (name == "__metadata__") {
      if (!v.is_object()) fail(L, "__metadata__ is not an object of strings");
      for (auto m = v.begin(); m != v.end(); ++m) {
        if (!m->is_string()) fail(L, "__metadata__ value of '" + m.key() + "' is not a string");
        m_metadata[m.key()] = m->get<std::string>();
      }
      continue;
    }
    m_tensors.push_back(parse_tensor_entry(L, name, v, data_size));
  }

  check_no_overlap(L, m_tensors);
  std::sort(m_tensors.begin(), m_tensors.end(),
            [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
}

const TensorInfo* SafetensorsFile::find(const std::string& name) const {
  auto it = std::lower_bound(m_tensors.begin(), m_tensors.end(), name,
                             [](const TensorInfo& t, const std::string& n) { return t.name < n; });
  return (it != m_tensors.end() && it->name == name) ? &*it : nullptr;
}

const TensorInfo& SafetensorsFile::require(const std::string& name) const {
  const TensorInfo* t = find(name);
  if (!t) fail(m_label, "missing tensor '" + name + "'");
  return *t;
}

const unsigned char* SafetensorsFile::tensor_bytes(const TensorInfo& t) const {
  return reinterpret_cast<const unsigned char*>(m_bytes.data()) + m_data_start + t.begin;
}

std::vector<float> SafetensorsFile::read_float(const std::string& name) const {
  const TensorInfo& t = require(name);
  const unsigned char* p = tensor_bytes(t);
  std::vector<float> out(t.numel);
  if (t.dtype == "F32") {
    if (t.numel) std::memcpy(out.data(), p, t.numel * 4);
  } else if (t.dtype == "F64") {
    for (uint64_t i = 0; i < t.numel; ++i) out[i] = static_cast<float>(load<double>(p + 8 * i));
  } else if (t.dtype == "F16") {
    for (uint64_t i = 0; i < t.numel; ++i) out[i] = half_to_float(load<uint16_t>(p + 2 * i));
  } else if (t.dtype == "BF16") {
    for (uint64_t i = 0; i < t.numel; ++i) out[i] = bfloat16_to_float(load<uint16_t>(p + 2 * i));
  } else {
    fail(m_label, "tensor '" + name + "' has dtype " + t.dtype + "; valid: F64, F32, F16, BF16");
  }
  return out;
}

std::vector<double> SafetensorsFile::read_double_schedule(const std::string& name) const {
  const TensorInfo& t = require(name);
  const unsigned char* p = tensor_bytes(t);
  std::vector<double> out(t.numel);
  if (t.dtype == "F64") {
    if (t.numel) std::memcpy(out.data(), p, t.numel * 8);
  } else if (t.dtype == "F32") {
    for (uint64_t i = 0; i < t.numel; ++i) out[i] = load<float>(p + 4 * i);
  } else if (t.dtype == "F16" || t.dtype == "BF16") {
    fail(m_label, "schedule tensor '" + name + "' has dtype " + t.dtype +
                      "; valid: F64, F32 (half precision rounds alphas_cumprod to 1 at small t, which makes "
                      "coef_eps infinite)");
  } else {
    fail(m_label, "schedule tensor '" + name + "' has dtype " + t.dtype + "; valid: F64, F32");
  }
  return out;
}

}  // namespace diffscope
