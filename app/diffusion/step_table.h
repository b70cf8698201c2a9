// step_table.h — samplers (solvers) as per-step affine updates on a spacing of timesteps (SEMANTICS §3).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "diffusion/guidance.h"
#include "model/family.h"
#include "model/schedule.h"

namespace diffscope {

// FlowEuler is FlowMatchEulerDiscreteScheduler's step (the same step as ddim with eta 0, SEMANTICS §2); FlowHeun is
// FlowMatchHeunDiscreteScheduler's (Heun in the flow level s on x_s; flow models only).
enum class Sampler { Ddim, Ddpm, DdpmMean, Dpmpp2m, Dpmpp2mSde, EulerAncestral, Heun, FlowEuler, FlowHeun };

// Where a run's steps sit in [0, t_start] (SEMANTICS §3 "Spacings"). Default is the anchored list
// round(t_start (N-1-i)/(N-1)); leading/linspace/trailing are diffusers' set_timesteps; karras is
// Karras et al. 2022 eq. 5 (rho = 7) in sigma, with continuous network timesteps.
enum class Spacing { Default, Leading, Linspace, Trailing, Karras };

// "ddim" | "ddpm" | "ddpm-mean" | "dpmpp-2m" | "dpmpp-2m-sde" | "euler-ancestral" | "heun" | "flow-euler" |
// "flow-heun"; parse throws
// ArgumentError (Arg::Sampler, base/arg_error.h) naming the value and the choices, or with `arg` an
// InvalidInput naming it as given.
Sampler parse_sampler(const std::string& name, const char* arg = nullptr);
const char* sampler_name(Sampler s);
const char* sampler_choices();  // "ddim, ddpm, ..." for messages and --help
std::vector<std::string> sampler_names();

// "default" | "leading" | "linspace" | "trailing" | "karras"; errors as parse_sampler's.
Spacing parse_spacing(const std::string& name, const char* arg = nullptr);
const char* spacing_name(Spacing s);
const char* spacing_choices();
std::vector<std::string> spacing_names();

struct StepTable;
// True when the state after the table's last step is clean (abar = 1): every solver's step list ends there,
// except ddpm / ddpm-mean, which step t -> t - 1 and stop before t = 0 with fewer steps than t_start + 1
// (SEMANTICS §3).
bool ends_clean(const StepTable& table);

// True for the multistep, ancestral and second-order solvers (dpmpp-2m, dpmpp-2m-sde, euler-ancestral, heun).
bool is_new_solver(Sampler s);

// One run of N steps (SEMANTICS §3). Step k evaluates the eps model at (x, t_net[k]) — the network sees
// t_net[k] / T, an analytic model sees abar[k] — and updates
//   x0   = Dx[k] x + De[k] eps                                   (the data prediction; only when P used)
//   y    = A[k] x + C[k] eps + P[k] prev + S[k] z,   z from Philox step_key noise_key[k] (SEMANTICS §7)
//   heun: x <- y + H[k] (eps(y, t_net2[k]) - eps)   when H[k] != 0 (abar of that evaluation: abar2[k])
//   prev <- x0   (the previous data prediction, per row, carried across launches by the caller)
// Arrays that a solver does not use are empty. Double-precision coefficients are the truth; their float
// copies (for_each_coefficient) feed the fp32 kernels.
struct StepTable {
  Sampler sampler = Sampler::Ddim;
  Spacing spacing = Spacing::Default;
  int T = 0;
  double eta = 0.0;
  int steps_offset = 0;
  std::vector<int32_t> t;           // integer timestep of step k (karras: round(t_net[k]))
  std::vector<double> t_net;        // network timestep of step k (continuous for karras)
  std::vector<uint32_t> noise_key;  // Philox step_key of step k's noise (SEMANTICS §7)
  std::vector<double> abar;         // abar at step k (N values; the state after the last step has abar 1)
  std::vector<double> A, C, S;    // x, eps and noise coefficients (B only ever means the batch)
  std::vector<double> P, Dx, De;    // dpmpp-2m, dpmpp-2m-sde
  std::vector<double> H, t_net2, abar2;  // heun
  std::vector<float> A32, C32, S32;
  std::vector<float> P32, Dx32, De32, H32, abar32, abar2_32;  // float copies of the arrays above

  // The model family (SEMANTICS §2 "Model families", §3 "Every solver on every family"). An epsilon model whose
  // network reads t/T leaves every array below empty and the rows above read as written. Any other family fills
  // them: step k's network reads c_in[k] x and the time value time[k] (in place of t_net[k] / T), and the rows
  // A, C, P, S, Dx, De are written in the family's own state x with the network's output o in place of eps
  // (D = Dx x + De o). heun's correction on a family is x <- y + H[k] (g2 - g) with g = Gx[k] x + Go[k] o at the
  // step's start and g2 = Gx2[k] y + Go2[k] o2 at the Euler point y (o2 read at c_in2[k] y, time2[k]); Gx empty
  // means g = o (the epsilon table above).
  FamilyParams family;
  std::vector<NoiseLevel> levels;    // N + 1: the level of every frame (the family's own), filled for every table
  std::vector<double> c_in, time;    // network input scale and time value of step k
  std::vector<double> c_in2, time2;  // heun's second evaluation
  std::vector<double> Gx, Go, Gx2, Go2;  // heun: the differenced quantity's map (see above)
  std::vector<float> c_in32, time32, c_in2_32, time2_32, Gx32, Go32, Gx2_32, Go2_32;
  // Guidance (SEMANTICS §12): the class and classifier-free guidance at every evaluation, the interval read at
  // abar[k] (and heun's abar2[k]). The default is the model alone (a class-conditional network's null class).
  Guidance guidance;
  bool has_family_rows() const { return !time.empty(); }
  int steps() const { return static_cast<int>(t.size()); }
  bool uses_prev() const { return !P.empty(); }
  bool uses_second_eval() const { return !H.empty(); }
  // Network evaluations of steps [k_begin, k_end) (heun: 2 per step but 1 for its last; guided points: 2 each).
  int64_t evaluations(int k_begin, int k_end) const;

