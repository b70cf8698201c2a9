// io_test_util.h — helpers for the file-reader tests: a temporary folder, and a builder of .safetensors
// images (well-formed or deliberately broken) written byte by byte, independent of the reader under test.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/arg_error.h"
#include "base/errors.h"
#include "cli/cli_util.h"

namespace diffscope::test {

// A fresh folder under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "diffscope-io-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    m_path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
  std::string file(const std::string& name) const { return m_path + "/" + name; }
  const std::string& path() const { return m_path; }
  // Names of the entries in the folder (to check that nothing partial was left).
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(m_path)) out.push_back(e.path().filename().string());
    return out;
  }

 private:
  std::string m_path;
};

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw std::runtime_error("cannot write " + path);
}

inline std::string le_u64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}

template <typename T>
std::string raw_bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Builds a safetensors image: tensors are laid out one after the other in insertion order unless an
// explicit [begin, end] is given.
class StBuilder {
 public:
  StBuilder& add(const std::string& name, const std::string& dtype, std::vector<int64_t> shape, const std::string& bytes) {
    const uint64_t begin = m_data.size();
    m_data += bytes;
    return add_at(name, dtype, std::move(shape), begin, m_data.size());
  }
  StBuilder& add_f32(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
    return add(name, "F32", std::move(shape), raw_bytes(v));
  }
  StBuilder& add_f64(const std::string& name, std::vector<int64_t> shape, const std::vector<double>& v) {
    return add(name, "F64", std::move(shape), raw_bytes(v));
  }
  // An entry with explicit offsets into the data section (which `extra_data` can grow).
  StBuilder& add_at(const std::string& name, const std::string& dtype, std::vector<int64_t> shape, uint64_t begin,
                    uint64_t end) {
    m_header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
    return *this;
  }
  StBuilder& extra_data(const std::string& bytes) {
    m_data += bytes;
    return *this;
  }
  StBuilder& meta(const std::string& k, const std::string& v) {
    m_header["__metadata__"][k] = v;
    return *this;
  }
  StBuilder& pad_header(size_t spaces) {
    m_pad = spaces;
    return *this;
  }
  nlohmann::json& header() { return m_header; }
  std::string build() const {
    const std::string h = m_header.dump() + std::string(m_pad, ' ');
    return le_u64(h.size()) + h + m_data;
  }
  std::string write(const std::string& path) const {
    write_bytes(path, build());
    return path;
  }

 private:
  nlohmann::json m_header = nlohmann::json::object();
  std::string m_data;
  size_t m_pad = 0;
};

// A complete eps-network of the given sizes with every weight a distinct, exactly representable value
// (W[i][j] = base + 0.125 * (i * cols + j) / 64), stored F32 in (out, in) layout.
inline std::vector<float> ramp(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + 0.125f * static_cast<float>(i) / 64.0f;
  return v;
}
inline StBuilder eps_net_builder(int64_t dim, int64_t hidden) {
  StBuilder b;
  b.add_f32("eps_net.0.weight", {hidden, dim + 1}, ramp(hidden * (dim + 1), 1.0f))
      .add_f32("eps_net.0.bias", {hidden}, ramp(hidden, 2.0f))
      .add_f32("eps_net.2.weight", {hidden, hidden}, ramp(hidden * hidden, 3.0f))
      .add_f32("eps_net.2.bias", {hidden}, ramp(hidden, 4.0f))
      .add_f32("eps_net.4.weight", {dim, hidden}, ramp(dim * hidden, 5.0f))
      .add_f32("eps_net.4.bias", {dim}, ramp(dim, 6.0f));
  return b;
}

// A model whose run overflows midway (SEMANTICS §9), written from the file format: dim 2, hidden 1, the network's
// input [x0, x1, t/T] (SEMANTICS §2, T = 1000 from the default schedule):
//   h1 = silu(-1 * t/T + 0.0505)   positive for t <= 50, negative for t >= 51
//   h2 = silu(1e30 * h1)           1e30 h1 (~2.5e26 at t = 50) when h1 > 0; -0 when h1 < 0 (sigmoid(-2.5e26) = 0)
//   eps = 1e30 * h2                inf in float32 for t <= 50, 0 for t >= 51, whatever x
inline std::string write_overflowing_model(const std::string& path) {
  StBuilder b;
  b.add_f32("eps_net.0.weight", {1, 3}, {0.f, 0.f, -1.f}).add_f32("eps_net.0.bias", {1}, {0.0505f})
      .add_f32("eps_net.2.weight", {1, 1}, {1e30f}).add_f32("eps_net.2.bias", {1}, {0.f})
      .add_f32("eps_net.4.weight", {2, 1}, {1e30f, 1e30f}).add_f32("eps_net.4.bias", {2}, {0.f, 0.f});
  return b.write(path);
}

// Runs `f` and returns the InvalidInput message, failing the test if nothing (or something else) is thrown.
// The message of the InvalidInput `f` throws as the CLI prints it: an ArgumentError's argument spelled as its flag.
template <class F>
std::string cli_error_message(F&& f) {
  try {
    f();
  } catch (const diffscope::ArgumentError& e) {
    return e.message(diffscope::cli::cli_flag);
  } catch (const diffscope::InvalidInput& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected InvalidInput, nothing was thrown";
  return "";
}

template <typename F>
std::string invalid_input_message(F&& f) {
  try {
    f();
  } catch (const diffscope::InvalidInput& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected InvalidInput, got another exception: " << e.what();
    return "";
  }
  ADD_FAILURE() << "expected InvalidInput, nothing was thrown";
  return "";
}

// int64 .npy (the writer in formats/npy.h writes floats only).
inline void write_npy_i64(const std::string& path, const std::vector<int64_t>& v) {
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': (" + std::to_string(v.size()) + ",), }";
  header += std::string(64 - (10 + header.size() + 1) % 64, ' ') + "\n";
  std::string bytes = std::string("\x93NUMPY\x01\x00", 8);
  bytes += static_cast<char>(header.size() & 0xff);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header + raw_bytes(v);
  write_bytes(path, bytes);
}

}  // namespace diffscope::test
