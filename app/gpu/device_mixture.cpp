// device_mixture.cpp — DeviceMixture::upload: var = std^2, logw = log(weight), in float.
#include "gpu/device_mixture.h"

#include <cmath>
#include <vector>

#include "gpu/cuda_check.h"

namespace diffscope::gpu {

void DeviceMixture::upload(const GaussianMixture& g, cudaStream_t s) {
  std::vector<float> means(g.means.begin(), g.means.end()), var(g.K), logw(g.K);
  for (int k = 0; k < g.K; ++k) var[k] = static_cast<float>(g.stds[k] * g.stds[k]), logw[k] = std::log(g.weights[k]);
  m_means.copy_from_host(means, s);
  m_var.copy_from_host(var, s);
  m_logw.copy_from_host(logw, s);
  m_view = {g.K, g.dim, m_means.data(), m_var.data(), m_logw.data()};
  CUDA_CHECK_THROW(cudaStreamSynchronize(s));  // the host vectors die here
}

}  // namespace diffscope::gpu
