// scheduler_config.h — diffusers' scheduler_config.json, read and written (SEMANTICS §3 "diffusers
// scheduler_config.json"): the noise schedule (num_train_timesteps, beta_*, trained_betas,
// rescale_betas_zero_snr), the step spacing (timestep_spacing, steps_offset, use_karras_sigmas), the model family
// (prediction_type) and the families' noise-level lists (FlowMatch*, use_flow_sigmas, EDM*).
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
  // Model families (SEMANTICS §3 "Noise-level lists of the families"). prediction_type: the family the config
  // says: its prediction_type (epsilon, sample, v_prediction; flow_prediction reads as flow), flow for a FlowMatch*
  // class, edm for an EDM* class; unset for a VP config that names none. The lists, at most one set: a FlowMatch*
  // class's (flow_match_euler_levels of model/family.h; mu stays 0 until config_family_levels), DPM-Solver /
  // UniPC use_flow_sigmas with flow_shift (dpm_flow_levels with T = schedule.T; flow_sigmas_dynamic: their
  // use_dynamic_shifting, the shift is then e^mu), an EDM* class's (edm_levels). edm_v_prediction: an EDM* class's
  // prediction_type v_prediction (the sign of c_out, FamilyParams::edm_v). With a list, schedule is empty (T = 0:
  // a flow or EDM config has no betas) unless use_flow_sigmas (the config's betas, which its list does not use),
  // and spacing is Spacing::Default (the list has no timestep spacing).
  std::optional<Family> prediction_type;
  bool edm_v_prediction = false;
  std::optional<FlowMatchEulerConfig> flow_match;
  std::optional<double> flow_sigmas_shift;
  bool flow_sigmas_dynamic = false;
  std::optional<EdmConfig> edm;
};

// Parses the JSON text of a scheduler_config.json; `label` names it in messages (the path). Throws
// InvalidInput naming the key, the value and the valid range (or choices) for every bad or unsupported value,
// and for every key that would change the maths away from SEMANTICS §3 (itself or through its class's
// default): clip_sample, thresholding, set_alpha_to_one false, a flow key on a class that does not read it,
// invert_sigmas, stochastic_sampling, final_sigmas_type sigma_min on a flow list, ..., and any key this reader
// does not know (or that the config's class does not have).
SchedulerConfig parse_scheduler_config(const std::string& text, const std::string& label);
// Reads and parses the file (InvalidInput when it is missing or unreadable).
SchedulerConfig load_scheduler_config(const std::string& path);

// Applies a config to a model (SEMANTICS §3 "which schedule wins"): first check_config_family against
// model.family; then a config with a family list (has_family_list) leaves the model as it is (it has no betas:
// its list is config_family_levels); otherwise a network model whose file carries its own schedule (a betas
// tensor or schedule metadata) keeps it, with a warning in model.warnings when the config's betas differ
// (relative difference above kScheduleWarnRelDiff), and an analytic model (gaussian_mixture: eps is exact for any
// schedule) or a network file without schedule information takes the config's schedule.
void apply_scheduler_config(DiffusionModel& model, const SchedulerConfig& config);

// Throws InvalidInput unless the config's family goes with the model's (SEMANTICS §3 "Which family"): the same
// family (a VP config naming none goes with epsilon, sample and v_prediction, never with flow or edm); for edm
// the same sigma_data and c_out sign; for a flow list with the time input T*s the same T. `family_in_file`:
// whether the model's family came from its file (for the message). The config never sets the model's family.
void check_config_family(const SchedulerConfig& config, const FamilyParams& model, bool family_in_file);

