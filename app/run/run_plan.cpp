// run_plan.cpp — plan_run (every default, check and precedence rule of a sampling request) and run_plan (the
// chunked run).
#include "run/run_plan.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "base/errors.h"
#include "base/ranges.h"
#include "base/words.h"
#include "diffusion/family_table.h"
#include "diffusion/input_checks.h"
#include "diffusion/sampling.h"
#include "run/finite_checks.h"
#include "run/trajectory_store.h"

namespace diffscope {

bool SampleRequest::operator==(const SampleRequest& o) const {
  return sampler == o.sampler && spacing == o.spacing && steps_offset == o.steps_offset &&
         steps_offset_named == o.steps_offset_named && eta == o.eta && eta_named == o.eta_named && t_start == o.t_start && steps == o.steps &&
         n == o.n && seed == o.seed && from_data == o.from_data && precision == o.precision && gpu == o.gpu &&
         scheduler_config == o.scheduler_config && keep_frames == o.keep_frames &&
         trajectory_stride == o.trajectory_stride && memory_budget_mb == o.memory_budget_mb && frame == o.frame &&
         frame_past_end_is_last == o.frame_past_end_is_last && model_name == o.model_name &&
         prediction_type == o.prediction_type && sigmas == o.sigmas && flow_shift == o.flow_shift &&
         flow_mu == o.flow_mu && guidance == o.guidance;
}

std::vector<int> kept_frames(int N, int s) {
  std::vector<int> f;
  for (int k = 0; k < N; k += s) f.push_back(k);
  f.push_back(N);
  return f;
}

namespace {

std::string format_number(double v) {
  std::ostringstream o;
  o.precision(17);
  o << v;
  return o.str();
}

// A typed list: finite, > 0 but a last 0, strictly decreasing, at least one step.
void check_sigmas(const SampleRequest& r) {
  const std::vector<double>& s = r.sigmas;
  if (s.empty()) return;
  const std::string name = r.name(Arg::Sigmas);
  const auto bad = [&](size_t i, const std::string& why) {
    throw ArgumentError(Arg::Sigmas, format_number(s[i]), why,
                        name + ": value " + std::to_string(i) + " = " + format_number(s[i]) + " is out of range; valid: " +
                            why);
  };
  for (size_t i = 0; i < s.size(); ++i) {
    if (!std::isfinite(s[i]) || s[i] < 0) bad(i, "finite levels >= 0");
    if (s[i] == 0 && i + 1 < s.size()) bad(i, "> 0 (only the last level may be 0)");
    if (i > 0 && !(s[i] < s[i - 1])) bad(i, "strictly decreasing levels (below " + format_number(s[i - 1]) + ")");
  }
  if (s.size() == 1 && s[0] == 0) bad(0, "at least one level > 0");
}

}  // namespace

void check_sample_request(const SampleRequest& r) {
  if (r.steps_offset) check_range(r.name(Arg::StepsOffset), *r.steps_offset, {0, INT_MAX});
  check_range(r.name(Arg::N), r.n, sample_count_range(r.gpu));
  check_eta(r.eta, r.name(Arg::Eta).c_str());
  if (r.trajectory_stride) check_range(r.name(Arg::TrajectoryStride), *r.trajectory_stride, {1, INT_MAX});
  if (r.flow_shift && !(*r.flow_shift > 0 && std::isfinite(*r.flow_shift)))
    throw ArgumentError(Arg::FlowShift, format_number(*r.flow_shift), "> 0",
                        r.name(Arg::FlowShift) + " = " + format_number(*r.flow_shift) + " is out of range; valid: > 0");
  if (r.flow_mu && !std::isfinite(*r.flow_mu))
    throw ArgumentError(Arg::FlowMu, format_number(*r.flow_mu), "a finite number",
                        r.name(Arg::FlowMu) + " = " + format_number(*r.flow_mu) + " is not finite; valid: a finite number");
  check_sigmas(r);
}

namespace {

bool one_timestep_per_step(Sampler s) { return s == Sampler::Ddpm || s == Sampler::DdpmMean; }

void add_note(RunPlan& p, RunNote::Kind kind, std::string text, const NoteSink& on_note) {
  p.notes.push_back({kind, std::move(text)});
  if (on_note) on_note(p.notes.back());
}

// Spacing and steps_offset: the request's, else the scheduler config's (ddpm / ddpm-mean take one timestep per
// step: a config's spacing does not apply to them), else default / 0.
void resolve_spacing(RunPlan& p, const NoteSink& on_note) {
  const SampleRequest& r = p.request;
  const SchedulerConfig* config = r.scheduler_config;
  const bool per_t = one_timestep_per_step(r.sampler);
  p.spacing = r.spacing.value_or(Spacing::Default);
  int64_t offset = r.steps_offset.value_or(0);
  if (config) {
    if (const std::string note = sampler_mismatch_note(*config, r.sampler); !note.empty())
      add_note(p, RunNote::Kind::ConfigSampler, note, on_note);
    if (!r.spacing && !per_t) p.spacing = config->spacing;
    if (per_t && config->spacing != Spacing::Default)
      add_note(p, RunNote::Kind::ConfigSpacing,
               r.name(Arg::SchedulerConfig) + ": its spacing (" + spacing_name(config->spacing) +
                   (config->spacing == Spacing::Karras ? ": use_karras_sigmas" : "") + ") has no effect with " +
                   r.name(Arg::Sampler) + " " + sampler_name(r.sampler) + ", which steps t -> t-1 (SEMANTICS §3)",
               on_note);
    if (!r.steps_offset) offset = config->steps_offset;
  }
  check_range(r.name(Arg::StepsOffset), offset, {0, INT_MAX});
  p.steps_offset = static_cast<int>(offset);
}

// t_start (given: in [0, T-1]; else the model's last usable t) and steps (given: in [1, t_start + 1]; else
// t_start + 1).
void resolve_steps(RunPlan& p, const Schedule& schedule, const NoteSink& on_note) {
  const SampleRequest& r = p.request;
  if (r.t_start) {
    check_range(r.name(Arg::TStart), *r.t_start, t_start_range(schedule));
    p.t_start = static_cast<int>(*r.t_start);
  } else if (p.family.family != Family::Epsilon) {
    p.t_start = schedule.T - 1;  // sample / v_prediction may start at abar = 0 (SEMANTICS §3 "Zero terminal SNR")
  } else {
    std::string note;
    p.t_start = default_t_start(schedule, &note);
    if (!note.empty()) add_note(p, RunNote::Kind::DefaultTStart, note, on_note);
  }
  const int64_t steps = r.steps.value_or(int64_t(p.t_start) + 1);
  check_range(r.name(Arg::Steps), steps, sample_steps_range(p.t_start));
  p.steps = static_cast<int>(steps);
}

// Options given that this run does not use: eta is ddim's; steps_offset is added by the leading spacing only.
void note_unused(RunPlan& p, const NoteSink& on_note) {
  const SampleRequest& r = p.request;
  if (r.eta_named && r.sampler != Sampler::Ddim)
    add_note(p, RunNote::Kind::IgnoredEta,
             r.name(Arg::Eta) + " has no effect with " + r.name(Arg::Sampler) + " " +
                 sampler_name(r.sampler) + " (only ddim takes eta; the stochastic solvers fix their own noise, SEMANTICS §3)",
             on_note);
  const bool mu_used = r.scheduler_config && config_uses_flow_mu(*r.scheduler_config);
  if ((r.flow_mu && !mu_used) || (r.flow_shift && p.family.family != Family::Flow))
    add_note(p, RunNote::Kind::IgnoredFlowOption,
             (r.flow_mu && !mu_used ? r.name(Arg::FlowMu) : r.name(Arg::FlowShift)) +
                 " has no effect on this run (flow_mu: a scheduler config with use_dynamic_shifting; flow_shift: "
                 "flow runs)",
             on_note);
  if (r.steps_offset_named && p.spacing != Spacing::Leading)
    add_note(p, RunNote::Kind::IgnoredStepsOffset,
             r.name(Arg::StepsOffset) + " has no effect with " + r.name(Arg::Spacing) + " " +
                 spacing_name(p.spacing) + " (only leading adds it)",
             on_note);
}

// The run's family (SEMANTICS §2 "How a file says it"): the file's; the request's prediction_type (else the scheduler
// config's) for a file or an analytic model that names none, with a note; one naming another family than the file
// is refused.
FamilyParams resolve_family(RunPlan& p, const DiffusionModel& model, const NoteSink& on_note) {
  const SampleRequest& r = p.request;
  const bool from_request = r.prediction_type.has_value();
  const std::optional<Family> want = r.prediction_type;  // a scheduler config never sets it (check_config_family)
  const std::string who = from_request ? r.name(Arg::PredictionType) : r.name(Arg::SchedulerConfig) + "'s prediction_type";
  std::string note;
  const FamilyParams f = run_family(model, want, who, &note);
  if (!note.empty()) add_note(p, RunNote::Kind::FamilyOverride, note, on_note);
  return f;
}

// A family list's levels in the family's own level (N + 1 values): the typed sigmas (a final 0 appended when
// missing), else flow's FlowMatchEuler list or edm's karras list with N = the given steps (default T).
std::vector<double> family_list_levels(const RunPlan& p, const DiffusionModel& model) {
  const SampleRequest& r = p.request;
  if (!r.sigmas.empty()) {
    std::vector<double> s = r.sigmas;
    if (s.back() != 0) s.push_back(0.0);
    if (r.steps && *r.steps != int64_t(s.size()) - 1)
      throw ArgumentError(Arg::Steps, std::to_string(*r.steps), std::to_string(s.size() - 1),
                          r.name(Arg::Steps) + " = " + std::to_string(*r.steps) + " disagrees with " +
                              r.name(Arg::Sigmas) + " (" + std::to_string(s.size() - 1) + " steps); valid: " +
                              std::to_string(s.size() - 1) + " (or leave it out)");
    return s;
  }
  const int64_t N = r.steps.value_or(model.schedule.T);
  check_range(r.name(Arg::Steps), N, {1, 1000000});
  if (r.scheduler_config && has_family_list(*r.scheduler_config)) {  // the config's list (flow_shift given wins)
    SchedulerConfig c = *r.scheduler_config;
    if (r.flow_shift && c.flow_match) c.flow_match->shift = *r.flow_shift;
    if (r.flow_shift && c.flow_sigmas_shift) c.flow_sigmas_shift = *r.flow_shift;
    return config_family_levels(c, static_cast<int>(N), r.flow_mu).levels;
  }
  if (p.family.family == Family::Flow) {
    FlowMatchEulerConfig c;
    c.T = p.family.T;
    c.shift = r.flow_shift.value_or(p.family.flow_shift);
    return flow_match_euler_levels(c, static_cast<int>(N)).levels;
  }
  EdmConfig c;
  c.sigma_data = p.family.sigma_data;
  return edm_levels(c, static_cast<int>(N)).levels;
}

// The step table of a family run: on the VP families' schedule (the spacings and t_start of SEMANTICS §3) or on a
// family list (t_start the index of the first step, default 0; an analytic model's default skips a first level with
// alpha = 0, where its exact eps gives no data prediction).
void plan_family_table(RunPlan& p, const DiffusionModel& model, const NoteSink& on_note) {
  const SampleRequest& r = p.request;
  const bool analytic = model.mixture.has_value();
  p.family_list = !r.sigmas.empty() || !is_vp_family(p.family.family);
  if (!p.family_list) {
    resolve_steps(p, model.schedule, on_note);
    const Sampler list_sampler = one_timestep_per_step(r.sampler) || r.sampler == Sampler::FlowHeun ? r.sampler
                                                                                                      : Sampler::Ddim;
    const StepTable vp = build_step_table(model.schedule, list_sampler, p.t_start, p.steps,
                                          r.sampler == Sampler::Ddim ? r.eta : 0.0, p.spacing, p.steps_offset);
    p.table = build_family_table(p.family, analytic, vp_level_run(model.schedule, vp), r.sampler, r.eta,
                                 model.schedule.T);
    return;
  }
  const std::vector<double> levels = family_list_levels(p, model);
  p.list_steps = static_cast<int>(levels.size()) - 1;
  if (r.t_start) {
    check_range(r.name(Arg::TStart), *r.t_start, {0, p.list_steps - 1});
    p.t_start = static_cast<int>(*r.t_start);
    add_note(p, RunNote::Kind::ListStart,
             r.name(Arg::TStart) + " " + std::to_string(p.t_start) + " is the index of the first step in the " +
                 family_name(p.family.family) + " run's list of " + count_noun(p.list_steps, "level") + " (level " +
                 short_number(levels[p.t_start]) + "): the run takes " + count_noun(p.list_steps - p.t_start, "step") +
                 " (SEMANTICS §3)",
             on_note);
  } else {
    p.t_start = 0;
    if (analytic && noise_levels(p.family.family, {levels[0]})[0].alpha == 0 && p.list_steps > 1) {
      p.t_start = 1;
      add_note(p, RunNote::Kind::DefaultTStart,
               r.name(Arg::TStart) + " 1: an analytic model's exact eps gives no data prediction at the list's first "
                                     "level (alpha = 0), so the run starts at the second (SEMANTICS §3)",
               on_note);
    }
  }
  p.steps = p.list_steps - p.t_start;
  p.table = build_family_table(p.family, analytic, list_level_run(p.family.family, model.schedule, levels, p.t_start),
                               r.sampler, r.eta, model.schedule.T);
}

// The stride, the frame and the kept frames.
void resolve_frames(RunPlan& p, const DiffusionModel& model, const NoteSink& on_note) {
  const SampleRequest& r = p.request;
  const int N = p.steps;
  if (r.trajectory_stride)
    p.stride = static_cast<int>(std::min<int64_t>(*r.trajectory_stride, N));
  else if (r.memory_budget_mb > 0 && r.keep_frames)  // the GUI's trail sampling (SEMANTICS §3)
    p.stride = TrajectoryLayout::make(N, p.n, model.net.dim, size_t(r.memory_budget_mb) << 20).stride;
  int64_t frame = r.frame.value_or(-1);
  if (r.frame && r.frame_past_end_is_last && frame > N) {
    add_note(p, RunNote::Kind::FramePastEnd,
             r.name(Arg::Config) + " shows frame " + std::to_string(frame) + ", past this run's " +
                 count_noun(N, "step") + ": drawing the last frame",
             on_note);
    frame = -1;
  } else if (r.frame) {
    check_range(r.name(Arg::Frame), frame, {0, N});
  }
  p.frame = static_cast<int>(frame);
  p.frames = kept_frames(N, p.stride);
  if (p.frame >= 0 && !std::binary_search(p.frames.begin(), p.frames.end(), p.frame))
    p.frames.insert(std::upper_bound(p.frames.begin(), p.frames.end(), p.frame), p.frame);
}

}  // namespace

FamilyParams run_family(const DiffusionModel& model, std::optional<Family> requested, const std::string& who,
                        std::string* note) {
  if (!requested) return model.family;
  std::string changed;
  const FamilyParams f = family_with_prediction_type(model, *requested, &changed);
  if (note && !changed.empty())
    *note = std::string("the model ") + (model.mixture ? "is analytic" : "file names no prediction_type") +
            ": the run reads it as " + family_name(f.family) + ", network time input " +
            time_input_name(f.time_input) + " (" + who + "; SEMANTICS §2)";
  return f;
}

RunPlan plan_run(const SampleRequest& request, const DiffusionModel& model, const NoteSink& on_note) {
  RunPlan p;
  p.request = request;
  check_sample_request(request);
  p.n = static_cast<int>(request.n);
  resolve_spacing(p, on_note);
  p.family = resolve_family(p, model, on_note);
  if (is_plain_epsilon(p.family) && request.sigmas.empty()) {
    resolve_steps(p, model.schedule, on_note);
    p.table =
        build_step_table(model.schedule, request.sampler, p.t_start, p.steps, request.eta, p.spacing, p.steps_offset);
  } else {
    plan_family_table(p, model, on_note);
  }
  note_unused(p, on_note);
  check_guidance(request, model);
  p.table.guidance = request.guidance;
  if (request.from_data && model.n_data <= 0)
    throw InvalidInput(request.name(Arg::FromData) + ": the model '" + request.model_name +
                       "' has no data_samples tensor");
  // SEMANTICS §3 "Finite coefficients": a run whose coefficients are not finite in float32 is refused.
  check_run_coefficients(model.schedule, p.table, p.steps, request.from_data ? p.t_start : -1);
  if (!ends_clean(p.table)) {  // a valid run, but one that a newcomer may take for a sampler failure
    const std::string steps = request.name(Arg::Steps);
    add_note(p, RunNote::Kind::NoisyEnd,
             std::string(sampler_name(request.sampler)) + " with " + steps + " " + std::to_string(p.steps) +
                 " from t_start " + std::to_string(p.t_start) + " stops after t = " + std::to_string(p.table.t.back()) +
                 ", so the samples are still noisy (x_" + std::to_string(p.table.t.back() - 1) +
                 "); ddpm and ddpm-mean step t -> t-1: " + steps + " " + std::to_string(p.t_start + 1) +
                 " reaches t = 0 (SEMANTICS §3)",
             on_note);
  }
  resolve_frames(p, model, on_note);
  return p;
}

namespace {

// The start state (frame 0): the given one, the data noised to t_start, or the backend's noise for the seed.
void fill_start(const RunPlan& p, const DiffusionModel& model, DenoiserBackend& backend, const RunBuffers& out) {
  const SampleRequest& r = p.request;
  const bool family = p.table.has_family_rows();
  const NoiseLevel& first = p.table.levels.front();
  if (r.from_data && family) {
    fill_start_from_data(model, StartScales{float(first.alpha), float(first.sigma)}, r.seed, p.n, out.x);
  } else if (r.from_data) {
    fill_start_from_data(model, p.t_start, r.seed, p.n, out.x);
  } else if (out.start) {
    std::copy(out.start, out.start + size_t(p.n) * model.net.dim, out.x);
  } else {
    backend.start_noise(model, r.seed, p.n, out.x);  // where the GUI draws it on this backend (SEMANTICS §7)
    scale_start_noise(p.table, p.n * size_t(model.net.dim), out.x);
  }
}

// The step counts after which run_plan stops: the kept frames (none with stride 1: the backend writes every
// frame), the frame, N and, with progress, about 100 chunks.
std::vector<int> chunk_ends(const RunPlan& p, bool keep, bool every_frame, bool progress) {
  const int N = p.steps;
  std::vector<int> stops = !keep || every_frame ? std::vector<int>{N} : p.frames;
  if (progress)
    for (int k = std::max(1, N / 100); k < N; k += std::max(1, N / 100)) stops.push_back(k);
  if (p.frame >= 0) stops.push_back(p.frame);
  std::sort(stops.begin(), stops.end());
  stops.erase(std::unique(stops.begin(), stops.end()), stops.end());
  return stops;
}

}  // namespace

void run_plan(const RunPlan& p, const DiffusionModel& model, DenoiserBackend& backend, const RunBuffers& out,
              const std::function<void(int)>& progress, const std::function<void()>& stop) {
  const int N = p.steps;
  const size_t frame_elems = size_t(p.n) * model.net.dim;
  std::vector<float> prev_own;  // dpmpp's previous data prediction, carried across the chunks (SEMANTICS §3)
  float* prev = out.prev;
  if (p.table.uses_prev() && !prev) prev_own.resize(frame_elems), prev = prev_own.data();
  if (!p.table.uses_prev()) prev = nullptr;
  fill_start(p, model, backend, out);
  const bool keep = out.trajectory && !p.frames.empty();
  const bool every_frame = keep && p.stride == 1;
  size_t next_frame = 0;
  if (keep && p.frames[0] == 0) std::memcpy(out.trajectory, out.x, sizeof(float) * frame_elems), next_frame = 1;
  if (p.frame == 0 && out.x_frame) std::memcpy(out.x_frame, out.x, sizeof(float) * frame_elems);
  int k = 0;
  for (int end : chunk_ends(p, keep, every_frame, static_cast<bool>(progress))) {
    if (end <= k) continue;
    float* step_frames = every_frame ? out.trajectory + (k + 1) * frame_elems : nullptr;
    backend.run_steps(model, p.table, k, end, out.x, p.n, p.request.seed, step_frames, p.request.precision, 0, prev);
    k = end;
    if (stop) stop();
    if (keep && !every_frame && next_frame < p.frames.size() && p.frames[next_frame] == k)
      std::memcpy(out.trajectory + next_frame++ * frame_elems, out.x, sizeof(float) * frame_elems);
    if (out.x_frame && p.frame > 0 && k == p.frame && p.frame < N)
      std::memcpy(out.x_frame, out.x, sizeof(float) * frame_elems);
    if (progress) progress(k);
  }
}

}  // namespace diffscope
