// panel_sampling.cpp — sampler, steps, start timestep, samples, seed, precision, backend, start from data.
// Values typed with Ctrl+click are clamped like dragged ones (SEMANTICS §3: the GUI clamps); the session
// clamps again into base/ranges.h before use.
#include <imgui.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "base/ranges.h"
#include "base/words.h"
#include "diffusion/input_checks.h"
#include "session/field_view.h"
#include "ui/app.h"
#include "ui/layout_audit.h"
#include "ui/panels.h"

namespace diffscope::ui {

namespace {

// The family the run of these settings takes (session/field_view.h run_family).
Family settings_family(const Panel& p) {
  const SamplingSession& ss = p.app.session();
  return ss.has_model() ? gui_family(ss.model(), p.settings.sampling.prediction_type)
                        : Family::Epsilon;
}

// The flow list's shift (SD3 eq. 23): the file's (or the scheduler config's), or one set here (flow_shift).
void flow_shift_row(Panel& p) {
  SamplingSettings& s = p.settings.sampling;
  const SamplingSession& ss = p.app.session();
  const double file_shift = ss.has_model() ? ss.model().family.flow_shift : 1.0;
  bool own = s.flow_shift.has_value();
  if (p.edit(ImGui::Checkbox("set shift", &own))) s.flow_shift = own ? std::optional<double>(file_shift) : std::nullopt;
  tip("the flow list's shift s' = shift s / (1 + (shift - 1) s): off takes the scheduler config's, else the file's");
  ImGui::SameLine();
  if (!own) {
    ImGui::TextDisabled("shift %g (from the file)", file_shift);
    return;
  }
  double v = *s.flow_shift;
  const double lo = 0.1, hi = 20.0;  // the slider's span; Ctrl+click types any value in kFlowShiftRange
  ImGui::SetNextItemWidth(-FLT_MIN);
  if (p.edit(ImGui::SliderScalar("##flow_shift", ImGuiDataType_Double, &v, &lo, &hi, "shift %.3g",
                                 ImGuiSliderFlags_Logarithmic)))
    s.flow_shift = kFlowShiftRange.clamp(v);
  tip("flow_shift: > 0, 1 = no shift; larger spends more steps at high noise (SD3 uses 3)");
}

// The sampler and spacing combos, the ddpm-mean note and ddim's eta.
void sampler_rows(Panel& p) {
  SamplingSettings& s = p.settings.sampling;
  const Family family = settings_family(p);
  // Every solver of SEMANTICS §3, in the enum's order (diffusion/step_table.h).
  static const std::vector<std::string> kSamplerNames = sampler_names();
  int sampler = static_cast<int>(s.sampler);
  const bool sampler_open = ImGui::BeginCombo("sampler", sampler_name(s.sampler));
  if (!sampler_open)
    p.ui.layout_audit.check_text("sampler combo", sampler_name(s.sampler), last_frame_inner_width(true, "sampler"));
  if (sampler_open) {
    for (int i = 0; i < int(kSamplerNames.size()); ++i) {
      // flow-heun steps in the flow level s: offered on flow runs only (else plan_run refuses it; the error line).
      const bool runs = parse_sampler(kSamplerNames[i]) != Sampler::FlowHeun || family == Family::Flow;
      if (!runs) ImGui::BeginDisabled();
      if (p.edit(ImGui::Selectable(kSamplerNames[i].c_str(), i == sampler)))
        s.sampler = parse_sampler(kSamplerNames[i]);
      if (!runs) ImGui::EndDisabled();
      if (!runs) tip(("FlowMatchHeun's step in the flow level s: flow models only (this run is " +
                      std::string(family_name(family)) + ")").c_str());
    }
    ImGui::EndCombo();
  }
  tip("ddim: deterministic with eta 0, spreads its steps over all timesteps (the default)\n"
      "ddpm: stochastic, one timestep per step\nddpm-mean: the reference kernel's posterior mean\n"
      "dpmpp-2m, dpmpp-2m-sde, euler-ancestral, heun: the k-diffusion / DPM-Solver++ / EDM solvers "
      "(SEMANTICS §3; heun evaluates the network twice per step)\n"
      "flow-euler: FlowMatchEuler's step (ddim with eta 0, any family)\nflow-heun: FlowMatchHeun's (flow models only)");
  const bool per_t = s.sampler == Sampler::Ddpm || s.sampler == Sampler::DdpmMean;
  static const std::vector<std::string> kSpacingNames = spacing_names();
  if (per_t) ImGui::BeginDisabled();
  const char* spacing_shown = per_t ? "default" : spacing_name(s.spacing);
  const bool spacing_open = ImGui::BeginCombo("spacing", spacing_shown);
  if (!spacing_open)
    p.ui.layout_audit.check_text("spacing combo", spacing_shown, last_frame_inner_width(true, "spacing"));
  if (spacing_open) {
    for (const std::string& n : kSpacingNames)
      if (p.edit(ImGui::Selectable(n.c_str(), n == spacing_name(s.spacing)))) s.spacing = parse_spacing(n);
    ImGui::EndCombo();
  }
  if (per_t) ImGui::EndDisabled();
  tip(per_t ? "ddpm and ddpm-mean take one timestep per step: the spacing does not apply"
            : "which timesteps the steps visit: default (anchored at t_start), diffusers' leading / linspace / "
              "trailing, or karras sigmas (rho 7); SEMANTICS §3");
  if (family == Family::Flow) {
    flow_shift_row(p);
  } else if (s.flow_shift) {  // set (a script, a restore) but not read by this family's run: say so
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.75f, 0.35f, 1));
    ImGui::TextWrapped("flow_shift %g applies to flow lists only; this run is %s", *s.flow_shift, family_name(family));
    ImGui::PopStyleColor();
  }
  if (s.sampler == Sampler::DdpmMean) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.75f, 0.35f, 1));
    ImGui::TextWrapped("ddpm-mean: the reference kernel's update; it collapses from pure noise. Use it with "
                       "\"start from data\" for short denoising.");
    ImGui::PopStyleColor();
  }
  if (s.sampler == Sampler::Ddim) {
    float eta = static_cast<float>(s.eta);
    if (p.edit(ImGui::SliderFloat("eta", &eta, float(kEtaMin), float(kEtaMax), "%.2f", ImGuiSliderFlags_AlwaysClamp)))
      s.eta = eta;
    tip("ddim noise scale: 0 deterministic, 1 as stochastic as ddpm");
  }
}

