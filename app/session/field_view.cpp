// field_view.cpp — see field_view.h.
#include "session/field_view.h"

#include <algorithm>
#include <cmath>

#include "base/errors.h"
#include "diffusion/cpu_reference.h"
#include "diffusion/family_table.h"
#include "diffusion/input_checks.h"
#include "run/finite_checks.h"

namespace diffscope {
namespace {

// The network's raw output o at the level of `f` for n points x (n, dim): its input c_in x and time value
// (model/family.h network_input, SEMANTICS §2 "Time input"), float as the CPU backend computes it.
void network_output(const DiffusionModel& model, const FieldLevel& f, const float* x, int n, float* o) {
  const NetworkInput in = network_input(f.family, f.level);
  const int dim = model.net.dim;
  const cpu_ref::NetT<float> net(model.net);
  cpu_ref::Scratch<float> s;
  s.U.resize(n, dim + 1);
  s.U.leftCols(dim) = Eigen::Map<const cpu_ref::Matrix<float>>(x, n, dim) * static_cast<float>(in.c_in);
  s.U.col(dim).setConstant(static_cast<float>(in.time));
  cpu_ref::eps_rows(net, s);
  cpu_ref::MatrixMap<float>(o, n, dim) = s.E;
}

// An analytic mixture's exact eps and D at the level of `f` (SEMANTICS §6: eps at the VP state of the same
// signal-to-noise ratio; D = (x - sigma eps) / alpha, or the mixture's mean where alpha = 0).
void mixture_eps_and_d(const GaussianMixture& m, const NoiseLevel& lv, const float* x, int n, float* eps, float* D) {
  std::vector<float> x_vp(m.dim), logg(m.K);
  const double k = lv.vp_scale();
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < m.dim; ++j) x_vp[j] = static_cast<float>(k * x[i * m.dim + j]);
    mixture_eps_row<float>(m, x_vp.data(), lv.vp_abar(), eps + i * m.dim, logg.data());
    for (int j = 0; j < m.dim; ++j) {
      double mean = 0;
      for (int c = 0; c < m.K; ++c) mean += m.weights[c] * m.means[c * m.dim + j];
      const int64_t a = int64_t(i) * m.dim + j;
      D[a] = lv.alpha > 0 ? static_cast<float>((x[a] - lv.sigma * eps[a]) / lv.alpha) : static_cast<float>(mean);
    }
  }
}

}  // namespace

Family gui_family(const DiffusionModel& model, const std::optional<Family>& prediction_type) {
  if (model.family_in_file) return model.family.family;
  return prediction_type ? *prediction_type : model.family.family;  // a scheduler config never names it
}

bool t_start_is_index(Family f) { return !is_vp_family(f); }

bool on_family_list(const StepTable& tab) {
  return tab.has_family_rows() && t_start_is_index(tab.family.family) && int(tab.levels.size()) == tab.steps() + 1;
}

IntRange family_t_start_range(const DiffusionModel& model, Family f, int steps) {
  return t_start_is_index(f) ? IntRange{0, std::max(0, steps - 1)} : t_start_range(model.schedule);
}

int family_default_t_start(const DiffusionModel& model, const std::optional<Family>& prediction_type) {
  const Family f = gui_family(model, prediction_type);
  // An analytic model's exact eps gives no data prediction at s = 1 (alpha = 0): its flow runs start at index 1
  // (as plan_run's default).
  if (t_start_is_index(f)) return model.mixture && f == Family::Flow ? 1 : 0;
  // sample / v_prediction may start at abar = 0 (SEMANTICS §3 "Zero terminal SNR"); epsilon below it.
  return f == Family::Epsilon ? std::max(0, t_start_max_usable(model.schedule)) : model.schedule.T - 1;
}

IntRange family_steps_range(const DiffusionModel& model, Family f, int t_start) {
  return t_start_is_index(f) ? IntRange{1, std::max<int64_t>(1, model.schedule.T)} : sample_steps_range(t_start);
}

