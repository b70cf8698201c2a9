// guidance_checks.h — the backend check of class-conditional networks outside a run plan (`denoise`, SEMANTICS §2);
// a run plan's class and guidance checks are run_plan.h's check_guidance.
#pragma once
#include <string>

#include "model/model.h"

namespace diffscope {

// A class-conditional network on the CUDA backend (gpu) is refused: the kernels do not add the class's row yet.
// ArgumentError (Arg::Backend) with the valid value cpu.
void check_backend_classes(const DiffusionModel& model, bool gpu);

}  // namespace diffscope
