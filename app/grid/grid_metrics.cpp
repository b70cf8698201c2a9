// grid_metrics.cpp — the comparison grid's per-cell metrics and timeline alignment (grid_metrics.h).
#include "grid/grid_metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "base/precision.h"
#include "diffusion/exact_lab.h"
#include "diffusion/exact_ode.h"
#include "diffusion/metrics.h"

namespace diffscope {
namespace {

double row_norm(const float* a, const float* b, int dim, double ka = 1, double kb = 1) {
  double s = 0;
  for (int d = 0; d < dim; ++d) {
    const double v = ka * a[d] - kb * b[d];
    s += v * v;
  }
  return std::sqrt(s);
}

double level_scale(const StepTable& t, int j) {
  return t.levels.empty() ? 1.0 : t.levels[static_cast<size_t>(j)].vp_scale();
}

// log(abar / (1 - abar)) of frame j: +infinity for a clean frame.
double log_snr(const StepTable& t, int j) {
  double abar = 1.0;
  if (!t.levels.empty()) abar = t.levels[static_cast<size_t>(j)].vp_abar();
  else if (j < t.steps()) abar = t.abar[static_cast<size_t>(j)];
  return abar >= 1.0 ? std::numeric_limits<double>::infinity() : std::log(abar / (1.0 - abar));
}

std::string csv_num(double v) {
  if (std::isnan(v)) return "";
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

// A text field of RFC 4180: quoted (quotes doubled) when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& v) {
  if (v.find_first_of(",\"\r\n") == std::string::npos) return v;
  std::string q = "\"";
  for (char ch : v) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return q + "\"";
}

nlohmann::json json_num(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

}  // namespace

EnergyFigure energy_to_held_out(const DiffusionModel& model, const float* X, int n) {
  EnergyFigure f;
  const int nd = model.n_data, half = nd / 2, dim = model.net.dim;
  if (nd < 2 || n < 1) return f;
  f.m = std::min({n, nd - half, kGridEnergySamples});
  const float* a = model.data_samples.data();
  const float* b = a + static_cast<size_t>(half) * dim;
  f.energy = energy_distance(X, f.m, a, half, dim);
  f.floor = energy_distance(b, f.m, a, half, dim);
  return f;
}

PathFigure path_figure(const float* frames, int n_frames, int n, int dim, const std::vector<double>& k) {
  PathFigure f;
  if (n_frames < 2 || n < 1) return f;
  const size_t fs = static_cast<size_t>(n) * dim;
  double len_sum = 0, straight_sum = 0;
  for (int i = 0; i < n; ++i) {
    double len = 0;
    for (int j = 0; j + 1 < n_frames; ++j)
      len += row_norm(frames + (j + 1) * fs + static_cast<size_t>(i) * dim, frames + j * fs + static_cast<size_t>(i) * dim,
                      dim, k[j + 1], k[j]);
    const double chord = row_norm(frames + (n_frames - 1) * fs + static_cast<size_t>(i) * dim,
                                  frames + static_cast<size_t>(i) * dim, dim, k[n_frames - 1], k[0]);
    len_sum += len;
    straight_sum += len > 0 ? chord / len : 1.0;
  }
  f.length = len_sum / n;
  f.straightness = straight_sum / n;
  return f;
}

double exact_ode_rms(const DiffusionModel& model, const StepTable& table, const float* start, const float* x, int n,
                     ExactOdeCache* cache) {
  // Guidance rescale acts on the family's output, not on eps: no exact ODE in eps (SEMANTICS §12).
  if (!model.mixture || !follows_the_ode(table) || table.guidance.rescale != 0.0) return NAN;
  const int rows = std::min(n, kGridExactRows), dim = model.net.dim, N = table.steps();
  const double k0 = level_scale(table, 0), kN = level_scale(table, N);
  std::vector<double> x0(static_cast<size_t>(rows) * dim);
  for (size_t i = 0; i < x0.size(); ++i) x0[i] = k0 * start[i];
  const double abar0 = table.abar[0];
  const double sigma0 = abar0 >= 1.0 ? 0.0 : std::sqrt((1.0 - abar0) / abar0);
  const ExactOdeCache::Entry* hit = nullptr;
  for (size_t k = 0; cache && k < cache->entries.size(); ++k) {
    const ExactOdeCache::Entry& e = cache->entries[k];
    if (e.model == &model && e.sigma0 == sigma0 && e.guidance == table.guidance && e.x0 == x0) hit = &e;
  }
  const std::vector<double> exact =
      hit ? hit->exact : mixture_ode_solve(*model.mixture, x0.data(), rows, sigma0, 0.0, 1e-10, table.guidance);
  if (cache && !hit) cache->entries.push_back({&model, sigma0, table.guidance, x0, exact});
  double se = 0;
  for (size_t i = 0; i < exact.size(); ++i) se += (kN * x[i] - exact[i]) * (kN * x[i] - exact[i]);
  return std::sqrt(se / rows);
}

double mean_displacement(const float* a, const float* b, int n, int dim) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += row_norm(a + static_cast<size_t>(i) * dim, b + static_cast<size_t>(i) * dim, dim);
  return n > 0 ? s / n : NAN;
}

int reference_col(const GridPlan& plan, int r) {
  int best = 0;
  for (int c = 0; c < plan.spec.n_cols(); ++c)
    if (plan.cell(r, c).plan.steps >= plan.cell(r, best).plan.steps) best = c;
  return best;
}

int timeline_cell(const GridPlan& plan) {
  int best = 0;
  for (size_t i = 0; i < plan.cells.size(); ++i)
    if (plan.cells[i].plan.steps > plan.cells[static_cast<size_t>(best)].plan.steps) best = static_cast<int>(i);
  return best;
}

GridResult run_grid(const GridPlan& plan, GridExecutor& exec, const std::function<void()>& stop,
                    std::optional<GridPosition> position) {
  GridResult res;
  res.position = position;
  const size_t fs = static_cast<size_t>(plan.n) * plan.dim;
  std::vector<float> finals(fs * plan.cells.size());
  res.x.assign(fs * plan.cells.size(), 0.0f);
  res.metrics.resize(plan.cells.size());
  const StepTable& timeline = plan.cells[static_cast<size_t>(timeline_cell(plan))].plan.table;
  ExactOdeCache exact_cache;
  exec.run(plan, [&](int i, GridCellRun&& run) {
    const GridCell& cell = plan.cells[static_cast<size_t>(i)];
    const RunPlan& p = cell.plan;
    const DiffusionModel& m = plan.model_of(cell);
    GridCellMetrics& g = res.metrics[static_cast<size_t>(i)];
    std::copy(run.x.begin(), run.x.end(), finals.begin() + static_cast<std::ptrdiff_t>(fs * i));
    const float* shown = run.x.data();
    g.frame = p.steps;
    if (position) {  // the kept frame at or before the aligned one
      const int j = aligned_frame(p.table, timeline, position->u, position->align);
      const size_t slot = static_cast<size_t>(std::upper_bound(p.frames.begin(), p.frames.end(), j) - p.frames.begin()) - 1;
      g.frame = p.frames[slot];
      shown = run.frames.data() + fs * slot;
    }
    std::copy(shown, shown + fs, res.x.begin() + static_cast<std::ptrdiff_t>(fs * i));
    g.evaluations = p.table.evaluations(0, p.steps);
    g.wall_ms = run.wall_ms;
    g.energy = energy_to_held_out(m, run.x.data(), plan.n);
    g.exact_rms = exact_ode_rms(m, p.table, run.frames.data(), run.x.data(), plan.n, &exact_cache);
    std::vector<double> k;
    for (int j : p.frames) k.push_back(level_scale(p.table, j));
    g.path = path_figure(run.frames.data(), static_cast<int>(p.frames.size()), plan.n, plan.dim, k);
    g.path_frames = static_cast<int>(p.frames.size());
  }, stop);
  for (int r = 0; r < plan.spec.n_rows(); ++r) {
    const int ref = reference_col(plan, r);
    for (int c = 0; c < plan.spec.n_cols(); ++c) {
      const size_t i = static_cast<size_t>(r) * plan.spec.n_cols() + c, j = static_cast<size_t>(r) * plan.spec.n_cols() + ref;
      GridCellMetrics& g = res.metrics[i];
      g.ref_row = r, g.ref_col = ref;
      g.displacement = mean_displacement(finals.data() + fs * i, finals.data() + fs * j, plan.n, plan.dim);
    }
  }
  return res;
}

std::string grid_metrics_csv(const GridPlan& plan, const GridResult& r) {
  std::string s = "row,col,row_value,col_value,model,sampler,spacing,steps,t_start,eta,precision,evaluations,wall_ms,"
                  "energy_distance,energy_floor,energy_n,exact_ode_rms,displacement,ref_row,ref_col,path_length,"
                  "straightness,path_frames,frame\n";
  for (size_t i = 0; i < plan.cells.size(); ++i) {
    const GridCell& c = plan.cells[i];
    const GridCellMetrics& g = r.metrics[i];
    const SampleRequest& q = c.plan.request;
    const auto val = [](const GridLine& l, int k) {
      return l.axis == GridAxis::None ? std::string() : csv_field(l.values[static_cast<size_t>(k)]);
    };
    const std::string model = csv_field(plan.model_names[static_cast<size_t>(c.model)]);
    s += std::to_string(c.row) + "," + std::to_string(c.col) + "," + val(plan.spec.rows, c.row) + "," +
         val(plan.spec.cols, c.col) + "," + model + "," + sampler_name(q.sampler) + "," + spacing_name(c.plan.spacing) +
         "," + std::to_string(c.plan.steps) + "," + std::to_string(c.plan.t_start) + "," + csv_num(q.eta) + "," +
         precision_name(q.precision) + "," + std::to_string(g.evaluations) + "," + csv_num(g.wall_ms) + "," +
         csv_num(g.energy.energy) + "," + csv_num(g.energy.floor) + "," + std::to_string(g.energy.m) + "," +
         csv_num(g.exact_rms) + "," + csv_num(g.displacement) + "," + std::to_string(g.ref_row) + "," +
         std::to_string(g.ref_col) + "," + csv_num(g.path.length) + "," + csv_num(g.path.straightness) + "," +
         std::to_string(g.path_frames) + "," + std::to_string(g.frame) + "\n";
  }
  return s;
}

nlohmann::json grid_metrics_json(const GridPlan& plan, const GridResult& r) {
  nlohmann::json cells = nlohmann::json::array();
  for (size_t i = 0; i < plan.cells.size(); ++i) {
    const GridCell& c = plan.cells[i];
    const GridCellMetrics& g = r.metrics[i];
    const SampleRequest& q = c.plan.request;
    cells.push_back({{"row", c.row}, {"col", c.col}, {"model", plan.model_names[static_cast<size_t>(c.model)]},
                     {"sampler", sampler_name(q.sampler)}, {"spacing", spacing_name(c.plan.spacing)},
                     {"steps", c.plan.steps}, {"t_start", c.plan.t_start}, {"eta", q.eta},
                     {"guidance_scale", q.guidance.scale},
                     {"precision", precision_name(q.precision)}, {"evaluations", g.evaluations},
                     {"wall_ms", g.wall_ms}, {"energy_distance", json_num(g.energy.energy)},
                     {"energy_floor", json_num(g.energy.floor)}, {"energy_n", g.energy.m},
                     {"exact_ode_rms", json_num(g.exact_rms)}, {"displacement", json_num(g.displacement)},
                     {"ref_row", g.ref_row}, {"ref_col", g.ref_col}, {"path_length", json_num(g.path.length)},
                     {"straightness", json_num(g.path.straightness)}, {"path_frames", g.path_frames},
                     {"frame", g.frame}});
  }
  nlohmann::json j = {{"spec", grid_spec_json(plan.spec)}, {"n", plan.n}, {"dim", plan.dim},
                      {"seed", plan.cells.empty() ? 0 : plan.cells[0].plan.request.seed}, {"cells", cells}};
  if (r.position)
    j["position"] = {{"u", r.position->u}, {"align", r.position->align == GridAlign::Step ? "step" : "noise"}};
  return j;
}

int aligned_frame(const StepTable& cell, const StepTable& timeline, double u, GridAlign how) {
  u = std::clamp(u, 0.0, 1.0);
  const int N = cell.steps();
  if (how == GridAlign::Step) return static_cast<int>(std::lround(u * N));
  const double target = log_snr(timeline, static_cast<int>(std::lround(u * timeline.steps())));
  if (std::isinf(target)) return N;  // the clean end: each cell's last frame
  int best = 0;
  double best_d = std::numeric_limits<double>::infinity();
  for (int j = 0; j <= N; ++j) {
    const double d = std::fabs(log_snr(cell, j) - target);
    if (d < best_d) best = j, best_d = d;
  }
  return best;
}

}  // namespace diffscope