std::string ignored_override_note(const DiffusionModel& model, const std::optional<Family>& prediction_type) {
  if (!model.family_in_file || !prediction_type || *prediction_type == model.family.family) return "";
  return std::string("prediction_type ") + family_name(*prediction_type) + " is ignored: the file names " +
         family_name(model.family.family) + " (SEMANTICS §2)";
}

FieldLevel field_level(const DiffusionModel& model, const StepTable& table, int frame) {
  FieldLevel f;
  const int N = table.steps();
  const int k = N > 0 ? std::clamp(frame, 0, N - 1) : 0;
  f.t = N > 0 ? table.t[k] : 0;
  if (table.has_family_rows() && int(table.levels.size()) > k) {
    f.family = table.family;
    f.level = table.levels[k];
    return f;
  }
  f.family = model.family;
  f.family.family = Family::Epsilon;  // no family rows: the eps network of t/T
  const int t = std::clamp<int>(f.t, 0, std::max(0, int(model.schedule.alphas_cumprod.size()) - 1));
  f.level = NoiseLevel::vp(model.schedule.alphas_cumprod.empty() ? 1.0 : model.schedule.alphas_cumprod[t], t);
  f.path_eps = true;
  return f;
}

double eval_field(const DiffusionModel& model, const FieldLevel& f, FieldQuantity q, const float* pts, int n,
                  float* out, const PathField& path) {
  const int dim = model.net.dim;
  const int64_t m = int64_t(n) * dim;
  if (n <= 0) return 0;
  std::vector<float> o(m), D(m), eps(m);
  const OutputMap map = output_map(f.family, f.level);
  if (f.path_eps && q == FieldQuantity::X0) {
    path(pts, n, f.t, true, D.data());  // the path's own x0 (the eps-field kernel's on the GPU)
  } else if (f.path_eps) {
    path(pts, n, f.t, false, eps.data());
    o = eps;  // an epsilon network's output is eps
  } else if (model.mixture) {
    mixture_eps_and_d(*model.mixture, f.level, pts, n, eps.data(), D.data());
    // o from D (or eps where D does not depend on o): o = (D - dx x) / d_out.
    for (int64_t i = 0; i < m; ++i)
      o[i] = map.d_out != 0 ? float((D[i] - map.dx * pts[i]) / map.d_out) : float((eps[i] - map.ex * pts[i]) / map.e_out);
  } else {
    network_output(model, f, pts, n, o.data());
    predictions(map, pts, o.data(), m, D.data(), eps.data());
  }
  const float inv_sigma = f.level.sigma > 0 ? float(1.0 / f.level.sigma) : 0.f;
  const float* src = q == FieldQuantity::X0 ? D.data() : q == FieldQuantity::Output ? o.data() : eps.data();
  const float scale = q == FieldQuantity::Score ? inv_sigma : 1.f;
  double largest = 0;
  for (int i = 0; i < n; ++i) {
    double len2 = 0;
    for (int j = 0; j < dim; ++j) {
      const int64_t a = int64_t(i) * dim + j;
      out[a] = scale * src[a];
      len2 += double(out[a]) * out[a];
    }
    largest = std::max(largest, std::sqrt(len2));
  }
  return largest;
}

std::string field_quantity_label(FieldQuantity q, Family family) {
  switch (q) {
    case FieldQuantity::Eps: return "eps";
    case FieldQuantity::X0: return "x0 (data prediction)";
    case FieldQuantity::Score: return "score";
    case FieldQuantity::Output: break;
  }
  switch (family) {
    case Family::Epsilon: return "output (eps)";
    case Family::Sample: return "output (x0)";
    case Family::VPrediction: return "output (v)";
    case Family::Flow: return "output (velocity)";
    case Family::Edm: return "output (F)";
  }
  return "output";
}

}  // namespace diffscope
