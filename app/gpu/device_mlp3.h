// device_mlp3.h — DeviceMlp3: the 3-layer MLP (SEMANTICS §5) resident on the device in the layouts the kernels
// read (fp32, transposed fp32, bf16, tensor-core fragments where the shape has the fast path); its view is
// kernels::DeviceMlp3.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/gpu_buffer.h"
#include "kernels/kernels.h"
#include "model/model.h"

namespace diffscope::gpu {

class DeviceMlp3 {
 public:
  // Uploads w unless these weights are resident already; waits on `s` before and after an upload.
  void upload(const Mlp3Weights& w, cudaStream_t s);
  bool loaded() const { return m_have; }
  const kernels::DeviceMlp3& view() const { return m_view; }

 private:
  bool m_have = false;
  Mlp3Weights m_host;  // the resident weights, to skip an upload of the same ones
  GpuBuffer<float> m_W[3], m_WT[3];
  GpuBuffer<uint32_t> m_fb[3], m_ft[3], m_fh[3];  // fragments: bf16, tf32, fp16
  GpuBuffer<uint16_t> m_Wh[3], m_Wg[3];             // bf16 and fp16 copies
  kernels::DeviceMlp3 m_view;
};

}  // namespace diffscope::gpu
