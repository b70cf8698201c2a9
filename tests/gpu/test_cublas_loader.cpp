// test_cublas_loader.cpp — cuBLAS is loaded at run time (app/gpu/cublas_loader.cpp): the executable does not
// link it (the CPU fallback starts without it), and where the library is installed every entry point the
// unfused baseline calls is bound. Needs no GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpu/cublas_loader.h"

TEST(CublasLoader, BindsEveryEntryPointWhereTheLibraryIsInstalled) {
  void* lib = dlopen(DIFFSCOPE_TEST_CUBLAS_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) GTEST_SKIP() << DIFFSCOPE_TEST_CUBLAS_SONAME " is not installed on the loader's path";
  dlclose(lib);
  EXPECT_EQ(diffscope::gpu::cublas_load_error(), "");
}

TEST(CublasLoader, TheExecutableDoesNotLinkCudaLibraries) {
  const char* bin = std::getenv("DIFFSCOPE_BIN");
  ASSERT_NE(bin, nullptr);
  const std::string cmd = std::string("readelf -d '") + bin + "' 2>/dev/null | grep NEEDED";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string needed;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) needed += buf;
  pclose(p);
  ASSERT_NE(needed.find("libc.so.6"), std::string::npos) << "readelf output: " << needed;
  EXPECT_EQ(needed.find("libcublas"), std::string::npos) << needed;
  EXPECT_EQ(needed.find("libcudart"), std::string::npos) << needed;
  EXPECT_EQ(needed.find("libcuda."), std::string::npos) << needed;
}
