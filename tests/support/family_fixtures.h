// family_fixtures.h — the model families every family test iterates over, with their default parameters
// (model/family.h; sigma_data 0.5, Karras et al.'s).
#pragma once
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

}  // namespace diffscope::test
