// device_mixture.h — DeviceMixture: an analytic Gaussian-mixture model (SEMANTICS §6) resident on the device as
// kernels/mixture/mixture_kernels.h reads it (means, variances, log weights as float).
#pragma once
#include <cuda_runtime.h>

#include "gpu/gpu_buffer.h"
#include "kernels/mixture/mixture_kernels.h"
#include "model/gaussian_mixture.h"

namespace diffscope::gpu {

class DeviceMixture {
 public:
  // Uploads g (the caller checks kernels::mixture_kernel_supported) and waits on `s`.
  void upload(const GaussianMixture& g, cudaStream_t s);
  const kernels::DeviceMixture& view() const { return m_view; }

 private:
  GpuBuffer<float> m_means, m_var, m_logw;
  kernels::DeviceMixture m_view;
};

}  // namespace diffscope::gpu
