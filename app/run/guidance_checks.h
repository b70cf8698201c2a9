// guidance_checks.h — the backend check of class-conditional networks outside a run plan (`denoise`, SEMANTICS §2);
// a run plan's class and guidance checks are run_plan.h's check_guidance.
#pragma once
#include <string>

#include "model/model.h"

namespace diffscope {

// A class-conditional network on the CUDA backend (gpu) is refused: the kernels do not add the class's row yet.
// InvalidInput naming `backend_arg` as the front end spells it ("--backend", "backend") and the valid value.
void check_backend_classes(const DiffusionModel& model, bool gpu, const std::string& backend_arg);

}  // namespace diffscope
