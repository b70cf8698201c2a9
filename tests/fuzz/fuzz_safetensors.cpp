// fuzz_safetensors.cpp — libFuzzer target for the .safetensors reader and the model loaders:
// any input must either load or throw InvalidInput; a crash, a sanitizer report, another exception type
// (which aborts libFuzzer) or a loaded model that breaks its own invariants is a bug.
// Two modes, chosen by the first byte: raw bytes (the whole container, JSON included), and a structured
// mode that builds a syntactically valid header from the input (names, dtypes, shapes tied to one dim and
// hidden, offsets contiguous or perturbed, metadata) so that the validation and model-loading code behind
// the JSON parser is reached often.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <fuzzer/FuzzedDataProvider.h>
#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "formats/safetensors.h"
#include "model/model.h"
#include "model/model_load.h"

namespace {

using namespace diffscope;

void check(bool ok) {
  if (!ok) std::abort();  // an invariant of a successfully loaded file does not hold
}

void exercise(std::string bytes) {
  try {
    const SafetensorsFile f = SafetensorsFile::from_bytes(std::move(bytes), "fuzz.safetensors");
    for (const TensorInfo& t : f.tensors()) {
      uint64_t want = 0;
      check(t.end >= t.begin && safetensors_tensor_bytes(t.numel, t.dtype_bits, &want) &&
            (t.dtype_bits == 0 || t.end - t.begin == want));
      try {
        check(f.read_float(t.name).size() == t.numel);
      } catch (const InvalidInput&) {
      }
      try {
        check(f.read_double_schedule(t.name).size() == t.numel);
      } catch (const InvalidInput&) {
      }
    }
    bool loads = false;
    try {
      const DiffusionModel m = diffusion_model_from(f);
      m.net.validate();
      check(m.schedule.T >= 1 && static_cast<int>(m.schedule.coef_eps.size()) == m.schedule.T);
      check(m.data_samples.size() == static_cast<size_t>(m.n_data) * static_cast<size_t>(m.net.dim));
      loads = true;
    } catch (const InvalidInput&) {
    }
    std::vector<std::string> problems;  // info's view of the file: no problem exactly when it loads
    inspect_diffusion_model(f, problems);
    check(problems.empty() == loads);
    try {
      const Mlp3Weights w = mlp3_from(f);
      check(w.W1.size() == static_cast<size_t>(w.d1) * w.d0 && w.W2.size() == static_cast<size_t>(w.d2) * w.d1 &&
            w.W3.size() == static_cast<size_t>(w.d3) * w.d2);
    } catch (const InvalidInput&) {
    }
  } catch (const InvalidInput&) {
  }
}

std::string structured(FuzzedDataProvider& p) {
  static const char* const kNames[] = {
      "eps_net.0.weight", "eps_net.0.bias", "eps_net.2.weight", "eps_net.2.bias", "eps_net.4.weight",
      "eps_net.4.bias", "betas", "alphas", "alphas_cumprod", "sqrt_recip_alphas", "coef_eps", "data_samples",
      "fc1.weight", "fc2.weight", "fc3.weight", "fc3.bias", "other"};
  static const char* const kDtypes[] = {"F32", "F32", "F64", "F16", "BF16", "I64", "I32", "U8", "BOOL", "F8_E4M3",
                                        "F4", "F6_E2M3", "C64", "F8_E5M2FNUZ", "X"};
  static const char* const kMetaKeys[] = {"T", "schedule", "beta_start", "beta_end", "dataset", "prediction_type",
                                          "sigma_data"};
  static const char* const kMetaValues[] = {"1000", "3", "1", "0", "-4", "cosine", "linear", "0.01", "0.5",
                                            "1e-4", "2", "x", "", "99999999999", "nan", "epsilon", "v_prediction"};
  const int64_t dim = p.ConsumeIntegralInRange<int64_t>(0, 4);
  const int64_t hidden = p.ConsumeIntegralInRange<int64_t>(0, 5);
  nlohmann::json h = nlohmann::json::object();
  uint64_t offset = 0;
  const int n = p.ConsumeIntegralInRange(0, 10);
  for (int i = 0; i < n; ++i) {
    const std::string name = p.PickValueInArray(kNames);
    const std::string dtype = p.PickValueInArray(kDtypes);
    const size_t bits = safetensors_dtype_bits(dtype);
    std::vector<int64_t> shape;
    const int rank = p.ConsumeIntegralInRange(0, 3);
    uint64_t numel = 1;
    for (int r = 0; r < rank; ++r) {
      int64_t d;
      switch (p.ConsumeIntegralInRange(0, 4)) {
        case 0: d = dim; break;
        case 1: d = hidden; break;
        case 2: d = dim + 1; break;
        case 3: d = p.ConsumeIntegralInRange<int64_t>(0, 8); break;
        default: d = p.ConsumeIntegral<int64_t>() & 0x7fffffffffffffffLL; break;
      }
      shape.push_back(d);
      numel *= static_cast<uint64_t>(d);  // may wrap: the reader must catch it
    }
    uint64_t bytes = numel;  // an unknown dtype: any size
    if (bits) safetensors_tensor_bytes(numel, bits, &bytes);  // may overflow: the reader must catch it
    uint64_t begin = offset, end = offset + bytes;
    if (p.ConsumeIntegralInRange(0, 7) == 0) {  // perturb the offsets now and then
      begin += p.ConsumeIntegralInRange<int64_t>(-8, 8);
      end += p.ConsumeIntegralInRange<int64_t>(-8, 8);
    }
    offset = end;
    h[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {begin, end}}};
  }
  const int n_meta = p.ConsumeIntegralInRange(0, 4);
  for (int i = 0; i < n_meta; ++i) h["__metadata__"][p.PickValueInArray(kMetaKeys)] = p.PickValueInArray(kMetaValues);
  std::string header = h.dump() + std::string(p.ConsumeIntegralInRange(0, 7), ' ');
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  const std::string data = p.ConsumeRemainingBytesAsString();
  // Size the data section to the last offset when the input has the bytes (fill from the input, cycled).
  std::string section;
  if (offset <= (1u << 16)) {
    section.resize(offset);
    for (size_t i = 0; i < section.size(); ++i) section[i] = data.empty() ? '\0' : data[i % data.size()];
  }
  return out + header + section;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 0 && data[0] == 'S') {  // structured mode
    FuzzedDataProvider p(data + 1, size - 1);
    exercise(structured(p));
  } else {
    exercise(std::string(reinterpret_cast<const char*>(data), size));
  }
  return 0;
}
