// grid_live.cpp — the comparison grid as the window shows it (grid_live.h).
#include "grid/grid_live.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace diffscope {
namespace {

// Passes each cell on to run_grid after keeping a copy of its frames.
class RecordingExecutor : public GridExecutor {
 public:
  RecordingExecutor(GridExecutor& inner, std::vector<std::vector<float>>& frames) : m_inner(inner), m_frames(frames) {}
  void run(const GridPlan& plan, const std::function<void(int, GridCellRun&&)>& on_cell,
           const std::function<void()>& stop) override {
    m_frames.assign(plan.cells.size(), {});
    m_inner.run(plan, [&](int i, GridCellRun&& r) {
      m_frames[static_cast<size_t>(i)] = r.frames;
      on_cell(i, std::move(r));
    }, stop);
  }

 private:
  GridExecutor& m_inner;
  std::vector<std::vector<float>>& m_frames;
};

}  // namespace

double grid_metric_value(const GridCellMetrics& m, const std::string& name) {
  if (name == "energy") return m.energy.energy;
  if (name == "exact_rms") return m.exact_rms;
  if (name == "displacement") return m.displacement;
  if (name == "path_length") return m.path.length;
  if (name == "straightness") return m.path.straightness;
  if (name == "evaluations") return static_cast<double>(m.evaluations);
  if (name == "wall_ms") return m.wall_ms;
  return NAN;
}

std::string grid_metric_text(double v, const std::string& name) {
  if (!std::isfinite(v)) return "-";
  char b[32];
  if (name == "evaluations") std::snprintf(b, sizeof b, "%.0f", v);
  else if (name == "wall_ms") std::snprintf(b, sizeof b, "%.1f ms", v);
  else std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

void GridLive::run(const GridRequest& request, DenoiserBackend& backend, std::optional<GridPosition> position) {
  GridPlan plan = plan_grid(request);
  SequentialGridExecutor seq(backend);
  std::vector<std::vector<float>> frames;
  RecordingExecutor rec(seq, frames);
  GridResult result = run_grid(plan, rec, {}, position);
  m_plan = std::move(plan);
  m_result = std::move(result);
  m_frames = std::move(frames);
}

void GridLive::clear() {
  m_plan = {};
  m_result = {};
  m_frames.clear();
}

const float* GridLive::state_at(int i, double u, GridAlign how, int* frame) const {
  const GridCell& c = m_plan.cells[static_cast<size_t>(i)];
  const GridCell& t = m_plan.cells[static_cast<size_t>(timeline_cell(m_plan))];
  const int j = aligned_frame(c.plan.table, t.plan.table, u, how);
  const std::vector<int>& kept = c.plan.frames;
  const size_t slot = static_cast<size_t>(std::upper_bound(kept.begin(), kept.end(), j) - kept.begin()) - 1;
  if (frame) *frame = kept[slot];
  return m_frames[static_cast<size_t>(i)].data() + slot * static_cast<size_t>(m_plan.n) * m_plan.dim;
}

std::vector<int> GridLive::order(const std::string& name, bool sorted) const {
  std::vector<int> o(m_plan.cells.size());
  std::iota(o.begin(), o.end(), 0);
  if (!sorted) return o;
  const auto key = [&](int i) { return grid_metric_value(m_result.metrics[static_cast<size_t>(i)], name); };
  std::stable_sort(o.begin(), o.end(), [&](int a, int b) {
    const double ka = key(a), kb = key(b);
    if (std::isnan(ka) || std::isnan(kb)) return !std::isnan(ka) && std::isnan(kb);
    return ka < kb;
  });
  return o;
}

}  // namespace diffscope
