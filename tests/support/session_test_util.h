// session_test_util.h — a SamplingSession without GL: host memory standing in for the GL trajectory buffer.
#pragma once
#include <cstring>
#include <vector>

#include "run/compute_path.h"

namespace diffscope::test {

class HostTarget final : public TrajectoryBufferTarget {
 public:
  unsigned gl_buffer() const override { return 0; }
  size_t size_bytes() const override { return m_bytes.size(); }
  void resize(size_t bytes) override { m_bytes.assign(bytes, 0xFF); }
  void upload(size_t off, size_t n, const void* d) override { std::memcpy(m_bytes.data() + off, d, n); }
  void download(size_t off, size_t n, void* out) const override { std::memcpy(out, m_bytes.data() + off, n); }

 private:
  std::vector<unsigned char> m_bytes;
};

}  // namespace diffscope::test
