// device_eps_net.cpp — DeviceEpsNet::upload: the network's layouts (kernels/kernels.h DeviceNet) built on the host.
#include "gpu/device_eps_net.h"

#include <cstring>
#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/weight_layouts.h"
#include "kernels/shared/frag_pack.h"

namespace diffscope::gpu {

bool DeviceEpsNet::upload(const EpsNet& n, cudaStream_t s) {
  const bool same = m_have && m_host.dim == n.dim && m_host.hidden == n.hidden && m_host.W1 == n.W1 &&
                    m_host.W2 == n.W2 && m_host.W3 == n.W3 && m_host.b1 == n.b1 && m_host.b2 == n.b2 &&
                    m_host.b3 == n.b3;
  if (same) return false;
  n.validate();
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));  // previous uploads may still read the old host copies
  m_host = n;
  const int dim = n.dim, H = n.hidden;
  m_W1.copy_from_host(n.W1, s);
  m_b1.copy_from_host(n.b1, s);
  m_W2.copy_from_host(n.W2, s);
  m_b2.copy_from_host(n.b2, s);
  m_W3.copy_from_host(n.W3, s);
  m_b3.copy_from_host(n.b3, s);
  std::vector<float> t1 = transpose(n.W1, H, dim + 1), t2 = transpose(n.W2, H, H), t3 = transpose(n.W3, dim, H);
  m_W1T.copy_from_host(t1, s);
  m_W2T.copy_from_host(t2, s);
  m_W3T.copy_from_host(t3, s);
  std::vector<uint16_t> h1 = to_bf16(n.W1), h2 = to_bf16(n.W2), h3 = to_bf16(n.W3);
  m_W1h.copy_from_host(h1, s);
  m_W2h.copy_from_host(h2, s);
  m_W3h.copy_from_host(h3, s);
  std::vector<uint16_t> g1 = to_f16(n.W1), g2 = to_f16(n.W2), g3 = to_f16(n.W3);
  m_W1g.copy_from_host(g1, s);
  m_W2g.copy_from_host(g2, s);
  m_W3g.copy_from_host(g3, s);
  kernels::DeviceNet& d = m_view;
  d = kernels::DeviceNet{};
  d.dim = dim;
  d.hidden = H;
  d.W1 = m_W1.data(), d.b1 = m_b1.data(), d.W2 = m_W2.data(), d.b2 = m_b2.data(), d.W3 = m_W3.data(),
  d.b3 = m_b3.data();
  d.W1T = m_W1T.data(), d.W2T = m_W2T.data(), d.W3T = m_W3T.data();
  d.W1_bf16 = m_W1h.data(), d.W2_bf16 = m_W2h.data(), d.W3_bf16 = m_W3h.data();
  d.W1_f16 = m_W1g.data(), d.W2_f16 = m_W2g.data(), d.W3_f16 = m_W3g.data();
  if (kernels::denoise_tc_shape(dim, H)) {
    // Padded x width: 16 for dim <= 16, else 64 (the instantiations of denoise_tc.cu).
    const int kx = dim <= 16 ? 16 : 64;
    using kernels::FragType;
    for (FragType ft : {FragType::Bf16, FragType::Tf32, FragType::F16}) {
      std::vector<uint32_t> p1;
      std::vector<uint32_t> p2 = kernels::pack_fragments(n.W2.data(), H, H, H, ft);
      // W3 padded to kx output rows.
      std::vector<float> w3p(static_cast<size_t>(kx) * H, 0.f);
      std::memcpy(w3p.data(), n.W3.data(), sizeof(float) * n.W3.size());
      std::vector<uint32_t> p3 = kernels::pack_fragments(w3p.data(), kx, H, H, ft);
      // W1 x-part padded to kx inputs.
      std::vector<float> w1p(static_cast<size_t>(H) * kx, 0.f);
      for (int r = 0; r < H; ++r)
        for (int c = 0; c < dim; ++c) w1p[static_cast<size_t>(r) * kx + c] = n.W1[static_cast<size_t>(r) * (dim + 1) + c];
      p1 = kernels::pack_fragments(w1p.data(), H, kx, kx, ft);
      GpuBuffer<uint32_t>* f = ft == FragType::Bf16 ? m_fb : ft == FragType::Tf32 ? m_ft : m_fh;
      f[0].copy_from_host(p1, s);
      f[1].copy_from_host(p2, s);
      f[2].copy_from_host(p3, s);
      CUDA_CHECK_THROW(cudaStreamSynchronize(s));  // host vectors die at scope end
    }
    d.f1_bf16 = m_fb[0].data(), d.f2_bf16 = m_fb[1].data(), d.f3_bf16 = m_fb[2].data();
    d.f1_tf32 = m_ft[0].data(), d.f2_tf32 = m_ft[1].data(), d.f3_tf32 = m_ft[2].data();
    d.f1_f16 = m_fh[0].data(), d.f2_f16 = m_fh[1].data(), d.f3_f16 = m_fh[2].data();
  }
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  m_have = true;
  return true;
}

void DeviceEpsNet::clear(int dim) {
  m_have = false;
  m_host = EpsNet{};
  m_view = kernels::DeviceNet{};
  m_view.dim = dim;
}

}  // namespace diffscope::gpu
