// schedule.h — the DDPM noise schedule (SEMANTICS §1): betas and every coefficient derived from them,
// computed in float64.
#pragma once
#include <string>
#include <vector>

namespace diffscope {

// All vectors have length T. Coefficients are recomputed from `betas` in float64 (SEMANTICS §1):
//   alphas = 1 - betas; alphas_cumprod[t] = prod_{s<=t} alphas[s];
//   sqrt_recip_alphas = sqrt(1/alphas); coef_eps = betas / sqrt(1 - alphas_cumprod);
//   posterior_sigma[t] = sqrt(betas[t] (1 - abar[t-1]) / (1 - abar[t])) for t >= 1, 0 at t = 0.
struct Schedule {
  int T = 0;
  std::vector<double> betas, alphas, alphas_cumprod, sqrt_recip_alphas, coef_eps, posterior_sigma;
  std::string source;  // human-readable origin, e.g. "file betas (F32)", "default linear"

  // Linear betas = linspace(beta_start, beta_end, T). Throws InvalidInput if T < 2 or betas outside (0, 1).
  static Schedule linear(int T, double beta_start = 1e-4, double beta_end = 0.02);
  // Cosine schedule (Nichol & Dhariwal 2021, s = 0.008), betas clipped at 0.999. Throws InvalidInput if T < 2.
  static Schedule cosine(int T, double s = 0.008);
  // diffusers' scaled_linear: betas = linspace(sqrt(beta_start), sqrt(beta_end), T)^2. Same checks as linear.
  static Schedule scaled_linear(int T, double beta_start, double beta_end);
  // From explicit betas (length T >= 1, each in (0, 1)); throws InvalidInput naming the bad index otherwise.
  // zero_terminal_snr: betas[T-1] may be exactly 1 (abar[T-1] = 0, diffusers' rescale_betas_zero_snr); runs
  // that visit that t are refused by the finite-coefficient rule (SEMANTICS §3).
  static Schedule from_betas(std::vector<double> betas, std::string source, bool zero_terminal_snr = false);
  // diffusers' rescale_zero_terminal_snr (Lin et al. 2023, arXiv 2305.08891, Algorithm 1): sqrt(abar) shifted
  // so that its last value is 0 and scaled so that its first is kept; betas recomputed from it (last = 1).
  static Schedule rescaled_zero_terminal_snr(const Schedule& s);
};

}  // namespace diffscope
