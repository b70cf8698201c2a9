// family_fixtures.h — the model families every family test iterates over, with their default parameters
// (model/family.h; sigma_data 0.5, Karras et al.'s), and hand-filled family arrays for the kernels' tests.
#pragma once
#include <cmath>

#include "diffusion/step_table.h"
#include "model/family.h"

namespace diffscope::test {

constexpr Family kAllFamilies[] = {Family::Epsilon, Family::Sample, Family::VPrediction, Family::Flow, Family::Edm};

inline FamilyParams family_params(Family f) {
  FamilyParams p;
  p.family = f;
  p.time_input = default_time_input(f);
  p.sigma_data = 0.5;
  return p;
}

// Fills every family array of `tab` (time, c_in and, for a second evaluation, time2, c_in2 and the heun map) with
// arbitrary finite values that belong to no family, and their float copies.
inline void fill_family_arrays(StepTable& tab) {
  const int N = tab.steps();
  const bool heun = tab.uses_second_eval();
  for (int k = 0; k < N; ++k) {
    const double u = std::sin(0.7 * k + 0.3);
    tab.time.push_back(0.05 + 0.9 * tab.t_net[k] / tab.T + 0.01 * u);
    tab.c_in.push_back(0.8 + 0.3 * u * u);
    if (!heun) continue;
    tab.time2.push_back(0.04 + 0.9 * tab.t_net2[k] / tab.T);
    tab.c_in2.push_back(1.1 - 0.25 * u * u);
    tab.Gx.push_back(0.2 * u);
    tab.Go.push_back(1.0 + 0.1 * std::cos(1.3 * k));
    tab.Gx2.push_back(-0.15 * std::cos(0.9 * k));
    tab.Go2.push_back(0.9 + 0.2 * u * u);
  }
  tab.for_each_coefficient([](const char*, const std::vector<double>& f64, std::vector<float>& f32) {
    f32.assign(f64.begin(), f64.end());
  });
}

}  // namespace diffscope::test
