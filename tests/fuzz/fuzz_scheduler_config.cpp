// fuzz_scheduler_config.cpp — libFuzzer target for the diffusers scheduler_config.json reader: any input
// must either parse or throw InvalidInput; a parsed config with a family list (FlowMatch*, EDM*, use_flow_sigmas)
// must give a list of N + 1 finite levels, decreasing, for N = 1 and 7 (mu 0.5 when it takes one), and come back
// with the same list after family_scheduler_config_json; any other must hold a valid schedule (T = betas.size() in
// [2, 1000000], betas in (0, 1] with 1 only last, abar decreasing), a spacing diffusers names and a steps_offset
// in [0, T-1], and come back the same after scheduler_config_json (betas within the writer's 1e-6 naming tolerance).
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/errors.h"
#include "diffusion/scheduler_config.h"

namespace {

int check_family_list(const diffscope::SchedulerConfig& c) {
  using namespace diffscope;
  const std::optional<double> mu = config_uses_flow_mu(c) ? std::optional<double>(0.5) : std::nullopt;
  FamilyParams p;
  p.family = *c.prediction_type;
  if (c.edm) p.sigma_data = c.edm->sigma_data, p.edm_v = c.edm_v_prediction;
  SchedulerConfig back;
  try {
    back = parse_scheduler_config(family_scheduler_config_json(p, Sampler::FlowEuler, c, mu), "again.json");
  } catch (const InvalidInput&) {
    std::abort();  // what we write, we read
  }
  for (int n : {1, 7}) {
    LevelList l;
    try {
      l = config_family_levels(c, n, mu);
    } catch (const InvalidInput&) {
      continue;  // a list function's own check (e.g. a shift_terminal that cannot be reached)
    }
    if (l.levels.size() != static_cast<size_t>(n + 1)) std::abort();
    for (size_t i = 0; i < l.levels.size(); ++i)
      if (!std::isfinite(l.levels[i]) || (i > 0 && !(l.levels[i] <= l.levels[i - 1]))) std::abort();
    const LevelList again = config_family_levels(back, n, config_uses_flow_mu(back) ? mu : std::nullopt);
    if (again.levels != l.levels) std::abort();
  }
  return 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace diffscope;
  const std::string text(reinterpret_cast<const char*>(data), size);
  SchedulerConfig c;
  try {
    c = parse_scheduler_config(text, "fuzz.json");
  } catch (const InvalidInput&) {
    return 0;
  }
  if (has_family_list(c)) return check_family_list(c);
  const Schedule& s = c.schedule;
  if (s.T < 2 || s.T > 1'000'000 || s.betas.size() != static_cast<size_t>(s.T)) std::abort();
  for (int t = 0; t < s.T; ++t) {
    const double b = s.betas[t];
    if (!(b > 0.0 && (b < 1.0 || (b == 1.0 && t == s.T - 1)))) std::abort();
    if (t > 0 && !(s.alphas_cumprod[t] <= s.alphas_cumprod[t - 1])) std::abort();
  }
  if (c.spacing == Spacing::Default || c.steps_offset < 0 || c.steps_offset > s.T - 1) std::abort();
  SchedulerConfig back;
  try {
    back = parse_scheduler_config(scheduler_config_json(s, Sampler::Ddim, c.spacing, c.steps_offset), "again.json");
  } catch (const InvalidInput&) {
    std::abort();  // what we write, we read
  }
  if (back.spacing != c.spacing || back.steps_offset != c.steps_offset || back.schedule.T != s.T) std::abort();
  for (int t = 0; t < s.T; ++t)
    if (std::abs(back.schedule.betas[t] - s.betas[t]) > 1e-6 * s.betas[t]) std::abort();
  return 0;
}
