// device_eps_net.h — DeviceEpsNet: the eps-network (SEMANTICS §2) resident on the device in every layout the
// kernels read (fp32, transposed fp32, bf16, fp16, tensor-core fragments); its view is kernels::DeviceNet.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "gpu/gpu_buffer.h"
#include "kernels/kernels.h"
#include "model/model.h"

namespace diffscope::gpu {

class DeviceEpsNet {
 public:
  // Validates `n` (EpsNet::validate: InvalidInput) and uploads it unless these weights are resident already;
  // returns whether it uploaded. An upload waits on `s` before (earlier launches may read the old weights) and
  // after (the host staging copies). ResourceUnavailable when the device is out of memory.
  bool upload(const EpsNet& n, cudaStream_t s);
  // Drops the resident weights (an analytic model of dimension `dim` took their place): view() is {dim} only and
  // the next upload copies again. The device memory is kept for reuse.
  void clear(int dim);
  const kernels::DeviceNet& view() const { return m_view; }

 private:
  bool m_have = false;
  EpsNet m_host;  // the resident weights, to skip an upload of the same network
  GpuBuffer<float> m_W1, m_b1, m_W2, m_b2, m_W3, m_b3, m_W1T, m_W2T, m_W3T;
  GpuBuffer<uint32_t> m_fb[3], m_ft[3], m_fh[3];  // fragments of W1, W2, W3: bf16, tf32, fp16
  GpuBuffer<uint16_t> m_W1h, m_W2h, m_W3h, m_W1g, m_W2g, m_W3g;  // bf16 and fp16 copies
  kernels::DeviceNet m_view;
};

}  // namespace diffscope::gpu