// Samples, t_start, steps (with ddpm's one-timestep-per-step note), steps per launch, seed, start from data.
void run_size_rows(Panel& p) {
  const App& app = p.app;
  SamplingSettings& s = p.settings.sampling;
  const bool gpu = app.session().compute_path() && app.session().compute_path()->is_gpu();
  const ImGuiSliderFlags clamp = ImGuiSliderFlags_AlwaysClamp;
  // The slider bounds are base/ranges.h's ranges (SamplingSession::apply clamps typed values into the same).
  const bool has_model = app.session().has_model();
  const Family family = settings_family(p);
  const bool index = t_start_is_index(family);  // flow, edm: t_start is an index into the list (FAMILIES.md)
  const bool per_t = !index && (s.sampler == Sampler::Ddpm || s.sampler == Sampler::DdpmMean);
  const IntRange n_range = sample_count_range(gpu);
  p.edit(ImGui::SliderInt("samples", &s.n_samples, int(n_range.lo), int(n_range.hi), "%d",
                          clamp | ImGuiSliderFlags_Logarithmic));
  tip("number of samples B (points); Ctrl+click to type");
  if (index) {  // the list first: t_start's range depends on steps
    const IntRange steps_range = has_model ? family_steps_range(app.session().model(), family, 0) : IntRange{1, 1000};
    p.edit(ImGui::SliderInt("steps", &s.steps, int(steps_range.lo), int(steps_range.hi), "%d",
                            clamp | ImGuiSliderFlags_Logarithmic));
    tip("number of levels N of the family's list (flow: FlowMatchEuler's, edm: karras); the run takes N - start "
        "index steps");
    p.edit(ImGui::SliderInt("start index", &s.t_start, 0, std::max(0, s.steps - 1), "%d", clamp));
    tip("t_start on a flow or edm list: the index of the first step in the list (0: pure noise, larger starts "
        "closer to the data); the run has N - index + 1 frames");
  } else {
    const IntRange t_range = has_model ? t_start_range(app.session().model().schedule) : IntRange{0, 999};
    p.edit(ImGui::SliderInt("t_start", &s.t_start, int(t_range.lo), int(t_range.hi), "%d", clamp));
    tip("the timestep the run starts from: T-1 is pure noise, smaller starts closer to the data");
    const IntRange steps_range = sample_steps_range(std::max(0, s.t_start));
    p.edit(ImGui::SliderInt("steps", &s.steps, int(steps_range.lo), int(steps_range.hi), "%d",
                            clamp | ImGuiSliderFlags_Logarithmic));
    tip("number of sampler steps N, in [1, t_start + 1]; the run has N + 1 frames");
  }
  if (per_t && s.steps < s.t_start + 1) {  // SEMANTICS §3: one timestep per step
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.75f, 0.35f, 1));
    ImGui::TextWrapped("%s takes one timestep per step: %s from t_start %d end at t = %d, not at clean "
                       "data (steps = t_start + 1 = %d reaches it; ddim spreads fewer steps over all t).",
                       s.sampler == Sampler::Ddpm ? "ddpm" : "ddpm-mean", count_noun(s.steps, "step").c_str(), s.t_start,
                       s.t_start - s.steps + 1, s.t_start + 1);
    ImGui::PopStyleColor();
  }
  p.edit(ImGui::SliderInt("steps/launch", &s.steps_per_launch, 1, std::max(1, std::min(s.steps, 200)), "%d", clamp));
  tip("S of the fused kernel: steps computed per launch (the numbers do not change)");
  p.edit(ImGui::InputScalar("seed", ImGuiDataType_U64, &s.seed));
  tip("Philox seed of the start noise and the sampler noise (the same samples on the CPU and the GPU)");
  ImGui::SameLine();
  if (p.edit(ImGui::SmallButton("+1"))) s.seed += 1;
  tip("the next seed: a new run");
  const bool has_data = app.session().has_model() && app.session().model().n_data > 0;
  if (!has_data) ImGui::BeginDisabled();
  p.edit(ImGui::Checkbox("start from data", &s.from_data));
  if (!has_data) ImGui::EndDisabled();
  tip("noise the model's data samples to t_start, then denoise: how far from the data they land");
}