// Whether the config carries one of the families' lists (flow_match, flow_sigmas_shift or edm).
bool has_family_list(const SchedulerConfig& config);
// Whether the config's list takes mu (use_dynamic_shifting): config_family_levels then needs flow_mu, and a mu
// given for any other config changes nothing (a front end notes it).
bool config_uses_flow_mu(const SchedulerConfig& config);
// The config's noise-level list for n_steps steps (model/family.h): flow_match_euler_levels (with mu = flow_mu
// when use_dynamic_shifting), dpm_flow_levels(schedule.T, flow_shift, n) (e^flow_mu for the shift when
// flow_sigmas_dynamic), edm_levels. Throws InvalidInput when the list takes mu and flow_mu is unset ("flow_mu":
// diffusers computes mu from the image size, which diffscope has not) or outside [-700, 700] (e^mu finite), and
// for what the list functions refuse (n_steps < 1) and for a list whose levels are not finite or increase (the
// float32 rounding of an extreme shift, sigma_max^(1/rho) beyond float64); std::logic_error without a list.
LevelList config_family_levels(const SchedulerConfig& config, int n_steps, std::optional<double> flow_mu);

// The samplers of SEMANTICS §3 that the config's _class_name runs in diffusers (DDIMScheduler: ddim,
// DDPMScheduler: ddpm and ddpm-mean, DPMSolverMultistepScheduler of order 2 with the midpoint solver type:
// dpmpp-2m for dpmsolver++, dpmpp-2m-sde for sde-dpmsolver++, EulerAncestralDiscreteScheduler: euler-ancestral,
// HeunDiscreteScheduler: heun); empty for any other class or none.
std::vector<Sampler> config_samplers(const SchedulerConfig& config);
// "" when the config names no class or one that runs `sampler`; else one line saying which scheduler the config
// names and which sampler runs (the CLI prints it as a note, the app shows it where the config is applied).
std::string sampler_mismatch_note(const SchedulerConfig& config, Sampler sampler);

// The scheduler_config.json text (2-space indented) for a run of a VP family (epsilon, sample, v_prediction,
// written as prediction_type): the schedule as beta_schedule linear / scaled_linear / squaredcos_cap_v2 when its
// betas match one within 1e-6 relative, else trained_betas (17 digits); spacing as timestep_spacing (karras:
// use_karras_sigmas true with timestep_spacing linspace, which is diffusers' list when t_start = T - 1);
// _class_name of the diffusers scheduler closest to `sampler` (flow-euler: DDIMScheduler, the same step). Throws
// InvalidInput for the default spacing, which diffusers does not have (linspace is the same list up to the
// rounding of ties), for a schedule with abar = 0 anywhere but a rescaled last step, for flow-heun (flow models
// only) and for the flow and edm families (family_scheduler_config_json).
std::string scheduler_config_json(const Schedule& schedule, Sampler sampler, Spacing spacing, int steps_offset,
                                  Family family = Family::Epsilon);

// The scheduler_config.json text for a run of the flow or edm family on the list `list` holds (a parsed config,
// or one the caller fills: flow_match, flow_sigmas_shift with schedule.T, or edm), such that diffusers runs the
// same list (SEMANTICS §3 "Written configs"): FlowMatchEulerDiscreteScheduler (FlowMatchHeunDiscreteScheduler for
// flow-heun) with num_train_timesteps, shift, shift_terminal, use_dynamic_shifting (then base_shift = max_shift =
// flow_mu, which pins diffusers' mu for every image size); DPMSolverMultistepScheduler with use_flow_sigmas,
// flow_shift (e^flow_mu when dynamic), prediction_type flow_prediction; EDMEulerScheduler (EDMDPMSolverMultistep
// for dpmpp-2m / dpmpp-2m-sde) with sigma_min / sigma_max / rho / sigma_schedule / final_sigmas_type of the list
// and sigma_data / prediction_type (c_out's sign) of `family`. Throws InvalidInput when `family` is not the list's
// family, when the list takes mu and flow_mu is unset, for flow-heun on a list FlowMatchHeun cannot compute
// (dynamic or terminal shift), and for a config without a list.
std::string family_scheduler_config_json(const FamilyParams& family, Sampler sampler, const SchedulerConfig& list,
                                         std::optional<double> flow_mu);

}  // namespace diffscope
