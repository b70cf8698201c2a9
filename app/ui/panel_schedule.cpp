// panel_schedule.cpp — the Schedule section: per step of the current run its timestep t, abar,
// sigma, logSNR and step size as plots with the shown frame marked; for analytic models the error of every
// frame against the exact ODE and the final error against network evaluations for the current solver
// (diffusion/exact_lab.h: computed in the background on the CPU, never read back from the GPU).
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

#include "base/words.h"
#include "diffusion/exact_lab.h"
#include "diffusion/sampling.h"
#include "run/run_plan.h"
#include "session/field_view.h"
#include "session/sampling_session.h"
#include "ui/app.h"
#include "ui/widgets/mini_plot.h"
#include "ui/panels.h"

namespace diffscope::ui {
namespace {

// Rows of the run the lab replays (its first rows: the same start state as the run's).
constexpr int kLabRows = 128;
const int kStepCounts[] = {4, 8, 16, 32, 64, 128, 256};

const ImU32 kBlue = IM_COL32(120, 180, 255, 255), kOrange = IM_COL32(255, 160, 70, 255),
            kGreen = IM_COL32(130, 220, 130, 255), kGrey = IM_COL32(150, 150, 160, 200);

// Per-step series of a table (x = step k), cached by the table's identity.
struct Series {
  std::vector<double> k, t, abar, sigma, log_snr, h;
};

Series series_of(const StepTable& tab) {
  Series s;
  const int N = tab.steps();
  for (int k = 0; k < N; ++k) {
    const double a = tab.abar[k], an = k + 1 < N ? tab.abar[k + 1] : 1.0;
    s.k.push_back(k);
    s.t.push_back(tab.t_net[k]);
    s.abar.push_back(a);
    s.sigma.push_back(std::sqrt((1.0 - a) / a));
    s.log_snr.push_back(std::log(a / (1.0 - a)));
    // h = lambda_{k+1} - lambda_k with lambda = logSNR / 2 (the solvers' step, SEMANTICS §3); infinite on the
    // last step to abar = 1, which is left out.
    s.h.push_back(an < 1.0 ? 0.5 * (std::log(an / (1.0 - an)) - std::log(a / (1.0 - a))) : NAN);
  }
  return s;
}

std::string lab_key(const App& app) {
  const SamplingSettings& s = app.session().settings();
  const StepTable& tab = app.session().table();
  char b[512];
  std::snprintf(b, sizeof b, "%s|%s|%s|%s|%.17g|%d|%d|%d|%llu|%d|%d", app.session().model().path.c_str(),
                app.session().model().schedule.source.c_str(), sampler_name(tab.sampler), spacing_name(tab.spacing),
                tab.eta, tab.steps(), tab.steps_offset, s.t_start, static_cast<unsigned long long>(s.seed),
                s.from_data ? 1 : 0, std::min(s.n_samples, kLabRows));
  return b;
}

// Starts the lab for the current run when its settings changed (a no-op otherwise).
void update_lab(Panel& p) {
  const App& app = p.app;
  const std::string key = lab_key(app);
  if (!p.ui.exact_lab) p.ui.exact_lab = std::make_unique<ExactLab>();
  if (key == p.ui.exact_lab->key()) return;
  const SamplingSettings& s = app.session().settings();
  ExactLabRequest req;
  req.model = std::make_shared<DiffusionModel>(app.session().model());
  req.table = app.session().table();
  req.rows = std::min(s.n_samples, kLabRows);
  req.seed = s.seed;
  req.t_start = s.t_start;
  const int dim = req.model->net.dim;
  std::vector<float> x(static_cast<size_t>(req.rows) * dim);
  if (s.from_data)
    fill_start_from_data(*req.model, s.t_start, s.seed, req.rows, x.data());
  else
    fill_start_noise(*req.model, s.seed, req.rows, x.data());
  if (!s.from_data) scale_start_noise(req.table, x.size(), x.data());  // a flow or edm start, as the run's
  req.x_start.assign(x.begin(), x.end());
  if (on_family_list(req.table) || req.table.has_family_rows()) {
    // A family run: the curve's runs are the same plan with N steps (on a list: N steps from the same start index).
    const bool list = on_family_list(req.table);
    std::optional<SchedulerConfig> config;
    if (const SchedulerConfig* c = app.session().scheduler_config()) config = *c;
    req.table_for_steps = [model = req.model, s, config, list](int n) {
      SampleRequest r = session_request(s, config ? &*config : nullptr, false, 0, model.get());
      r.steps = list ? n + s.t_start : n;
      r.n = kLabRows;
      r.keep_frames = false;
      return plan_run(r, *model).table;
    };
    for (int n : kStepCounts)
      if (list || n <= s.t_start + 1) req.step_counts.push_back(n);
  } else {
    for (int n : kStepCounts)
      if (n <= s.t_start + 1) req.step_counts.push_back(n);
  }
  p.ui.exact_lab->start(key, std::move(req));
}

void schedule_plots(Panel& p, const StepTable& tab) {
  const App& app = p.app;
  static Series cache;
  static std::vector<double> cache_key;
  const std::vector<double> key = {double(tab.steps()), tab.abar.front(), tab.abar.back(), tab.t_net.front(),
                                   tab.t_net.back(), double(tab.spacing)};
  if (key != cache_key) cache = series_of(tab), cache_key = key;
  const Series& s = cache;
  const int j = app.shown_frame(), N = tab.steps();
  const float h = 46 * app.content_scale();
  char marker[48];
  std::snprintf(marker, sizeof marker, "frame %d", j);
  PlotSpec spec;
  spec.x_label = "step k";
  spec.has_marker = true;
  spec.marker_x = std::min(j, N - 1);
  spec.marker_label = marker;
  spec.height = h;
  const int k = std::min(j, N - 1);
  char title[160];
  auto plot = [&](const char* help, const std::vector<double>& y, ImU32 colour, bool points) {
    spec.title = title;
    spec.help = help;
    draw_plot(spec, {{s.k, y, colour, "", points}});
  };
  if (on_family_list(tab)) {  // the family's own level (flow s, EDM sigma), as the list gives it
    const bool flow = tab.family.family == Family::Flow;
    std::vector<double> level(N);
    for (int i = 0; i < N; ++i) level[i] = tab.levels[i].time;
    std::snprintf(title, sizeof title, flow ? "flow level s: %.4g" : "EDM sigma: %.4g", level[k]);
    plot(flow ? "the flow level s of step k (x_s = (1 - s) x0 + s eps; the list's shift applied)"
              : "the EDM noise level sigma of step k (x = x0 + sigma eps)",
         level, kBlue, false);
  }
  // An integer timestep as an integer (t: 999, not 999.0); karras' continuous ones with two decimals.
  std::snprintf(title, sizeof title, s.t[k] == std::floor(s.t[k]) ? "timestep t: %.0f" : "timestep t: %.2f", s.t[k]);
  plot("the network timestep of step k (continuous on karras, SEMANTICS §3)", s.t, kBlue, false);
  std::snprintf(title, sizeof title, "abar: %.4g", s.abar[k]);
  plot("abar = alphas_cumprod at step k's timestep", s.abar, kBlue, false);
  std::snprintf(title, sizeof title, "sigma (log scale): %.4g", s.sigma[k]);
  spec.log_y = true;
  plot("sigma = sqrt((1 - abar) / abar), the noise level of the variance-exploding state x / sqrt(abar)", s.sigma,
       kBlue, false);
  spec.log_y = false;
  std::snprintf(title, sizeof title, "logSNR: %.4g", s.log_snr[k]);
  plot("logSNR = log(abar / (1 - abar)) = -2 log sigma", s.log_snr, kBlue, false);
  if (std::isfinite(s.h[k]))
    std::snprintf(title, sizeof title, "step size h: %.4g", s.h[k]);
  else
    std::snprintf(title, sizeof title, "step size h: infinite (to sigma = 0)");
  plot("h = lambda(k+1) - lambda(k) with lambda = logSNR / 2, the step the solvers take (SEMANTICS §3); the last "
       "step, to abar = 1 (sigma = 0), has h = infinity and is not drawn",
       s.h, kOrange, true);
}

void exact_plots(Panel& p, const StepTable& tab) {
  const App& app = p.app;
  if (!follows_the_ode(tab)) {
    ImGui::TextWrapped("Error vs the exact ODE: %s is stochastic (its samples follow other paths); choose ddim "
                       "with eta 0, heun or dpmpp-2m.", sampler_name(tab.sampler));
    return;
  }
  update_lab(p);
  const ExactLabResult r = p.ui.exact_lab->result();
  const float s = app.content_scale();
  if (p.ui.exact_lab->busy()) {
    ImGui::ProgressBar(float(p.ui.exact_lab->progress()), ImVec2(-1, 0), "computing the exact ODE (CPU, background)");
  }
  if (!r.error.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", r.error.c_str());
  const int j = app.shown_frame();
  if (r.frames_done && r.frame_error.size() == size_t(tab.steps() + 1)) {
    std::vector<double> x(r.frame_error.size());
    for (size_t i = 0; i < x.size(); ++i) x[i] = double(i);
    char title[160], marker[32];
    std::snprintf(title, sizeof title, "error vs exact ODE: %.3g",
                  r.frame_error[std::min<size_t>(j, r.frame_error.size() - 1)]);
    char help[256];
    std::snprintf(help, sizeof help,
                  "RMS over the first %s of |frame j - x*(sigma_j)|, x* the exact probability-flow ODE from the "
                  "same start (1e-10), the run replayed in float64 on the CPU; frame 0 is the start (error 0)",
                  count_noun(std::min(app.session().settings().n_samples, kLabRows), "row").c_str());
    std::snprintf(marker, sizeof marker, "frame %d", j);
    PlotSpec spec;
    spec.help = help;
    spec.title = title;
    spec.x_label = "frame j";
    spec.log_y = true;
    spec.has_marker = true;
    spec.marker_x = j;
    spec.marker_label = marker;
    spec.height = 60 * s;
    draw_plot(spec, {{x, r.frame_error, kGreen}});
  }
  if (r.curve.empty()) return;
  PlotLine curve{{}, {}, kBlue, sampler_name(tab.sampler), true};
  for (const EvalPoint& p : r.curve) curve.x.push_back(double(p.evaluations)), curve.y.push_back(p.error);
  std::vector<PlotLine> lines = {curve};
  // Slope guides through the first point: error ~ evaluations^-1 and ^-2 (first and second order).
  const double x0 = curve.x.front(), y0 = curve.y.front(), x1 = curve.x.back();
  lines.push_back({{x0, x1}, {y0, y0 * x0 / x1}, kGrey, "order 1", false, true, false});
  lines.push_back({{x0, x1}, {y0, y0 * std::pow(x0 / x1, 2)}, IM_COL32(200, 130, 200, 200), "order 2", false, true,
                   false});
  const int64_t evals = tab.evaluations(0, tab.steps());
  if (r.frames_done && !r.frame_error.empty())  // this run's own final error, from the per-frame errors
    lines.push_back({{double(evals)}, {r.frame_error.back()}, kOrange, "this run", true});
  PlotSpec spec;
  char title[160];
  std::snprintf(title, sizeof title, "final error vs evaluations%s", r.curve_done ? "" : " ...");
  spec.title = title;
  char help[512];
  std::snprintf(help, sizeof help,
                "RMS error of the final sample (sigma = 0) against the exact ODE sample, %s on the %s spacing from "
                "t_start %d with N = %d..%d steps (heun: 2N - 1 evaluations); dashed: slopes of order 1 and 2. Every run "
                "ends with the same step from sigma(0) to 0, which caps the error at large N (SEMANTICS §3)",
                sampler_name(tab.sampler), spacing_name(tab.spacing), app.session().settings().t_start,
                r.curve.front().steps, r.curve.back().steps);
  spec.help = help;
  spec.x_label = "evaluations";
  spec.log_x = spec.log_y = true;
  spec.has_marker = true;
  spec.marker_x = double(evals);
  char marker[48];
  std::snprintf(marker, sizeof marker, "%lld", static_cast<long long>(evals));
  spec.marker_label = marker;
  spec.height = 90 * s;
  draw_plot(spec, lines);
}

}  // namespace

void panel_schedule(Panel& p) {
  const App& app = p.app;
  if (!app.session().has_model() || app.session().n_steps() == 0) {
    ImGui::TextDisabled("no run");
    return;
  }
  const StepTable& tab = app.session().table();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  const int j = app.shown_frame();
  const char* marker = j < tab.steps() ? "the state before step k = j (values in the titles)"
                                       : "the result, after the last step (titles: the last step)";
  if (on_family_list(tab))  // t_start is the index of the first step in the family's list (FAMILIES.md)
    ImGui::TextWrapped("%s on the %s list, %s from index %d. Marker: the shown frame %d, %s", sampler_name(tab.sampler),
                       family_name(tab.family.family), count_noun(tab.steps(), "step").c_str(),
                       app.session().settings().t_start, j, marker);
  else
    ImGui::TextWrapped("%s, %s spacing, %s from t_start %d. Marker: the shown frame %d, %s", sampler_name(tab.sampler),
                       spacing_name(tab.spacing), count_noun(tab.steps(), "step").c_str(),
                       app.session().settings().t_start, j, marker);
  ImGui::PopStyleColor();
  schedule_plots(p, tab);
  ImGui::Separator();
  if (app.session().model().mixture)
    exact_plots(p, tab);
  else
    ImGui::TextWrapped("Error vs the exact answer: for analytic models (gaussians8-exact), whose exact ODE "
                       "solution is known.");
}

}  // namespace diffscope::ui
