// pdl.cuh — programmatic dependent launch (PDL; CUDA programming guide, "Programmatic Dependent Launch and
// Synchronization", sm_90+). A kernel launched with launch_pdl may start while the previous kernel of its stream
// is still running: it loads what no kernel writes (the weights: written only by cudaMemcpy, which keeps full
// stream order) before pdl_wait(), and reads or writes anything a previous kernel may touch (x, frames, y, step
// tables) only after it. pdl_wait() returns once every earlier grid has completed and its writes are visible.
// Each kernel calls pdl_launch_dependents() at its start so the next call's prologue overlaps its own run.
// Whether a launch uses it is the plan's (plan/kernel_plan.h: sm_90+ and the option `pdl`); if the launch with the
// attribute fails it is retried as a plain launch. On older architectures the device functions are no-ops
// (griddepcontrol is sm_90+ PTX).
#pragma once
#include <cuda_runtime.h>

#include <utility>

namespace diffscope::kernels {

__device__ __forceinline__ void pdl_launch_dependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, smem, s>>>(args...) with the PDL attribute when `pdl`, plus an optional cluster
// dimension (cluster_x > 0). Returns the launch's error code.
template <class... KArgs, class... Args>
cudaError_t launch_pdl(void (*kernel)(KArgs...), dim3 grid, dim3 block, size_t smem, cudaStream_t s, int cluster_x,
                       bool pdl, Args&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cudaLaunchAttribute attr[2];
  int n = 0;
  if (cluster_x > 0) {
    attr[n].id = cudaLaunchAttributeClusterDimension;
    attr[n].val.clusterDim.x = cluster_x;
    attr[n].val.clusterDim.y = 1;
    attr[n].val.clusterDim.z = 1;
    ++n;
  }
  if (pdl) {
    attr[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr[n].val.programmaticStreamSerializationAllowed = 1;
    ++n;
  }
  cfg.attrs = attr;
  cfg.numAttrs = n;
  cudaError_t e = cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
  if (e != cudaSuccess && pdl) {  // retry as a plain launch
    (void)cudaGetLastError();
    cfg.numAttrs = n - 1;
    e = cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...);
  }
  return e;
}

}  // namespace diffscope::kernels
