// run_plan.h — one sampling request resolved once for every front end (SEMANTICS §3 "The run plan"):
// SampleRequest (what the caller gave; unset fields take their defaults) -> plan_run -> RunPlan (every default,
// check and precedence rule applied: spacing and steps_offset against a scheduler config, ddpm's one timestep
// per step, t_start and steps, the step table, the kept frames, the notes), then run_plan (the chunked run on a
// backend, carrying dpmpp's previous data prediction across the chunks). The CLI's `sample`, Python's
// Model.sample and the GUI's SamplingSession build a SampleRequest from their own arguments and call plan_run.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/arg_error.h"
#include "base/precision.h"
#include "diffusion/guidance.h"
#include "diffusion/input_checks.h"
#include "diffusion/scheduler_config.h"
#include "diffusion/step_table.h"
#include "model/model.h"
#include "run/backend.h"

namespace diffscope {

struct SampleRequest {
  Sampler sampler = Sampler::Ddim;
  std::optional<Spacing> spacing;        // unset: the scheduler config's (ddpm / ddpm-mean: default), else default
  std::optional<int64_t> steps_offset;   // unset: the scheduler config's, else 0
  bool steps_offset_named = false;       // the caller named steps_offset itself: a note when spacing isn't leading
  double eta = 0.0;                      // ddim only, [0, 1]
  bool eta_named = false;                // the caller named eta itself: a note when the sampler isn't ddim
  std::optional<int64_t> t_start;        // unset: default_t_start of the model (T - 1 or its last usable t)
  std::optional<int64_t> steps;          // unset: t_start + 1
  int64_t n = 4096;                      // in sample_count_range(gpu)
  uint64_t seed = 0;
  bool from_data = false;
  Precision precision = Precision::Fp32;
  bool gpu = false;                      // the run is on the CUDA backend (n's range is the GPU's)
  // A diffusers scheduler_config.json whose schedule the model already carries (apply_scheduler_config); its
  // spacing and steps_offset apply where the request leaves them unset. Not owned.
  const SchedulerConfig* scheduler_config = nullptr;
  bool keep_frames = false;                  // a trajectory of frames is kept (for the trail stride)
  std::optional<int64_t> trajectory_stride;  // unset: 1, or with memory_budget_mb > 0 the GUI's trail stride
  int memory_budget_mb = 0;                  // > 0: the trajectory buffer's budget (TrajectoryLayout)
  std::optional<int64_t> frame;              // a frame also kept (and returned by run_plan), in [0, N]
  bool frame_past_end_is_last = false;       // a frame past the run's last is the last, with a note (--config's)
  // Model families (SEMANTICS §2, §3 "Noise-level lists of the families"). prediction_type: the family of a file
  // that names none (a note says so; a file naming another is refused). sigmas: a typed list of noise levels in
  // the family's own level (VE sigma for the VP families and edm, s for flow), strictly decreasing, > 0 but the
  // last, which may be 0; without a final 0 the list gets one (the step to the clean level). flow_shift: the flow
  // list's shift (unset: the scheduler config's, else the file's). flow_mu: the mu of dynamic shifting (a config
  // with use_dynamic_shifting needs it).
  std::optional<Family> prediction_type;
  std::vector<double> sigmas;
  std::optional<double> flow_shift;
  std::optional<double> flow_mu;
  // Guidance (SEMANTICS §12): the class of a class-conditional network, the guidance scale w, the interval and the
  // rescale, checked against the model by check_guidance and carried to the table (StepTable::guidance).
  Guidance guidance;
  std::string model_name;                    // how the caller named the model, for messages
  // The front end's name of an argument in messages and notes, as the CLI's --t-start or Python's t_start
  // (base/arg_error.h; snake_case_name when unset).
  ArgSpelling arg_name;

