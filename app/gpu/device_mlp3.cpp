// device_mlp3.cpp — DeviceMlp3::upload.
#include "gpu/device_mlp3.h"

#include <vector>

#include "gpu/cuda_check.h"
#include "gpu/weight_layouts.h"
#include "kernels/shared/frag_pack.h"

namespace diffscope::gpu {

void DeviceMlp3::upload(const Mlp3Weights& w, cudaStream_t s) {
  const bool same = m_have && m_host.d0 == w.d0 && m_host.d1 == w.d1 && m_host.d2 == w.d2 && m_host.d3 == w.d3 &&
                    m_host.W1 == w.W1 && m_host.W2 == w.W2 && m_host.W3 == w.W3;
  if (same) return;
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));
  m_host = w;
  const int d[4] = {w.d0, w.d1, w.d2, w.d3};
  const std::vector<float>* W[3] = {&m_host.W1, &m_host.W2, &m_host.W3};
  kernels::DeviceMlp3& dm = m_view;
  dm = kernels::DeviceMlp3{};
  dm.d0 = w.d0, dm.d1 = w.d1, dm.d2 = w.d2, dm.d3 = w.d3;
  const bool tc = kernels::mlp3_tc_shape(w.d0, w.d1, w.d2, w.d3);
  for (int l = 0; l < 3; ++l) {
    const int out = d[l + 1], in = d[l];
    m_W[l].copy_from_host(*W[l], s);
    std::vector<float> t = transpose(*W[l], out, in);
    m_WT[l].copy_from_host(t, s);
    std::vector<uint16_t> h = to_bf16(*W[l]), g = to_f16(*W[l]);
    m_Wh[l].copy_from_host(h, s);
    m_Wg[l].copy_from_host(g, s);
    dm.W_f16[l] = m_Wg[l].data();
    if (tc) {
      using kernels::FragType;
      std::vector<uint32_t> pb = kernels::pack_fragments(W[l]->data(), out, in, in, FragType::Bf16);
      std::vector<uint32_t> pt = kernels::pack_fragments(W[l]->data(), out, in, in, FragType::Tf32);
      std::vector<uint32_t> ph = kernels::pack_fragments(W[l]->data(), out, in, in, FragType::F16);
      m_fb[l].copy_from_host(pb, s);
      m_ft[l].copy_from_host(pt, s);
      m_fh[l].copy_from_host(ph, s);
      CUDA_CHECK_THROW(cudaStreamSynchronize(s));
      dm.f_bf16[l] = m_fb[l].data();
      dm.f_tf32[l] = m_ft[l].data();
      dm.f_f16[l] = m_fh[l].data();
    }
    CUDA_CHECK_THROW(cudaStreamSynchronize(s));  // the host vectors die at scope end
  }
  dm.W1 = m_W[0].data(), dm.W2 = m_W[1].data(), dm.W3 = m_W[2].data();
  dm.W1T = m_WT[0].data(), dm.W2T = m_WT[1].data(), dm.W3T = m_WT[2].data();
  dm.W_bf16[0] = m_Wh[0].data(), dm.W_bf16[1] = m_Wh[1].data(), dm.W_bf16[2] = m_Wh[2].data();
  m_have = true;
}

}  // namespace diffscope::gpu
