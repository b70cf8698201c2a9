// schedule.cpp — DDPM noise schedules (SEMANTICS §1): linear, cosine and explicit betas, all in float64.
#include "core/schedule.h"

#include <cmath>
#include <sstream>

#include "core/errors.h"

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

}  // namespace

Schedule Schedule::linear(int T, double beta_start, double beta_end) {
  check_T(T, "linear");
  for (double b : {beta_start, beta_end})
    if (!(b > 0.0 && b < 1.0))
      throw InvalidInput("linear schedule: beta_start = " + num(beta_start) + ", beta_end = " + num(beta_end) +
                         " (valid: each in (0, 1))");
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

Schedule Schedule::from_betas(std::vector<double> betas, std::string source) {
  if (betas.empty() || betas.size() > static_cast<size_t>(kMaxT))
    throw InvalidInput(source + ": betas has length " + std::to_string(betas.size()) + " (valid: 1 to " +
                       std::to_string(kMaxT) + ")");
  for (size_t t = 0; t < betas.size(); ++t)
    if (!(betas[t] > 0.0 && betas[t] < 1.0))
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
