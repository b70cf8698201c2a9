// grid_run.h — the comparison grid's cells planned and run (SEMANTICS §10): each cell is the base request with the
// row's and the column's value set, planned by the run plan (run/run_plan.h plan_run: every check and refusal of
// a single run) and run from the same seed, so a cell equals the single run of its settings bit for bit on the
// CPU. A GridExecutor runs the cells; SequentialGridExecutor runs them one after another through run_plan (a
// batched executor, one launch per frame for cells that share a network, can take its place). No CUDA, no GL.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "grid/grid_spec.h"
#include "model/model.h"
#include "run/backend.h"
#include "run/run_plan.h"

namespace diffscope {

// Loads a model by the name or path a front end takes (the CLI's --model, Python's load); throws InvalidInput.
using GridModelLoader = std::function<std::shared_ptr<const DiffusionModel>(const std::string& name)>;

struct GridRequest {
  GridSpec spec;
  SampleRequest base;      // the settings every cell shares (its n, seed, ...); keep_frames and the stride are the grid's
  std::string base_model;  // the model of cells without a model axis ("" only with a model axis)
  GridModelLoader load;
  std::string arg = "grid";  // the front end's spelling of the spec argument, for messages (the CLI's flag)
  // Called with each cell's request before it is planned (a front end's own checks, e.g. a precision the backend
  // cannot run); throws InvalidInput.
  std::function<void(const SampleRequest&)> check_cell;
  int64_t frame_budget_floats = int64_t(32) << 20;  // a cell keeps every k-th frame so that they fit (path metrics)
};

struct GridCell {
  int row = 0, col = 0;
  int model = 0;  // index into GridPlan::models
  RunPlan plan;   // keeps the frames 0, s, 2s, ..., N (s = 1 unless the frame budget needs more)
};

struct GridPlan {
  GridSpec spec;
  std::vector<std::string> model_names;                       // as given
  std::vector<std::shared_ptr<const DiffusionModel>> models;  // one per distinct name
  std::vector<GridCell> cells;                                // row-major, n_rows x n_cols
  int n = 0, dim = 0;
  const GridCell& cell(int r, int c) const { return cells[static_cast<size_t>(r) * spec.n_cols() + c]; }
  const DiffusionModel& model_of(const GridCell& c) const { return *models[c.model]; }
  // The label of row r / column c: "sampler=ddim" ("" for a dimension without an axis).
  std::string row_label(int r) const;
  std::string col_label(int c) const;
};

// Plans every cell (in row-major order) with plan_run; a refusal is the single run's, prefixed with the spec's
// argument and the cell ("grid: cell rows sampler=ddpm, cols steps=2000: steps = 2000 is out of range ...").
// Models of one grid must share dim. Each distinct note is passed to on_note once.
GridPlan plan_grid(const GridRequest& request, const NoteSink& on_note = {});

// One finished cell: its final samples (n, dim), its kept frames (plan.frames.size(), n, dim) and its wall time.
struct GridCellRun {
  std::vector<float> x, frames;
  double wall_ms = 0;
};

// Runs the cells of a plan; on_cell(index, run) is called once per cell, in any order (the cell's frames may be
// dropped after the call). stop() is polled between chunks and may throw.
class GridExecutor {
 public:
  virtual ~GridExecutor() = default;
  virtual void run(const GridPlan& plan, const std::function<void(int, GridCellRun&&)>& on_cell,
                   const std::function<void()>& stop) = 0;
};

// Each cell through run_plan on `backend`, one after another (the start noise: the backend's for the seed).
class SequentialGridExecutor : public GridExecutor {
 public:
  explicit SequentialGridExecutor(DenoiserBackend& backend) : m_backend(backend) {}
  void run(const GridPlan& plan, const std::function<void(int, GridCellRun&&)>& on_cell,
           const std::function<void()>& stop) override;

 private:
  DenoiserBackend& m_backend;
};

}  // namespace diffscope
