// guidance.h — classifier-free guidance, the guidance interval and guidance rescale as one run's settings
// (SEMANTICS §12). A StepTable carries them; the CPU reference applies them at every network evaluation.
#pragma once
#include <cmath>
#include <limits>

namespace diffscope {

struct Guidance {
  int class_label = -1;  // the class c of a class-conditional network (SEMANTICS §2), -1: none (the null class)
  double scale = 1.0;    // w, diffusers' guidance_scale: o_w = o_u + w (o_c - o_u); 1: the conditional model alone
  double sigma_lo = 0.0;  // guidance interval in VE sigma: guided only where sigma_lo <= S <= sigma_hi
  double sigma_hi = std::numeric_limits<double>::infinity();
  double rescale = 0.0;  // phi of guidance rescale, [0, 1]; 0: none

  bool has_interval() const { return sigma_lo != 0.0 || !std::isinf(sigma_hi); }
  // w at an evaluation whose VP-equivalent level is abar (S = sqrt((1 - abar) / abar); abar = 0 is S = inf):
  // `scale` inside the interval, 1 outside it.
  double weight_at(double abar) const {
    return weight_at_sigma(abar > 0.0 ? std::sqrt((1.0 - abar) / abar) : std::numeric_limits<double>::infinity());
  }
  // w at VE level S.
  double weight_at_sigma(double S) const { return S >= sigma_lo && S <= sigma_hi ? scale : 1.0; }
  bool operator==(const Guidance& o) const {
    return class_label == o.class_label && scale == o.scale && sigma_lo == o.sigma_lo && sigma_hi == o.sigma_hi &&
           rescale == o.rescale;
  }
  bool operator!=(const Guidance& o) const { return !(*this == o); }
};

}  // namespace diffscope