  // Every per-step coefficient array, as (name, float64 truth, float32 copy the kernels read). A solver that
  // adds an array lists it here: the float copies are filled from this list (fill_float_copies) and the
  // finiteness check before a run (run/finite_checks.h, SEMANTICS §3) iterates it.
  template <class F>
  void for_each_coefficient(F&& f) const { visit_coefficients(*this, f); }
  template <class F>
  void for_each_coefficient(F&& f) { visit_coefficients(*this, f); }

 private:
  template <class Table, class F>
  static void visit_coefficients(Table& tab, F& f) {
    f("A", tab.A, tab.A32);
    f("C", tab.C, tab.C32);
    f("S", tab.S, tab.S32);
    f("P", tab.P, tab.P32);
    f("Dx", tab.Dx, tab.Dx32);
    f("De", tab.De, tab.De32);
    f("H", tab.H, tab.H32);
    f("abar", tab.abar, tab.abar32);
    f("abar2", tab.abar2, tab.abar2_32);
    f("c_in", tab.c_in, tab.c_in32);
    f("time", tab.time, tab.time32);
    f("c_in2", tab.c_in2, tab.c_in2_32);
    f("time2", tab.time2, tab.time2_32);
    f("Gx", tab.Gx, tab.Gx32);
    f("Go", tab.Go, tab.Go32);
    f("Gx2", tab.Gx2, tab.Gx2_32);
    f("Go2", tab.Go2, tab.Go2_32);
  }
};

// Builds the table for a `sample` run (SEMANTICS §3): t_start in [0, T-1], n_steps in [1, t_start+1],
// eta in [0, 1] (used by ddim only), steps_offset >= 0 (used by leading only). ddpm/ddpm-mean take the
// default spacing only. Throws InvalidInput naming the argument, value and valid range.
StepTable build_step_table(const Schedule& sched, Sampler sampler, int t_start, int n_steps, double eta = 0.0,
                           Spacing spacing = Spacing::Default, int steps_offset = 0);

// §3's rows of dpmpp-2m, dpmpp-2m-sde, euler-ancestral or heun (tab.sampler) over tab.abar (N values) and the
// level after the last step abar_end, for an eps model on the VP state: fills A, C, S and P, Dx, De (dpmpp) or H,
// abar2, t_net2 (heun; t_net2 from tab.t_net). A step to abar = 1 is its solver's last step.
void vp_solver_rows(StepTable& tab, double abar_end = 1.0);

// Fills tab.levels with the VP levels of tab.abar and tab.t_net and the level after the last step (abar = 1, or for
// ddpm / ddpm-mean stopping before t = 0 the schedule's abar[t_last - 1]).
void fill_vp_levels(StepTable& tab, const Schedule& sched);
// The same levels, returned (tab unchanged).
std::vector<NoiseLevel> vp_levels(const StepTable& tab, const Schedule& sched);

// Fills every float copy (A32, ...) from its float64 array (StepTable::for_each_coefficient).
void fill_float_copies(StepTable& tab);

// ddpm-mean coefficients indexed by t itself (length T): A[t] = c1[t], C[t] = -c1[t] c2[t], S[t] = 0; for a sample
// or v_prediction model the same posterior mean written on its output (family_ddim_row with eta 1, no noise).
// This is what `denoise` (SEMANTICS §4, per-row t_start) uses. Throws ArgumentError (Arg::PredictionType) for the
// flow and edm families and for a time input other than t/T (denoise feeds the network t / T).
StepTable build_t_indexed_ddpm_mean(const Schedule& sched, const FamilyParams& family = {});
// The run of a denoise row starting at t_start for S steps as a table of its own: the entries t_start,
// t_start - 1, ..., t_start - S + 1 of `t_indexed` (build_t_indexed_ddpm_mean's), with their float copies. When
// every row starts at t_start this is the same run as denoise's per-row form (the kernel plan may run it on the
// solver kernels). Throws std::invalid_argument unless 0 <= t_start < t_indexed.steps() and 1 <= S <= t_start + 1.
StepTable t_indexed_run(const StepTable& t_indexed, int t_start, int S);
// Whether build_t_indexed_ddpm_mean takes `family` (epsilon, sample, v_prediction with time input t/T).
bool denoise_takes(const FamilyParams& family);

// The default (anchored) step list for N steps from t_start (exposed for tests).
std::vector<int32_t> ddim_timesteps(int t_start, int n_steps);

// Integer step lists of leading / linspace / trailing over [0, t_start] (SEMANTICS §3), descending.
std::vector<int32_t> spacing_timesteps(Spacing spacing, int t_start, int n_steps, int steps_offset = 0);

// sigma(t) = sqrt((1 - abar[t]) / abar[t]) of the discrete schedule, and the continuous timestep of a
// sigma by linear interpolation of log-sigma between neighbouring timesteps (k-diffusion's sigma_to_t),
// clamped to [0, T-1].
double schedule_sigma(const Schedule& sched, int t);
double timestep_of_sigma(const Schedule& sched, double sigma);

// Karras et al. 2022 eq. 5: N sigmas from sigma_max to sigma_min, rho = 7 (N = 1: sigma_max).
std::vector<double> karras_sigmas(double sigma_min, double sigma_max, int n_steps, double rho = 7.0);

}  // namespace diffscope