// Precision, backend and the trajectory's memory budget.
void device_rows(Panel& p) {
  const App& app = p.app;
  SamplingSettings& s = p.settings.sampling;
  const bool gpu = app.session().compute_path() && app.session().compute_path()->is_gpu();
  // Without a GPU the combo is disabled and says why in its own box (no text beside it to cut off).
  static const char* kPrecisions[] = {"fp32", "tf32", "bf16", "fp16"};
  constexpr int kCount = static_cast<int>(std::size(kPrecisions));
  const int precision = std::clamp(static_cast<int>(s.precision), 0, kCount - 1);
  const std::string preview = std::string(kPrecisions[precision]) + (gpu ? "" : "  (GPU only)");
  if (!gpu) ImGui::BeginDisabled();
  const bool precision_open = ImGui::BeginCombo("precision", preview.c_str());
  if (!precision_open)
    p.ui.layout_audit.check_text("precision combo", preview, last_frame_inner_width(true, "precision"));
  if (precision_open) {
    for (int i = 0; i < kCount; ++i)
      if (p.edit(ImGui::Selectable(kPrecisions[i], i == precision))) s.precision = static_cast<Precision>(i);
    ImGui::EndCombo();
  }
  if (!gpu) ImGui::EndDisabled();
  tip(gpu ? "precision of the fused CUDA kernels: fp32, or tf32 / bf16 / fp16 on tensor cores (faster; error in "
            "the kernel panel)"
          : "precision of the fused CUDA kernels; the CPU backend computes in fp32");

  const bool have_cuda = app.cuda_available();
  static const char* kBackends[] = {"auto", "cpu", "cuda"};
  int b = app.backend_choice() == "cpu" ? 1 : app.backend_choice() == "cuda" ? 2 : 0;
  if (ImGui::Combo("backend", &b, kBackends, 3)) p.push(Action::select_backend(kBackends[b]));
  tip("auto: the GPU when there is one, else the CPU; the status strip says which path runs");
  if (!have_cuda && b == 2) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("no CUDA device here: running on the CPU");
    ImGui::PopStyleColor();
  }
  p.edit(ImGui::SliderInt("budget MB", &s.memory_budget_mb, 16, std::min(8192, app.max_budget_mb()), "%d",
                          ImGuiSliderFlags_AlwaysClamp | ImGuiSliderFlags_Logarithmic));
  tip("trajectory memory budget; above it every k-th frame is kept");
}

// The run's progress, its layout and time, its error, and Re-simulate.
void run_status_rows(Panel& p) {
  const App& app = p.app;

  // Progress of the re-simulation.
  const float prog = static_cast<float>(app.session().progress());
  char buf[96];
  std::snprintf(buf, sizeof buf, "%d / %s%s", app.session().computed_steps(),
                count_noun(app.session().n_steps(), "step").c_str(),
                app.session().overflow_frame() >= 0 ? ": overflowed (not finite)" : "");
  ImGui::ProgressBar(prog, ImVec2(-1, 0), buf);
  if (app.session().layout().n_slots > 0) ImGui::TextDisabled("%s", app.session().layout().describe().c_str());
  if (app.session().runs_completed() > 0) {
    // On the GPU a run's steps are only enqueued here (the frame never waits: PERFORMANCE.md "The live loop");
    // their GPU time is the kernel panel's "GPU: ... steps in ... ms", read when the GPU has finished.
    const bool gpu = app.session().compute_path() && app.session().compute_path()->is_gpu();
    ImGui::TextDisabled(gpu ? "last run enqueued in %.1f ms" : "last run: %.1f ms", app.session().last_run_ms());
    if (gpu) tip("the GPU runs the steps asynchronously; their GPU time is in Kernels & timing (per frame)");
  }
  if (!app.session().error().empty()) {  // long (e.g. out of GPU memory + the settings kept): wrapped
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.45f, 0.4f, 1));
    ImGui::TextWrapped("%s", app.session().error().c_str());
    ImGui::PopStyleColor();
  }
  if (ImGui::Button("Re-simulate")) p.push(Action::simple(ActionKind::RestartRun));
  tip("run again with the same settings (same seed: the same samples)");
}

}  // namespace

void panel_sampling(Panel& p) {
  sampler_rows(p);
  run_size_rows(p);
  device_rows(p);
  run_status_rows(p);
}

}  // namespace diffscope::ui
