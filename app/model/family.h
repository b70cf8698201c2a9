// family.h — model families (SEMANTICS §2.1): what a network's output `o` means at a noise level, the affine maps
// of (x, o) into the data prediction D and the noise eps, the network's input scale and time value, the noise-level
// lists of diffusers' flow and EDM schedulers (§3 "Noise-level lists of the families"), and the deterministic /
// DDIM first-order step written once against (D, eps). Host math only: float64 coefficients, applied to float or
// double rows by the templates at the end. Nothing here reads a file or a command line; the parse functions take
// the value of one __metadata__ (or config) key and throw InvalidInput naming the key, the value and the choices.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "model/gaussian_mixture.h"

namespace diffscope {

// What the network predicts (SEMANTICS §2.1). Epsilon, Sample, VPrediction live on the variance-preserving levels
// (alpha^2 + sigma^2 = 1); Flow on x_s = (1 - s) x0 + s eps; Edm on the variance-exploding x = x0 + sigma eps.
enum class Family { Epsilon, Sample, VPrediction, Flow, Edm };

// What the network reads as time (SEMANTICS §2.1 "Time input"). t: the VP timestep (continuous on continuous
// lists); s: the flow level; sigma: the EDM level; T: the number of training timesteps.
enum class TimeInput {
  TOverT,     // "t/T" (diffscope's networks, §2)
  T,          // "t" (diffusers' UNets: the timestep itself)
  TS,         // "T*s" (diffusers' flow timesteps: num_train_timesteps * s, 1000 s by default)
  S,          // "s"
  OneMinusS,  // "1-s" (flow with time running towards the data: torchcfm, Liu et al. 2022)
  CNoise,     // "c_noise" (Karras et al. 2022 Table 1: log(sigma) / 4)
  Sigma,      // "sigma"
  LogSigma,   // "log_sigma"
};

// The sign of a flow network's velocity: diffusers / SD3 predict eps - x0 (d x_s / ds); torchcfm-style models
// predict x0 - eps (the velocity towards the data).
enum class FlowVelocity { EpsMinusX0, X0MinusEps };

// Everything about a model that turns its output into (D, eps) and its level into the network's input.
struct FamilyParams {
  Family family = Family::Epsilon;
  TimeInput time_input = TimeInput::TOverT;
  int T = 1000;             // training timesteps: scales t/T and T*s
  double sigma_data = 0.5;  // edm: the data's standard deviation in the preconditioning (Karras et al. Table 1)
  bool edm_v = false;       // edm: c_out negated (diffusers' EDM schedulers' prediction_type v_prediction)
  FlowVelocity flow_velocity = FlowVelocity::EpsMinusX0;
  double flow_shift = 1.0;  // flow: the shift the file names for its noise-level list (1: none)
};

// Parses a prediction_type value: "epsilon", "sample", "v_prediction", "flow" (also "flow_prediction"), "edm".
// Throws InvalidInput "KEY = 'VALUE' is not a known value; supported: ..." (key: the key it was read from).
Family parse_family(const std::string& value, const std::string& key = "prediction_type");
const char* family_name(Family f);  // the canonical value: "epsilon", "sample", "v_prediction", "flow", "edm"
const char* family_choices();       // "epsilon, sample, v_prediction, flow (or flow_prediction), edm"

// Parses a time_input value valid for `family` ("t/T", "t" for the VP families; "T*s", "s", "1-s" for flow;
// "c_noise", "sigma", "log_sigma" for edm). Throws InvalidInput naming the key, the value and the values valid for
// that family.
TimeInput parse_time_input(const std::string& value, Family family, const std::string& key = "time_input");
const char* time_input_name(TimeInput t);
TimeInput default_time_input(Family f);  // t/T, t/T, t/T, T*s, c_noise

// Reads the family keys of a model file's __metadata__: prediction_type (absent: epsilon), time_input (absent: the
// family's default), sigma_data (edm only; > 0), edm_prediction_type (edm only: epsilon or v_prediction),
// flow_velocity (flow only: eps_minus_x0 or x0_minus_eps), shift (flow only; > 0), T (an integer >= 2, as §1).
// A key that only another family reads is refused, not ignored. Errors name `label`, the key, the value and the
// valid values (InvalidInput).
FamilyParams family_from_metadata(const std::map<std::string, std::string>& metadata, const std::string& label);

// One line for `info` and the GUI's model section: family, state, time input, velocity sign, terminal level.
std::string convention_line(const FamilyParams& p);

// One noise level: the state is x = alpha x0 + sigma eps. `time` is the family's own level variable (the VP
// timestep t, the flow s, the EDM sigma) from which the network's time input is computed.
struct NoiseLevel {
  double alpha = 1.0, sigma = 0.0, time = 0.0;
  // VP: alpha = sqrt(abar), sigma = sqrt(1 - abar) at timestep t (continuous on continuous lists).
  static NoiseLevel vp(double abar, double t);
  // Flow: alpha = 1 - s, sigma = s.
  static NoiseLevel flow(double s);
  // EDM (variance exploding): alpha = 1, sigma.
  static NoiseLevel ve(double sigma);
  // The variance-exploding level sigma / alpha (infinite at alpha = 0) and the VP-equivalent abar =
  // alpha^2 / (alpha^2 + sigma^2) (the Schedule section shows it for every family).
  double ve_sigma() const { return sigma / alpha; }
  double vp_abar() const { return alpha * alpha / (alpha * alpha + sigma * sigma); }
  // The factor that takes this family's state to the VP state of the same signal-to-noise ratio.
  double vp_scale() const { return 1.0 / std::sqrt(alpha * alpha + sigma * sigma); }
};

// The level of `family` with the same signal-to-noise ratio as VP abar (time left 0): the flow s = sqrt(1-abar) /
// (sqrt(abar) + sqrt(1-abar)), the EDM sigma = sqrt((1-abar)/abar), the VP level itself.
NoiseLevel level_at_abar(Family family, double abar);

// D = dx x + d_out o and eps = ex x + e_out o at one level (SEMANTICS §2.1), for x the family's state.
struct OutputMap {
  double dx = 0, d_out = 0, ex = 0, e_out = 0;
};
OutputMap output_map(const FamilyParams& p, const NoiseLevel& level);

// The inverse for closed-form models: the output o = ox x + o_eps eps that the family's network gives where eps is
// known (analytic mixtures, the Gaussian of the tests). Needs alpha > 0.
struct EpsToOutput {
  double ox = 0, o_eps = 0;
};
EpsToOutput output_from_eps(const FamilyParams& p, const NoiseLevel& level);

// What the network reads at a level: its input is c_in x and its time value `time` (SEMANTICS §2.1 "Time input").
// c_in = 1 but for edm (1 / sqrt(sigma^2 + sigma_data^2)).
struct NetworkInput {
  double c_in = 1.0, time = 0.0;
};
NetworkInput network_input(const FamilyParams& p, const NoiseLevel& level);

// DDIM (Song et al. 2021 eq. 12) between two levels in any family, x' = d D + e eps + z_coef z with
// c = eta alpha' S' sqrt(S^2 - S'^2) / S (S = sigma / alpha the VE levels), d = alpha', e = sqrt(sigma'^2 - c^2),
// z_coef = c. eta = 0 is the deterministic first-order step: FlowMatchEuler's x + (s' - s) v, EDMEuler's
// x + (sigma' - sigma)(x - D) / sigma and ddim's sqrt(abar') D + sqrt(1 - abar') eps are this one step.
struct DdimCoefficients {
  double d = 0, e = 0, z = 0;
};
DdimCoefficients ddim_coefficients(const NoiseLevel& cur, const NoiseLevel& next, double eta = 0.0);

// One step as the kernels take it: x' = A x + C o + P prev + S z, o the network's output at `cur`, prev the previous
// step's data prediction (dpmpp-2m(-sde); 0 otherwise). family_ddim_row folds the family's map into DDIM's
// coefficients: A = d dx + e ex, C = d d_out + e e_out, S = z_coef.
struct StepRow {
  double A = 0, C = 0, S = 0, P = 0;
};
StepRow family_ddim_row(const FamilyParams& p, const NoiseLevel& cur, const NoiseLevel& next, double eta = 0.0);

// Any solver row written for an eps model on the VP state (SEMANTICS §3's tables: x_vp' = A x_vp + C eps + P prev +
// S z between the VP-equivalent levels of cur and next) as a row of the family: x_vp = k x with k = cur.vp_scale(),
// x' = x_vp' / k', eps = ex x + e_out o, so A' = (A k + C ex) / k', C' = C e_out / k', P' = P / k', S' = S / k'. prev
// is the data prediction, the same in every family (D = dx x + d_out o of output_map). This is how every solver of
// §3 reaches every family as a host-side table change (heun's second evaluation excepted: run_heun).
StepRow fold_vp_row(const FamilyParams& p, const NoiseLevel& cur, const NoiseLevel& next, const StepRow& vp_row);

// The first-order steps as diffusers writes them (for the tests that show they are the one step above):
// FlowMatchEulerDiscreteScheduler.step: x + (s_next - s) v; EDMEulerScheduler.step (s_churn = 0): x + (sigma_next -
// sigma) (x - D) / sigma.
double flow_euler_update(double x, double v, double s, double s_next);
double edm_euler_update(double x, double D, double sigma, double sigma_next);

// A list of levels as a diffusers scheduler computes it: levels (N + 1 values, the family's own noise level of
// each step and the level after the last step) and timesteps (N values, what the scheduler passes the network).
struct LevelList {
  std::vector<double> levels;
  std::vector<double> timesteps;
};

// The shift of flow levels, s' = shift s / (1 + (shift - 1) s) (SD3, Esser et al. 2024 eq. 23), and diffusers'
// dynamic (resolution-dependent) shift with an explicit mu, s' = e^mu / (e^mu + (1/s - 1)).
double flow_shift(double s, double shift);
double flow_time_shift(double s, double mu);

// FlowMatchEulerDiscreteScheduler (diffusers scheduling_flow_match_euler_discrete.py): __init__ shifts the
// training levels i / T in float32 (sigma_min = the shifted 1 / T), set_timesteps spaces N values from sigma_max *
// T to sigma_min * T (numpy linspace), divides by T, shifts again (or time_shift with mu when dynamic), stretches
// to shift_terminal when > 0, appends 0; timesteps T s. levels in float64 (diffusers' are these rounded to
// float32). Throws InvalidInput for n_steps < 1, T < 2, shift <= 0, shift_terminal outside [0, 1).
struct FlowMatchEulerConfig {
  int T = 1000;
  double shift = 1.0;
  bool use_dynamic_shifting = false;
  double mu = 0.0;              // used when use_dynamic_shifting
  double shift_terminal = 0.0;  // 0: none
};
LevelList flow_match_euler_levels(const FlowMatchEulerConfig& c, int n_steps);

// DPMSolverMultistepScheduler / UniPCMultistepScheduler with use_flow_sigmas (diffusers set_timesteps): alphas =
// linspace(1, 1/T, N + 1), s = 1 - alphas shifted by flow_shift, reversed, the last (0) dropped: N values from the
// shifted 1 - 1/T; final_sigmas_type zero appends 0; timesteps T s truncated to integers (astype int64).
LevelList dpm_flow_levels(int T, double flow_shift, int n_steps);

// EDM's lists (diffusers scheduling_edm_euler.py EDMEulerScheduler.set_timesteps): karras (Karras et al. 2022
// eq. 5), sigma_i = (sigma_max^(1/rho) + ramp_i (sigma_min^(1/rho) - sigma_max^(1/rho)))^rho with ramp =
// torch.linspace(0, 1, N); exponential, exp(linspace(log sigma_min, log sigma_max, N)) reversed (N = 1 gives
// sigma_min, as torch's linspace does); then 0 (final_sigmas_type zero) or sigma_i's last (sigma_min);
// timesteps c_noise = log(sigma) / 4. Throws InvalidInput unless 0 < sigma_min < sigma_max, rho > 0, n_steps >= 1.
enum class EdmSchedule { Karras, Exponential };
struct EdmConfig {
  double sigma_min = 0.002, sigma_max = 80.0, sigma_data = 0.5, rho = 7.0;
  EdmSchedule schedule = EdmSchedule::Karras;
  bool final_sigma_zero = true;
};
LevelList edm_levels(const EdmConfig& c, int n_steps);

// numpy.linspace(start, stop, num) as numpy computes it (step = (stop - start) / (num - 1); y_i = i step + start;
// the last value stop) and torch.linspace (the second half counted back from the end), for the lists above.
std::vector<double> numpy_linspace(double start, double stop, int num);
std::vector<double> torch_linspace(double start, double stop, int num);

// The levels of a LevelList as NoiseLevels of `family`: flow s, edm sigma; for the VP families a VE sigma S, as
// abar = 1 / (1 + S^2) (time 0: the caller sets the timestep).
std::vector<NoiseLevel> noise_levels(Family family, const std::vector<double>& levels);

// --- Rows: the maps above applied to n values (x, o, D, eps, z: n values each, any layout, float or double; the
// float path rounds the coefficients to float first, as the kernels read them). ---

template <class Real>
void predictions(const OutputMap& m, const Real* x, const Real* o, int64_t n, Real* D, Real* eps) {
  const Real dx = Real(m.dx), d_out = Real(m.d_out), ex = Real(m.ex), e_out = Real(m.e_out);
  for (int64_t i = 0; i < n; ++i) {
    D[i] = dx * x[i] + d_out * o[i];
    eps[i] = ex * x[i] + e_out * o[i];
  }
}

// x' = A x + C o (+ S z when z is given).
template <class Real>
void apply_step(const StepRow& r, const Real* x, const Real* o, const Real* z, int64_t n, Real* out) {
  const Real A = Real(r.A), C = Real(r.C), S = Real(r.S);
  for (int64_t i = 0; i < n; ++i) out[i] = A * x[i] + C * o[i] + (z ? S * z[i] : Real(0));
}

// An analytic mixture's output in any family (SEMANTICS §6: its eps is exact at every level): eps at the VP state of
// the same signal-to-noise ratio (x_vp = vp_scale x, abar = vp_abar), then o = ox x + o_eps eps. x, o: one row of
// m.dim values in the family's state; scratch: m.dim + m.K values. Needs alpha > 0 (output_from_eps).
template <class Real>
void mixture_output_row(const FamilyParams& p, const NoiseLevel& level, const GaussianMixture& m, const Real* x,
                        Real* o, Real* scratch) {
  const EpsToOutput inv = output_from_eps(p, level);
  const Real k = Real(level.vp_scale()), ox = Real(inv.ox), oe = Real(inv.o_eps);
  Real* x_vp = scratch;
  for (int j = 0; j < m.dim; ++j) x_vp[j] = k * x[j];
  mixture_eps_row<Real>(m, x_vp, level.vp_abar(), o, scratch + m.dim);  // o holds eps, then the output
  for (int j = 0; j < m.dim; ++j) o[j] = ox * x[j] + oe * o[j];
}

// A whole deterministic or DDIM run over `levels` (levels.size() - 1 steps) in any family. net(x_in, time, n, o)
// writes the network's output for the n values x_in = c_in x at the time value `time`; z(k, n, out) the step k's
// noise (called only when eta > 0). x: n values, in/out (the family's state at levels[0], then at levels.back()).
template <class Real, class Net, class Noise>
void run_ddim(const FamilyParams& p, const std::vector<NoiseLevel>& levels, double eta, Net&& net, Noise&& noise,
              Real* x, int64_t n) {
  std::vector<Real> xin(n), o(n), z(eta > 0 ? n : 0);
  for (size_t k = 0; k + 1 < levels.size(); ++k) {
    const NetworkInput in = network_input(p, levels[k]);
    for (int64_t i = 0; i < n; ++i) xin[i] = Real(in.c_in) * x[i];
    net(xin.data(), in.time, n, o.data());
    if (eta > 0) noise(static_cast<int>(k), n, z.data());
    apply_step(family_ddim_row(p, levels[k], levels[k + 1], eta), x, o.data(), eta > 0 ? z.data() : nullptr, n, x);
  }
}

// Heun's method (Karras et al. 2022 Algorithm 1, deterministic) in the family's own coordinate, the last step (to
// sigma = 0) Euler only: flow steps in s on x_s with the derivative v = eps - D (FlowMatchHeunDiscreteScheduler.step,
// "flow-heun"); the other families step in the VE level S on x / alpha with the derivative eps (§3's heun;
// EDMEuler's order-2 counterpart). N steps evaluate the network 2N - 1 times. Arguments as run_ddim's.
template <class Real, class Net>
void run_heun(const FamilyParams& p, const std::vector<NoiseLevel>& levels, Net&& net, Real* x, int64_t n) {
  const bool flow = p.family == Family::Flow;
  std::vector<Real> xin(n), o(n), D(n), eps(n), y(n), d1(n), d2(n);
  // The derivative in the coordinate (flow: d x_s / ds; else d (x / alpha) / dS) at state xs and level lv.
  const auto derivative = [&](const Real* xs, const NoiseLevel& lv, Real* d) {
    const NetworkInput in = network_input(p, lv);
    for (int64_t i = 0; i < n; ++i) xin[i] = Real(in.c_in) * xs[i];
    net(xin.data(), in.time, n, o.data());
    predictions(output_map(p, lv), xs, o.data(), n, D.data(), eps.data());
    for (int64_t i = 0; i < n; ++i) d[i] = flow ? eps[i] - D[i] : eps[i];
  };
  // The coordinate's level and the factor from the family's state into the coordinate's state.
  const auto tau = [&](const NoiseLevel& lv) { return flow ? lv.sigma : lv.sigma / lv.alpha; };
  const auto to_coord = [&](const NoiseLevel& lv) { return flow ? 1.0 : 1.0 / lv.alpha; };
  for (size_t k = 0; k + 1 < levels.size(); ++k) {
    const NoiseLevel &cur = levels[k], &next = levels[k + 1];
    const Real h = Real(tau(next) - tau(cur)), a = Real(to_coord(cur)), b = Real(1.0 / to_coord(next));
    derivative(x, cur, d1.data());
    for (int64_t i = 0; i < n; ++i) y[i] = b * (a * x[i] + h * d1[i]);  // the Euler point, in the family's state
    if (next.sigma == 0) {
      std::copy(y.begin(), y.end(), x);
      continue;
    }
    derivative(y.data(), next, d2.data());
    for (int64_t i = 0; i < n; ++i) x[i] = b * (a * x[i] + h * Real(0.5) * (d1[i] + d2[i]));
  }
}

}  // namespace diffscope