  std::string name(Arg a) const { return arg_name ? arg_name(a) : snake_case_name(a); }
  bool operator==(const SampleRequest& o) const;  // every field but arg_name
  bool operator!=(const SampleRequest& o) const { return !(*this == o); }
};

// A line plan_run has for the user: what it chose or what the run will show. Each front end shows the kinds it
// shows (the CLI all of them on stderr, Python ScheduleWarning, ConfigSampler and DefaultTStart as UserWarnings).
struct RunNote {
  enum class Kind { ConfigSampler, ConfigSpacing, DefaultTStart, IgnoredEta, IgnoredStepsOffset, NoisyEnd,
                    FramePastEnd, FamilyOverride, ListStart, IgnoredFlowOption };
  Kind kind;
  std::string text;  // one line, no "note: " prefix, no newline
  bool operator==(const RunNote& o) const { return kind == o.kind && text == o.text; }
};

struct RunPlan {
  SampleRequest request;  // as given
  Spacing spacing = Spacing::Default;
  int steps_offset = 0;   // as resolved (the table keeps it for the leading spacing only)
  // t_start: the VP families' start timestep; on a family list (flow, edm, a typed sigmas list) the index of the
  // first step in the list (SEMANTICS §3). steps: the steps the run takes (on a family list N - t_start).
  int t_start = 0, steps = 0, n = 0;
  FamilyParams family;    // the run's family (the file's, or the request's prediction_type for a file naming none)
  bool family_list = false;  // the run steps through a flow / edm / typed list, not the schedule's timesteps
  int list_steps = 0;        // on a family list: its N (steps + t_start)
  StepTable table;        // table.steps() == steps
  int stride = 1;         // kept frames: 0, stride, 2 stride, ..., N
  std::vector<int> frames;  // the frames a trajectory keeps, ascending, with frame
  int frame = -1;           // the frame run_plan also returns, or -1 (the last)
  std::vector<RunNote> notes;
};

// Called with each note as plan_run decides it (before a later check may throw).
using NoteSink = std::function<void(const RunNote&)>;

// The checks that need no model: steps_offset (when given) >= 0, n in sample_count_range(gpu), eta in [0, 1],
// trajectory_stride (when given) >= 1. InvalidInput naming the argument (request.name), the value and the range.
void check_sample_request(const SampleRequest& request);

// Resolves `request` against `model` (which already carries the scheduler config's schedule), in this order:
// check_sample_request; spacing (given, else the config's unless the sampler is ddpm / ddpm-mean, else default)
// and steps_offset (given, else the config's, else 0), with the ConfigSampler and ConfigSpacing notes; t_start
// (given: in [0, T-1]; else default_t_start, with a DefaultTStart note when that is not T - 1); steps (given: in
// [1, t_start + 1]; else t_start + 1); the step table (build_step_table's checks); the IgnoredEta and
// IgnoredStepsOffset notes (eta given to a sampler other than ddim, steps_offset named for a spacing other than
// leading); from_data needs the model's
// data_samples; check_run_coefficients; the NoisyEnd note (ddpm stopping before t = 0); the stride (given:
// min(stride, N); else the trail stride of memory_budget_mb, else 1); the frame (in [0, N], or past N -> the
// last with a FramePastEnd note); the kept frames 0, s, 2s, ..., N and the frame. Throws InvalidInput.
RunPlan plan_run(const SampleRequest& request, const DiffusionModel& model, const NoteSink& on_note = {});

// The family a run of `model` takes (SEMANTICS §2 "How a file says it"): the file's; `requested` for a file (or an
// analytic model) that names none (family_with_prediction_type of diffusion/input_checks.h: the file's time_input
// read for that family, else its default), with one line in *note naming `who` (the front end's spelling of the
// argument); a requested family that contradicts the file's prediction_type throws ArgumentError
// (Arg::PredictionType) naming the value and the file's family.
FamilyParams run_family(const DiffusionModel& model, std::optional<Family> requested, const std::string& who,
                        std::string* note = nullptr);

// The guidance checks (SEMANTICS §2, §12): class in [0, C-1] of a class-conditional network (a model without
// classes takes none); guidance scale finite in [kMinGuidanceScale, kMaxGuidanceScale], other than 1 only with a
// class; the interval 0 <= lo < hi and the rescale in [0, 1] only with a scale other than 1; on the GPU (gpu) neither
// a class-conditional network nor guidance (the kernels do not run them yet). ArgumentError naming the argument
// (request.name), the value and the range.
void check_guidance(const SampleRequest& request, const DiffusionModel& model);
inline constexpr double kMinGuidanceScale = -20.0, kMaxGuidanceScale = 100.0;

// Frames kept with stride s over N steps: 0, s, 2s, ... and always N (SEMANTICS §3).
std::vector<int> kept_frames(int N, int s);

// Where run_plan writes. x: (n, dim), the state after the last step. trajectory: (frames.size(), n, dim) or
// nullptr. x_frame: (n, dim), the state at plan.frame when 0 <= frame < N, or nullptr. start: (n, dim) start
// state (frame 0) instead of the seed's noise, or nullptr (from_data: the noised data; else the backend's noise).
struct RunBuffers {
  float* x = nullptr;
  float* trajectory = nullptr;
  float* x_frame = nullptr;
  const float* start = nullptr;
  float* prev = nullptr;  // (n, dim) for dpmpp's previous data prediction; nullptr: run_plan allocates it
};

// Runs the plan on `backend`: the start state, then the steps in chunks between the kept frames (stride 1: one
// call that writes every frame) and, with `progress`, about 100 chunks, each followed by progress(k) and stop()
// (which may throw to abandon the run). The previous data prediction of dpmpp-2m / -2m-sde is carried across
// the chunks.
void run_plan(const RunPlan& plan, const DiffusionModel& model, DenoiserBackend& backend, const RunBuffers& out,
              const std::function<void(int)>& progress = {}, const std::function<void()>& stop = {});

}  // namespace diffscope
