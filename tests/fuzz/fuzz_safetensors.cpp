// fuzz_safetensors.cpp — libFuzzer target for the .safetensors reader and the model loaders (issue 6):
// any input must either load or throw InvalidInput; a crash, a sanitizer report, another exception type
// (which aborts libFuzzer) or a loaded model that breaks its own invariants is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/errors.h"
#include "core/model.h"
#include "core/model_load.h"
#include "core/safetensors.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();  // an invariant of a successfully loaded file does not hold
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace diffscope;
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const SafetensorsFile f = SafetensorsFile::from_bytes(std::move(bytes), "fuzz.safetensors");
    for (const TensorInfo& t : f.tensors()) {
      check(t.end >= t.begin && t.end - t.begin == t.numel * t.dtype_bytes);
      try {
        check(f.read_float(t.name).size() == t.numel);
      } catch (const InvalidInput&) {
      }
      try {
        check(f.read_double_schedule(t.name).size() == t.numel);
      } catch (const InvalidInput&) {
      }
    }
    try {
      const DiffusionModel m = diffusion_model_from(f);
      m.net.validate();
      check(m.schedule.T >= 1 && static_cast<int>(m.schedule.coef_eps.size()) == m.schedule.T);
      check(m.data_samples.size() == static_cast<size_t>(m.n_data) * static_cast<size_t>(m.net.dim));
    } catch (const InvalidInput&) {
    }
    try {
      const Mlp3Weights w = mlp3_from(f);
      check(w.W1.size() == static_cast<size_t>(w.d1) * w.d0 && w.W2.size() == static_cast<size_t>(w.d2) * w.d1 &&
            w.W3.size() == static_cast<size_t>(w.d3) * w.d2);
    } catch (const InvalidInput&) {
    }
  } catch (const InvalidInput&) {
  }
  return 0;
}
