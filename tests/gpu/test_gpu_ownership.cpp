// test_gpu_ownership.cpp — the GPU ownership: how a failed CUDA call becomes an exception
// (kernels/shared/cuda_error.h: out of memory is ResourceUnavailable, CLI exit 3; others std::runtime_error, exit 1),
// the general kernel's caller-owned workspace size (its layout by hand), the RAII owners on a device.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "base/errors.h"
#include "gpu/cublas_handle.h"
#include "gpu/cuda_check.h"
#include "gpu/pinned_buffer.h"
#include "gpu_test_util.h"
#include "kernels/kernels.h"
#include "kernels/shared/cuda_error.h"

namespace diffscope {
namespace {

TEST(GpuOwnership, OutOfMemoryIsResourceUnavailableAndOtherErrorsAreInternal) {
  try {
    kernels::check_cuda(cudaErrorMemoryAllocation, "cudaMalloc(workspace)");
    FAIL() << "no exception";
  } catch (const ResourceUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("out of GPU memory (cudaMalloc(workspace) failed: "), std::string::npos)
        << e.what();
  }
  try {
    kernels::check_cuda(cudaErrorInvalidValue, "cudaFuncSetAttribute");
    FAIL() << "no exception";
  } catch (const ResourceUnavailable& e) {
    FAIL() << "an invalid value is not a missing resource: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cudaFuncSetAttribute failed: "), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(kernels::check_cuda(cudaSuccess, "nothing"));
  // CUDA_CHECK_THROW (app/gpu) classifies the same way and names the file and the call.
  try {
    CUDA_CHECK_THROW(cudaErrorMemoryAllocation);
    FAIL() << "no exception";
  } catch (const ResourceUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("test_gpu_ownership.cpp:"), std::string::npos) << e.what();
  }
}

// The general kernel keeps each CTA's activations u (R, dim+1) | h1 (R, H) | h2 (R, H) in shared memory when
// 8 * rows-per-thread * (dim + 1 + 2H) floats fit in 96 KB (rows per thread 4, else 1); beyond that R = 8 rows per
// CTA in the caller's workspace: ceil(B / 8) CTAs of 8 * (dim + 1 + 2H) floats.
TEST(GpuOwnership, GeneralWorkspaceIsNeededOnlyBeyondSharedMemory) {
  EXPECT_EQ(kernels::denoise_general_workspace_floats(2, 256, 65536), 0u);   // 32 * 515 * 4 B = 65,920 B
  EXPECT_EQ(kernels::denoise_general_workspace_floats(64, 1024, 1000), 0u);  // 8 * 2113 * 4 B = 67,616 B
  // dim 2, H 2000: 8 * 4003 * 4 B = 128,096 B > 96 KB. B = 20: 3 CTAs x 8 rows x 4003 floats.
  EXPECT_EQ(kernels::denoise_general_workspace_floats(2, 2000, 20), size_t(3) * 8 * 4003);
  EXPECT_EQ(kernels::denoise_general_workspace_floats(2, 2000, 0), 0u);
}

TEST(GpuOwnership, PinnedBufferGrowsOnlyAndCublasHandleIsMadeOnce) {
  SKIP_WITHOUT_CUDA();
  gpu::PinnedBuffer p;
  p.reserve(100);
  char* first = p.data();
  ASSERT_NE(first, nullptr);
  p.reserve(50);  // smaller: kept
  EXPECT_EQ(p.data(), first);
  EXPECT_EQ(p.bytes(), 100u);
  p.reserve(4096);
  EXPECT_EQ(p.bytes(), 4096u);
  gpu::PinnedBuffer q = std::move(p);
  EXPECT_EQ(q.bytes(), 4096u);
  EXPECT_EQ(p.data(), nullptr);
  if (!gpu::cublas_load_error().empty()) GTEST_SKIP() << gpu::cublas_load_error();
  gpu::CublasHandle h;
  cublasHandle_t a = h.get("this test");
  EXPECT_EQ(h.get("this test"), a);
}

}  // namespace
}  // namespace diffscope
