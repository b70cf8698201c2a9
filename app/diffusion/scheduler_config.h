// scheduler_config.h — diffusers' scheduler_config.json, read and written (SEMANTICS §3 "diffusers
// scheduler_config.json"): the noise schedule (num_train_timesteps, beta_*, trained_betas,
// rescale_betas_zero_snr) and the step spacing (timestep_spacing, steps_offset, use_karras_sigmas).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "diffusion/step_table.h"
#include "model/model.h"
#include "model/schedule.h"

namespace diffscope {

// What a scheduler_config.json says, checked. Missing keys take diffusers' defaults of the config's _class_name
// (DDIMScheduler's when it has none or one diffscope does not know): timestep_spacing "leading" for DDIM, DDPM and
// PNDM, else "linspace"; clip_sample true for DDIM, DDPM and unknown classes; set_alpha_to_one false for PNDM.
struct SchedulerConfig {
  std::string path;                    // the file it came from ("" when parsed from text)
  std::string class_name;              // _class_name ("" when missing): names a sampler, never chooses it
  std::string algorithm_type, solver_type;  // DPMSolverMultistepScheduler's ("" when missing)
  int solver_order = 2;
  Schedule schedule;                   // betas from beta_schedule / trained_betas (+ rescale), float64
  Spacing spacing = Spacing::Leading;  // timestep_spacing, or karras when use_karras_sigmas is true
  int steps_offset = 0;
  // Model families (SEMANTICS §3 "Noise-level lists of the families"): prediction_type as the config names it
  // (unset when absent; flow_prediction reads as flow); a FlowMatch* class's list (flow_match_euler_levels of
  // model/family.h); DPM-Solver / UniPC use_flow_sigmas with flow_shift (dpm_flow_levels); an EDM* class's list
  // (edm_levels). At most one of the three lists is set.
  std::optional<Family> prediction_type;
  std::optional<FlowMatchEulerConfig> flow_match;
  std::optional<double> flow_sigmas_shift;
  std::optional<EdmConfig> edm;
};

// Parses the JSON text of a scheduler_config.json; `label` names it in messages (the path). Throws
// InvalidInput naming the key, the value and the valid range (or choices) for every bad or unsupported value,
// and for every key that would change the maths away from SEMANTICS §3 (itself or through its class's
// default): a flow-matching class or key, prediction_type other than epsilon, clip_sample, thresholding,
// set_alpha_to_one false, final_sigmas_type sigma_min, ..., and any key this reader does not know.
SchedulerConfig parse_scheduler_config(const std::string& text, const std::string& label);
// Reads and parses the file (InvalidInput when it is missing or unreadable).
SchedulerConfig load_scheduler_config(const std::string& path);

// Applies a config's schedule to a model (SEMANTICS §3 "which schedule wins"): a network model whose file
// carries its own schedule (a betas tensor or schedule metadata) keeps it, with a warning in model.warnings
// when the config's betas differ (relative difference above kScheduleWarnRelDiff); an analytic model
// (gaussian_mixture: eps is exact for any schedule) or a network file without schedule information takes the
// config's schedule.
void apply_scheduler_config(DiffusionModel& model, const SchedulerConfig& config);

// The samplers of SEMANTICS §3 that the config's _class_name runs in diffusers (DDIMScheduler: ddim,
// DDPMScheduler: ddpm and ddpm-mean, DPMSolverMultistepScheduler of order 2 with the midpoint solver type:
// dpmpp-2m for dpmsolver++, dpmpp-2m-sde for sde-dpmsolver++, EulerAncestralDiscreteScheduler: euler-ancestral,
// HeunDiscreteScheduler: heun); empty for any other class or none.
std::vector<Sampler> config_samplers(const SchedulerConfig& config);
// "" when the config names no class or one that runs `sampler`; else one line saying which scheduler the config
// names and which sampler runs (the CLI prints it as a note, the app shows it where the config is applied).
std::string sampler_mismatch_note(const SchedulerConfig& config, Sampler sampler);

// The scheduler_config.json text (2-space indented) for a run: the schedule as beta_schedule linear /
// scaled_linear / squaredcos_cap_v2 when its betas match one within 1e-6 relative, else trained_betas (17
// digits); spacing as timestep_spacing (karras: use_karras_sigmas true with timestep_spacing linspace, which is
// diffusers' list when t_start = T - 1); _class_name of the diffusers scheduler closest to `sampler`. Throws
// InvalidInput for the default spacing, which diffusers does not have (linspace is the same list up to the
// rounding of ties), and for a schedule with abar = 0 anywhere but a rescaled last step.
std::string scheduler_config_json(const Schedule& schedule, Sampler sampler, Spacing spacing, int steps_offset);

}  // namespace diffscope
