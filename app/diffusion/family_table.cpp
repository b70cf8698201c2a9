// family_table.cpp — step tables of every solver on every model family (see family_table.h; SEMANTICS §2, §3).
#include "diffusion/family_table.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/arg_error.h"
#include "base/errors.h"
#include "diffusion/input_checks.h"

namespace diffscope {

bool is_vp_family(Family f) { return f == Family::Epsilon || f == Family::Sample || f == Family::VPrediction; }

bool is_plain_epsilon(const FamilyParams& p) {
  return p.family == Family::Epsilon && p.time_input == TimeInput::TOverT;
}

LevelRun vp_level_run(const Schedule& sched, const StepTable& tab) {
  LevelRun run;
  run.spacing = tab.spacing;
  run.t = tab.t;
  run.t_net = tab.t_net;
  run.noise_key = tab.noise_key;
  run.levels = vp_levels(tab, sched);
  return run;
}

LevelRun list_level_run(Family family, const Schedule& sched, const std::vector<double>& levels, int first) {
  const int N = static_cast<int>(levels.size()) - 1;
  check_arg_range(Arg::TStart, first, 0, N - 1);
  LevelRun run;
  run.vp_list = false;
  run.spacing = Spacing::Karras;  // a continuous list: keys T + 2 + k (SEMANTICS §7)
  const std::vector<double> own(levels.begin() + first, levels.end());
  std::vector<NoiseLevel> lv = noise_levels(family, own);
  for (size_t k = 0; k + 1 < lv.size(); ++k) {
    const double S = lv[k].ve_sigma();
    const double t = std::isfinite(S) ? timestep_of_sigma(sched, S) : sched.T - 1;
    if (is_vp_family(family)) lv[k].time = t;  // the VP families' network reads this timestep
    run.t_net.push_back(t);
    run.t.push_back(static_cast<int32_t>(std::lround(t)));
    run.noise_key.push_back(static_cast<uint32_t>(sched.T + 2 + static_cast<int>(k)));
  }
  run.levels = lv;
  return run;
}

namespace {

// The factor from the family's state to the VP state of the same signal-to-noise ratio: 1 on the VP families
// (exactly: their state is the VP state), 1 / sqrt(alpha^2 + sigma^2) for flow and edm.
double vp_scale(Family f, const NoiseLevel& lv) { return is_vp_family(f) ? 1.0 : lv.vp_scale(); }

// The noisiest VP level a §3 solver divides by: abar = 0 (zero terminal SNR) is taken as 2^-24, as diffusers'
// Euler and DPM-Solver schedulers clamp it.
double solver_abar(double abar) { return abar > 0 ? abar : 0x1p-24; }

struct Maps {
  FamilyParams run;  // the run's family (levels, states)
  FamilyParams out;  // the map of the model's output (the run's; epsilon's for an analytic model)
  bool analytic = false;
};

// eps at the solver's VP level (clamped abar) from the family's data prediction: eps = (k x - alpha_c D) / sigma_c
// with D = dx x + d_out o, as (ex, e_out) in the family's state.
OutputMap solver_eps(const Maps& m, const NoiseLevel& lv, double abar_c) {
  OutputMap om = output_map(m.out, lv);
  const double k = vp_scale(m.run.family, lv), a = std::sqrt(abar_c), b = std::sqrt(1.0 - abar_c);
  om.ex = (k - a * om.dx) / b;
  om.e_out = -a * om.d_out / b;
  return om;
}

void push_input(StepTable& tab, const Maps& m, const NoiseLevel& lv, bool second) {
  NetworkInput in = network_input(m.out, lv);
  if (m.analytic) in = {vp_scale(m.run.family, lv), lv.time};
  (second ? tab.c_in2 : tab.c_in).push_back(in.c_in);
  (second ? tab.time2 : tab.time).push_back(in.time);
}

void push_row(StepTable& tab, double A, double C, double S) {
  tab.A.push_back(A);
  tab.C.push_back(C);
  tab.S.push_back(S);
}

// ddim (eta), flow-euler, ddpm (eta 1), ddpm-mean (eta 1, no noise): the one DDIM step in the family.
void ddim_family_rows(StepTable& tab, const Maps& m, const LevelRun& run, double eta, bool noise) {
  for (int k = 0; k < run.steps(); ++k) {
    const StepRow r = family_ddim_row(m.out, run.levels[k], run.levels[k + 1], eta);
    push_row(tab, r.A, r.C, noise ? r.S : 0.0);
  }
}

// §3's VP rows (x_vp' = A x_vp + C eps + P prev + S z, heun's H) carried to the family's state: x_vp = k x,
// eps = ex x + e_out o (solver_eps), x' = x_vp' / k'.
void vp_family_rows(StepTable& tab, const Maps& m, const LevelRun& run) {
  StepTable vp;
  vp.sampler = tab.sampler;
  for (int k = 0; k < run.steps(); ++k) {
    vp.abar.push_back(solver_abar(run.levels[k].vp_abar()));
    vp.t_net.push_back(run.t_net[k]);
  }
  vp_solver_rows(vp, run.levels.back().vp_abar());
  for (int k = 0; k < run.steps(); ++k) {
    const NoiseLevel &cur = run.levels[k], &next = run.levels[k + 1];
    const OutputMap e = solver_eps(m, cur, vp.abar[k]);
    const double kc = vp_scale(m.run.family, cur), kn = vp_scale(m.run.family, next);
    push_row(tab, (vp.A[k] * kc + vp.C[k] * e.ex) / kn, vp.C[k] * e.e_out / kn, vp.S[k] / kn);
    if (!vp.P.empty()) {
      tab.P.push_back(vp.P[k] / kn);
      tab.Dx.push_back(e.dx);
      tab.De.push_back(e.d_out);
    }
    if (!vp.H.empty()) {
      const bool second = vp.H[k] != 0.0;
      const OutputMap e2 = second ? solver_eps(m, next, solver_abar(next.vp_abar())) : OutputMap{};
      tab.H.push_back(vp.H[k] / kn);
      tab.Gx.push_back(e.ex);
      tab.Go.push_back(e.e_out);
      tab.Gx2.push_back(e2.ex);
      tab.Go2.push_back(e2.e_out);
    }
  }
}

// FlowMatchHeun (Heun in s on x_s, derivative v = eps - D; the step to s = 0 Euler only): y = x + h d,
// x <- y + (h / 2) (d2 - d), d = (ex - dx) x + (e_out - d_out) o.
void flow_heun_rows(StepTable& tab, const Maps& m, const LevelRun& run) {
  for (int k = 0; k < run.steps(); ++k) {
    const NoiseLevel &cur = run.levels[k], &next = run.levels[k + 1];
    const OutputMap c = output_map(m.out, cur);
    const double h = next.sigma - cur.sigma;
    push_row(tab, 1.0 + h * (c.ex - c.dx), h * (c.e_out - c.d_out), 0.0);
    const bool second = next.sigma > 0;
    const OutputMap n = second ? output_map(m.out, next) : OutputMap{};
    tab.H.push_back(second ? 0.5 * h : 0.0);
    tab.Gx.push_back(c.ex - c.dx);
    tab.Go.push_back(c.e_out - c.d_out);
    tab.Gx2.push_back(n.ex - n.dx);
    tab.Go2.push_back(n.e_out - n.d_out);
  }
}

}  // namespace

StepTable build_family_table(const FamilyParams& p, bool analytic, const LevelRun& run, Sampler sampler, double eta,
                             int T) {
  if (sampler == Sampler::Ddim) check_eta(eta);
  if (sampler == Sampler::FlowHeun && p.family != Family::Flow)
    throw ArgumentError(Arg::Sampler, "flow-heun", "a flow run's sampler",
                        arg_ref(Arg::Sampler) + " = flow-heun steps in the flow level s: it runs flow models only (this "
                                                "run is " + std::string(family_name(p.family)) + "); valid here: heun");
  Maps m{p, p, analytic};
  if (analytic) m.out = FamilyParams{};  // the exact eps: the epsilon map on the run's levels
  StepTable tab;
  tab.sampler = sampler;
  tab.spacing = run.spacing;
  tab.T = T;
  tab.eta = sampler == Sampler::Ddim ? eta : 0.0;
  tab.family = p;
  tab.t = run.t;
  tab.t_net = run.t_net;
  tab.noise_key = run.noise_key;
  tab.levels = run.levels;
  for (int k = 0; k < run.steps(); ++k) {
    tab.abar.push_back(run.levels[k].vp_abar());
    push_input(tab, m, run.levels[k], false);
  }
  switch (sampler) {
    case Sampler::Ddim: ddim_family_rows(tab, m, run, eta, true); break;
    case Sampler::FlowEuler: ddim_family_rows(tab, m, run, 0.0, false); break;
    case Sampler::Ddpm: ddim_family_rows(tab, m, run, 1.0, true); break;
    case Sampler::DdpmMean: ddim_family_rows(tab, m, run, 1.0, false); break;
    case Sampler::FlowHeun: flow_heun_rows(tab, m, run); break;
    default: vp_family_rows(tab, m, run); break;
  }
  if (!tab.H.empty())
    for (int k = 0; k < run.steps(); ++k) {
      tab.t_net2.push_back(k + 1 < run.steps() ? run.t_net[k + 1] : 0.0);
      tab.abar2.push_back(run.levels[k + 1].vp_abar());
      push_input(tab, m, run.levels[k + 1].sigma > 0 ? run.levels[k + 1] : run.levels[k], true);
    }
  fill_float_copies(tab);
  return tab;
}

}  // namespace diffscope
