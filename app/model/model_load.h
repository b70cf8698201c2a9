// model_load.h — building models from an already-validated SafetensorsFile (what load_diffusion_model and
// load_mlp3 do after reading the file; exposed for tests and fuzzing, which work on in-memory images).
#pragma once
#include "formats/safetensors.h"
#include "model/model.h"

namespace diffscope {

// The eps-network, schedule, metadata and data_samples of SEMANTICS §1, §2, §6 from `file`.
// Throws InvalidInput naming file.label(), the tensor, its shape and the expected shape.
DiffusionModel diffusion_model_from(const SafetensorsFile& file);

// What `info` shows of a file that may not load: the same build, but each refusal that leaves the rest readable
// (a parameterization that is not run, SEMANTICS §6; a missing or misshapen tensor; a bad schedule) is appended to
// `problems` (without the file's label) instead of thrown. The model is usable only when `problems` stays empty;
// otherwise its parts may be missing (schedule.T == 0 when the schedule could not be read, net.dim == 0 when no
// dimension could be read off the network's first layer).
DiffusionModel inspect_diffusion_model(const SafetensorsFile& file, std::vector<std::string>& problems);

// fc1/fc2/fc3.weight of SEMANTICS §5 from `file`; refuses fcN.bias and shapes that do not chain.
Mlp3Weights mlp3_from(const SafetensorsFile& file);

// Relative difference above which a schedule buffer stored in the file is reported as disagreeing with
// the float64 recomputation from betas (SEMANTICS §1).
constexpr double kScheduleWarnRelDiff = 1e-5;

}  // namespace diffscope
