// grid_live.h — the comparison grid as the window shows it (SEMANTICS §10 "The grid in the window"): the cells
// of a GridRequest planned and run on a backend (grid_run.h; each cell its own run from the same noise), their
// kept frames held for the timeline, each cell's state at a timeline position (grid_metrics.h aligned_frame), the
// metric a cell shows by name, and the order cells are drawn in when sorted by it. No CUDA, no GL.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "grid/grid_metrics.h"
#include "grid/grid_run.h"

namespace diffscope {

// The value of metric `name` (one of grid_metric_names()) of a cell; NaN where it has none.
double grid_metric_value(const GridCellMetrics& m, const std::string& name);
// "0.0031", "12", "-" (NaN): the metric as a cell's caption shows it.
std::string grid_metric_text(double v, const std::string& name);

class GridLive {
 public:
  // Plans and runs every cell of `request` on `backend` (the kept frames of each cell held for the timeline), then
  // measures them (run_grid's metrics on the final samples; result().x the final samples, or with `position` each
  // cell's state there). Throws InvalidInput as plan_grid; the previous grid stays when it throws.
  void run(const GridRequest& request, DenoiserBackend& backend, std::optional<GridPosition> position = {});
  void clear();

  bool has_grid() const { return !m_plan.cells.empty(); }
  const GridPlan& plan() const { return m_plan; }
  const GridResult& result() const { return m_result; }  // x: the final samples (rows, cols, n, dim)
  int cells() const { return static_cast<int>(m_plan.cells.size()); }
  // Cell i's state at timeline position u in [0, 1] (n, dim), aligned as `how` says; *frame gets the frame shown.
  const float* state_at(int i, double u, GridAlign how, int* frame = nullptr) const;
  // Cell i's kept frames (n_kept, n, dim), frame j of the run at index j / stride.
  const std::vector<float>& frames(int i) const { return m_frames[static_cast<size_t>(i)]; }
  // The cells in the order they are drawn (row-major): as planned, or with `sorted` in ascending order of metric
  // `name` (NaN last; ties keep the planned order).
  std::vector<int> order(const std::string& name, bool sorted) const;

 private:
  GridPlan m_plan;
  GridResult m_result;
  std::vector<std::vector<float>> m_frames;  // per cell
};

}  // namespace diffscope
