// fault_injection.h — named faults that tests switch on from outside the process, for failures a
// test machine cannot produce on demand. DIFFSCOPE_FAULT is a comma list of names; read once per process.
//   interop_register   cudaGraphicsGLRegisterBuffer fails (gpu/interop_compute.cpp): staging must take over
// Never set in normal use; the faults a machine can produce for real (full disk, unwritable paths, truncated
// files, out of GPU memory) are produced for real by the tests instead.
#pragma once
#include <string>

namespace diffscope {

// True when `name` is one of the comma-separated names in $DIFFSCOPE_FAULT.
bool fault_injected(const std::string& name);

}  // namespace diffscope
