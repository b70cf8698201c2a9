// grid_run.cpp — planning and running the comparison grid's cells (grid_run.h).
#include "grid/grid_run.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "base/arg_error.h"
#include "base/errors.h"

namespace diffscope {
namespace {

const std::string& value_at(const GridLine& line, int i) {
  static const std::string none;
  return line.axis == GridAxis::None ? none : line.values[static_cast<size_t>(i)];
}

// The cell's request: the base with the row's and the column's value, keeping every frame within the budget.
SampleRequest cell_request(const GridRequest& g, int r, int c, std::string* model) {
  SampleRequest q = g.base;
  *model = g.base_model;
  apply_grid_value(q, *model, g.spec.rows.axis, value_at(g.spec.rows, r));
  apply_grid_value(q, *model, g.spec.cols.axis, value_at(g.spec.cols, c));
  q.keep_frames = true;
  q.frame.reset();
  q.memory_budget_mb = 0;
  return q;
}

// The trajectory stride that keeps a cell's frames within the budget (1 when every frame fits).
int64_t frame_stride(const RunPlan& p, int dim, int64_t budget) {
  const int64_t frame = static_cast<int64_t>(p.n) * dim, frames = p.steps + 1;
  if (frame * frames <= budget) return 1;
  const int64_t fit = std::max<int64_t>(2, budget / std::max<int64_t>(frame, 1));
  return std::max<int64_t>(1, (p.steps + fit - 2) / (fit - 1));
}

}  // namespace

std::string GridPlan::row_label(int r) const { return grid_label(spec.rows, r); }
std::string GridPlan::col_label(int c) const { return grid_label(spec.cols, c); }

GridPlan plan_grid(const GridRequest& g, const NoteSink& on_note) {
  GridPlan p;
  p.spec = g.spec;
  std::set<std::string> noted;
  for (int r = 0; r < g.spec.n_rows(); ++r) {
    for (int c = 0; c < g.spec.n_cols(); ++c) {
      std::string name;
      SampleRequest q = cell_request(g, r, c, &name);
      std::string where = g.arg + ": cell";
      if (g.spec.rows.axis != GridAxis::None) where += " rows " + grid_label(g.spec.rows, r);
      if (g.spec.cols.axis != GridAxis::None)
        where += std::string(g.spec.rows.axis != GridAxis::None ? "," : "") + " cols " + grid_label(g.spec.cols, c);
      GridCell cell{r, c, 0, {}};
      try {
        auto it = std::find(p.model_names.begin(), p.model_names.end(), name);
        if (it == p.model_names.end()) {
          if (name.empty()) throw InvalidInput("no model; valid: a model, or a model axis");
          p.models.push_back(g.load(name));
          p.model_names.push_back(name);
          it = p.model_names.end() - 1;
        }
        cell.model = static_cast<int>(it - p.model_names.begin());
        const DiffusionModel& m = *p.models[static_cast<size_t>(cell.model)];
        if (p.dim != 0 && m.net.dim != p.dim)
          throw InvalidInput("model " + name + " has dim " + std::to_string(m.net.dim) + "; valid: the grid's dim " +
                             std::to_string(p.dim) + " (every model of a grid has the same dim)");
        p.dim = m.net.dim;
        if (g.check_cell) g.check_cell(q);
        q.model_name = name;
        const NoteSink sink = [&](const RunNote& n) {
          if (on_note && noted.insert(n.text).second) on_note(n);
        };
        RunPlan probe = plan_run(q, m);
        q.trajectory_stride = frame_stride(probe, m.net.dim, g.frame_budget_floats);
        cell.plan = plan_run(q, m, sink);
      } catch (const ArgumentError& e) {
        throw InvalidInput(where + ": " + e.message([&q](Arg a) { return q.name(a); }));
      } catch (const InvalidInput& e) {
        throw InvalidInput(where + ": " + e.what());
      }
      p.n = cell.plan.n;
      p.cells.push_back(std::move(cell));
    }
  }
  return p;
}

void SequentialGridExecutor::run(const GridPlan& plan, const std::function<void(int, GridCellRun&&)>& on_cell,
                                 const std::function<void()>& stop) {
  for (size_t i = 0; i < plan.cells.size(); ++i) {
    const GridCell& cell = plan.cells[i];
    const RunPlan& p = cell.plan;
    const size_t frame = static_cast<size_t>(p.n) * plan.dim;
    GridCellRun out;
    out.x.resize(frame);
    out.frames.resize(frame * p.frames.size());
    const auto t0 = std::chrono::steady_clock::now();
    // With a stop callback the run goes in chunks that poll it (the same numbers as one call, SEMANTICS §3).
    const std::function<void(int)> progress = stop ? [](int) {} : std::function<void(int)>();
    run_plan(p, plan.model_of(cell), m_backend, RunBuffers{out.x.data(), out.frames.data(), nullptr, nullptr, nullptr},
             progress, stop);
    out.wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    on_cell(static_cast<int>(i), std::move(out));
    if (stop) stop();
  }
}

}  // namespace diffscope
