// family_table.h — the step tables of every solver on every model family (SEMANTICS §2 "Model families", §3 "Every
// solver on every family"): a run's list of noise levels (the VP schedule's timesteps, diffusers' flow and EDM lists,
// or a typed list) and the rows of StepTable built on it in the family's own state, with the network's per-step
// input scale and time value. Host math only; plan_run (run/run_plan.h) decides which list a run takes.
#pragma once
#include <cstdint>
#include <vector>

#include "diffusion/step_table.h"
#include "model/family.h"
#include "model/schedule.h"

namespace diffscope {

// The list a run steps through: levels (N + 1: the level at the start of each step and the level after the last),
// t_net (N: the VP-equivalent continuous timestep of each step, what the Schedule section and messages show; on the
// VP families the network's timestep), t (N: t_net rounded; on integer spacings the timestep itself), noise_key (N:
// SEMANTICS §7). `vp_list`: the levels are the schedule's (integer or karras timesteps of the VP families), so the
// schedule's finiteness rules apply (run/finite_checks.h).
struct LevelRun {
  std::vector<NoiseLevel> levels;
  std::vector<double> t_net;
  std::vector<int32_t> t;
  std::vector<uint32_t> noise_key;
  bool vp_list = true;
  Spacing spacing = Spacing::Default;
  int steps() const { return static_cast<int>(t.size()); }
};

// The list of a VP table (build_step_table's): level k is NoiseLevel::vp(abar[k], t_net[k]); the level after the last
// step is abar = 1 (clean), or for ddpm / ddpm-mean stopping before t = 0 the schedule's abar[t_last - 1].
LevelRun vp_level_run(const Schedule& sched, const StepTable& vp_table);

// A list in the family's own level (flow s, EDM / VP sigma; N + 1 values, the last usually 0) from step index
// `first` on: levels[first..N]. The VP families' levels become VP levels with abar = 1 / (1 + S^2) and the continuous
// timestep t(S) of `sched` (k-diffusion's sigma_to_t, as karras); flow and EDM keep their own, t_net the
// VP-equivalent timestep of `sched`. Noise keys T + 2 + k (SEMANTICS §7). Throws InvalidInput when first is outside
// [0, N - 1].
LevelRun list_level_run(Family family, const Schedule& sched, const std::vector<double>& levels, int first);

// The rows of `sampler` over `run` (SEMANTICS §3 "Every solver on every family") for a model of family `p`:
// ddim (eta), flow-euler (eta 0), ddpm (eta 1) and ddpm-mean (eta 1 without the noise) are the one DDIM step between
// consecutive levels in the family (family_ddim_row); dpmpp-2m, dpmpp-2m-sde, euler-ancestral and heun are §3's rows
// on the VP-equivalent levels with eps = (x_vp - alpha D) / sigma taken from the family's data prediction D, the
// noisiest abar clamped to 2^-24 where it is 0 (diffusers' Euler / DPM-Solver do the same), carried to the family's
// state; flow-heun is Heun in the flow level s (flow runs only). `analytic`: the model's output is its exact eps at
// the VP state of the same signal-to-noise ratio (c_in = the VP scale, the epsilon output map on the run's levels).
// The table's abar is each level's VP-equivalent abar. Throws InvalidInput for flow-heun outside flow runs and for
// an eta outside [0, 1].
StepTable build_family_table(const FamilyParams& p, bool analytic, const LevelRun& run, Sampler sampler, double eta,
                             int T);

// True when `p` is §2's plain network (epsilon, time t/T): its runs use build_step_table's tables as they are.
bool is_plain_epsilon(const FamilyParams& p);

// True for the variance-preserving families (epsilon, sample, v_prediction), whose lists are the schedule's.
bool is_vp_family(Family f);

}  // namespace diffscope
