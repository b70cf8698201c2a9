// schedule.cpp — DDPM noise schedules (SEMANTICS §1): linear, cosine and explicit betas, all in float64.
#include "model/schedule.h"

#include <cmath>
#include <sstream>

#include "base/errors.h"

namespace diffscope {
namespace {

// Largest T accepted from a user or a metadata string (keeps a typo from allocating gigabytes).
constexpr int kMaxT = 1'000'000;

std::string num(double v) {
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

void check_T(int T, const char* what) {
  if (T < 2 || T > kMaxT)
    throw InvalidInput(std::string(what) + " schedule: T = " + std::to_string(T) + " is out of range (valid: 2 to " +
                       std::to_string(kMaxT) + ")");
}

// Both ends of a linear-type schedule in (0, 1).
void check_betas(const char* what, double beta_start, double beta_end) {
  for (double b : {beta_start, beta_end})
    if (!(b > 0.0 && b < 1.0))
      throw InvalidInput(std::string(what) + " schedule: beta_start = " + num(beta_start) + ", beta_end = " +
                         num(beta_end) + " (valid: each in (0, 1))");
}

}  // namespace

Schedule Schedule::linear(int T, double beta_start, double beta_end) {
  check_T(T, "linear");
  check_betas("linear", beta_start, beta_end);
  // torch.linspace(beta_start, beta_end, T) in float64, computed the way PyTorch's CPU kernel does it
  // (from the start for the first half, from the end for the second), so betas[0] == beta_start and
  // betas[T-1] == beta_end exactly; mathematically beta_start + (beta_end - beta_start) * t / (T-1).
  std::vector<double> betas(T);
  const double step = (beta_end - beta_start) / static_cast<double>(T - 1);
  const int halfway = T / 2;
  for (int t = 0; t < T; ++t)
    betas[t] = t < halfway ? beta_start + step * t : beta_end - step * static_cast<double>(T - 1 - t);
  std::string src = "linear (T=" + std::to_string(T) + ", beta_start=" + num(beta_start) +
                    ", beta_end=" + num(beta_end) + ")";
  return from_betas(std::move(betas), src);
}

Schedule Schedule::cosine(int T, double s) {
  check_T(T, "cosine");
  if (!(s >= 0.0 && s < 1.0)) throw InvalidInput("cosine schedule: s = " + num(s) + " (valid: [0, 1))");
  // Nichol & Dhariwal 2021, eq. 17, as improved-diffusion's betas_for_alpha_bar computes it:
  // abar(t) = f(t) / f(0), f(t) = cos(((t/T) + s) / (1 + s) * pi/2)^2, beta_t = min(1 - abar(t+1)/abar(t), 0.999).
  const double half_pi = std::acos(-1.0) / 2.0;
  auto f = [&](double u) {
    const double c = std::cos((u + s) / (1.0 + s) * half_pi);
    return c * c;
  };
  std::vector<double> betas(T);
  for (int t = 0; t < T; ++t) {
    const double t1 = static_cast<double>(t) / T, t2 = static_cast<double>(t + 1) / T;
    betas[t] = std::min(1.0 - f(t2) / f(t1), 0.999);
  }
  return from_betas(std::move(betas), "cosine (T=" + std::to_string(T) + ", s=" + num(s) + ")");
}

Schedule Schedule::scaled_linear(int T, double beta_start, double beta_end) {
  check_T(T, "scaled_linear");
  check_betas("scaled_linear", beta_start, beta_end);
  // diffusers: torch.linspace(beta_start**0.5, beta_end**0.5, T) ** 2 (here in float64).
  std::vector<double> betas(T);
  const double r0 = std::sqrt(beta_start), r1 = std::sqrt(beta_end);
  for (int t = 0; t < T; ++t) {
    const double r = r0 + (r1 - r0) * static_cast<double>(t) / static_cast<double>(T - 1);
    betas[t] = r * r;
  }
  return from_betas(std::move(betas), "scaled_linear (T=" + std::to_string(T) + ", beta_start=" + num(beta_start) +
                                          ", beta_end=" + num(beta_end) + ")");
}

Schedule Schedule::rescaled_zero_terminal_snr(const Schedule& s) {
  const size_t T = s.alphas_cumprod.size();
  if (T < 2) throw InvalidInput(s.source + ": rescale_betas_zero_snr needs T >= 2 (T = " + std::to_string(T) + ")");
  std::vector<double> root(T);
  for (size_t t = 0; t < T; ++t) root[t] = std::sqrt(s.alphas_cumprod[t]);
  const double r0 = root[0], rT = root[T - 1];
  for (double& r : root) r = (r - rT) * (r0 / (r0 - rT));
  std::vector<double> betas(T);
  double prev = 1.0;
  for (size_t t = 0; t < T; ++t) {
    const double abar = root[t] * root[t];
    betas[t] = 1.0 - abar / prev;
    prev = abar;
  }
  betas[T - 1] = 1.0;  // abar[T-1] = 0 exactly (the shift makes root[T-1] 0)
  return from_betas(std::move(betas), s.source + ", rescaled to zero terminal SNR", true);
}

Schedule Schedule::from_betas(std::vector<double> betas, std::string source, bool zero_terminal_snr) {
  if (betas.empty() || betas.size() > static_cast<size_t>(kMaxT))
    throw InvalidInput(source + ": betas has length " + std::to_string(betas.size()) + " (valid: 1 to " +
                       std::to_string(kMaxT) + ")");
  for (size_t t = 0; t < betas.size(); ++t)
    if (!(betas[t] > 0.0 && betas[t] < 1.0) && !(zero_terminal_snr && t + 1 == betas.size() && betas[t] == 1.0))
      throw InvalidInput(source + ": betas[" + std::to_string(t) + "] = " + num(betas[t]) + " (valid: (0, 1))");
  Schedule s;
  s.T = static_cast<int>(betas.size());
  s.source = std::move(source);
  const size_t T = betas.size();
  s.alphas.resize(T);
  s.alphas_cumprod.resize(T);
  s.sqrt_recip_alphas.resize(T);
  s.coef_eps.resize(T);
  s.posterior_sigma.resize(T);
  double abar = 1.0;
  for (size_t t = 0; t < T; ++t) {
    const double alpha = 1.0 - betas[t];
    abar *= alpha;
    if (!(abar < 1.0))  // only when beta is below double resolution; coef_eps would be infinite
      throw InvalidInput(s.source + ": betas[" + std::to_string(t) + "] = " + num(betas[t]) +
                         " leaves alphas_cumprod at exactly 1 in float64 (valid: beta > 1e-15)");
    s.alphas[t] = alpha;
    s.alphas_cumprod[t] = abar;
    s.sqrt_recip_alphas[t] = std::sqrt(1.0 / alpha);
    s.coef_eps[t] = betas[t] / std::sqrt(1.0 - abar);
    s.posterior_sigma[t] =
        t == 0 ? 0.0 : std::sqrt(betas[t] * (1.0 - s.alphas_cumprod[t - 1]) / (1.0 - abar));
  }
  s.betas = std::move(betas);
  return s;
}

}  // namespace diffscope
