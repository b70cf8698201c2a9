// step_table.h — samplers as per-step affine updates x <- A x + B eps + S z (SEMANTICS §3).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/schedule.h"

namespace diffscope {

enum class Sampler { Ddim, Ddpm, DdpmMean };

// "ddim" | "ddpm" | "ddpm-mean"; parse throws InvalidInput naming the value and the choices.
Sampler parse_sampler(const std::string& name);
const char* sampler_name(Sampler s);

// One run of N steps. Step k (0-based) is at timestep t[k]; the update is
//   x <- A[k] x + B[k] eps(x, t[k]/T) + S[k] z,   z drawn with Philox step_key = t[k] (SEMANTICS §7).
// Double-precision coefficients are the truth; the float copies feed fp32 kernels.
struct StepTable {
  Sampler sampler = Sampler::Ddim;
  int T = 0;
  double eta = 0.0;
  std::vector<int32_t> t;
  std::vector<double> A, B, S;
  std::vector<float> A32, B32, S32;
  int steps() const { return static_cast<int>(t.size()); }

  // Every per-step coefficient array, as (name, float64 truth, float32 copy the kernels read). A solver that
  // adds an array lists it here: the float copies are filled from this list (fill_float_copies) and the
  // finiteness check before a run (core/finite_checks.h, SEMANTICS §3) iterates it.
  template <class F>
  void for_each_coefficient(F&& f) const { visit_coefficients(*this, f); }
  template <class F>
  void for_each_coefficient(F&& f) { visit_coefficients(*this, f); }

 private:
  template <class Table, class F>
  static void visit_coefficients(Table& tab, F& f) {
    f("A", tab.A, tab.A32);
    f("B", tab.B, tab.B32);
    f("S", tab.S, tab.S32);
  }
};

// Builds the table for a `sample` run (SEMANTICS §3): t_start in [0, T-1], n_steps in [1, t_start+1],
// eta in [0, 1] (used by ddim only). Throws InvalidInput naming the argument, value and valid range.
// ddpm/ddpm-mean visit t_start, t_start-1, ...; ddim visits round(t_start (N-1-i)/(N-1)).
StepTable build_step_table(const Schedule& sched, Sampler sampler, int t_start, int n_steps, double eta = 0.0);

// ddpm-mean coefficients indexed by t itself (length T): A[t] = c1[t], B[t] = -c1[t] c2[t], S[t] = 0.
// This is what `denoise` (SEMANTICS §4, per-row t_start) uses.
StepTable build_t_indexed_ddpm_mean(const Schedule& sched);

// The ddim step list for N steps from t_start (exposed for tests).
std::vector<int32_t> ddim_timesteps(int t_start, int n_steps);

}  // namespace diffscope
