// grid_metrics.h — the number in every cell of the comparison grid (SEMANTICS §10 "Metrics"), and the alignment of
// cells with different step counts on one timeline. No CUDA, no GL.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffusion/step_table.h"
#include "grid/grid_run.h"
#include "model/model.h"

namespace diffscope {

constexpr int kGridEnergySamples = 1000;  // the energy distance's subsample (the model card's n for the 2D sets)
constexpr int kGridExactRows = 256;       // rows compared with the exact ODE

// The energy distance of samples X (n, dim) to the model's held-out data (model card, assets/models/README.md):
// diffusion/metrics.h energy_distance of the first m = min(n, n_data - n_data / 2, 1000) samples against half A
// (the first n_data / 2 rows of data_samples). floor: half B's first m rows (rows n_data / 2 ...) against half A,
// the figure data itself scores at the same m (one split: its spread is large, see the card). NaN and m = 0
// without data_samples (n_data < 2).
struct EnergyFigure {
  double energy = NAN, floor = NAN;
  int m = 0;
};
EnergyFigure energy_to_held_out(const DiffusionModel& model, const float* X, int n);

// Path length and straightness of trajectories over their kept frames (frames (n_frames, n, dim), frame j in the
// family's state, levels[j] its noise level): each frame is taken to the VP state of the same signal-to-noise
// ratio (NoiseLevel::vp_scale), so families compare; length = mean over rows of sum_j |x_{j+1} - x_j|,
// straightness = mean over rows of |x_last - x_0| / length_row (1: a straight line; rows of length 0 count 1).
struct PathFigure {
  double length = 0, straightness = 1;
};
PathFigure path_figure(const float* frames, int n_frames, int n, int dim, const std::vector<double>& vp_scale);

// RMS over the first min(n, 256) rows of |x_N - x*| in the VP state, x* the exact probability-flow ODE sample
// (diffusion/exact_ode.h, tolerance 1e-10) from the cell's frame 0 (start (n, dim), family state) at its level;
// NaN unless the model is analytic and the cell's solver follows the ODE (diffusion/exact_lab.h follows_the_ode).
// cache (may be null): exact solutions already computed, reused for a cell of the same model, start level and start
// rows (the cells of one row of a sampler x steps grid share one).
struct ExactOdeCache {
  struct Entry {
    const DiffusionModel* model;
    double sigma0;
    Guidance guidance;  // the run's (SEMANTICS §12): the guided exact ODE
    std::vector<double> x0, exact;
  };
  std::vector<Entry> entries;
};
double exact_ode_rms(const DiffusionModel& model, const StepTable& table, const float* start, const float* x, int n,
                     ExactOdeCache* cache = nullptr);

// Mean over rows of |a_i - b_i| (Euclidean), (n, dim) each.
double mean_displacement(const float* a, const float* b, int n, int dim);

// Cells with different step counts on one timeline position u in [0, 1]. Step: frame round(u N) of each cell.
// NoiseLevel: the timeline is `timeline` (the grid's longest cell); u picks its frame round(u N_timeline), and each
// cell shows its frame whose log signal-to-noise ratio log(abar / (1 - abar)) (VP-equivalent abar of the frame's
// level) is nearest to that frame's (clean frames: +infinity; the first frame of a tie; at the clean end every cell shows its last frame).
enum class GridAlign { Step, NoiseLevel };
int aligned_frame(const StepTable& cell, const StepTable& timeline, double u, GridAlign how);

// The grid's timeline cell: the first with the most steps.
int timeline_cell(const GridPlan& plan);

// A shared timeline position of the cells' states: each cell's aligned_frame at u (the kept frame at or before it
// when the frame budget strided them).
struct GridPosition {
  double u = 1.0;
  GridAlign align = GridAlign::NoiseLevel;
};

struct GridCellMetrics {
  int64_t evaluations = 0;
  double wall_ms = 0;
  EnergyFigure energy;
  double exact_rms = NAN;
  int ref_row = 0, ref_col = 0;  // the reference cell of displacement
  double displacement = NAN;
  PathFigure path;
  int path_frames = 0;  // frames the path figures used (every frame unless the frame budget strided them)
  int frame = 0;        // the frame GridResult::x holds (N: the final samples)
};

// The reference cell of row r: the one with the most steps, the rightmost of a tie.
int reference_col(const GridPlan& plan, int r);

// Runs the cells on `exec` and measures them (every metric on the final samples). x: (rows, cols, n, dim)
// row-major, the final samples, or with `position` each cell's state at that timeline position.
struct GridResult {
  std::vector<float> x;
  std::vector<GridCellMetrics> metrics;  // row-major
  std::optional<GridPosition> position;
};
GridResult run_grid(const GridPlan& plan, GridExecutor& exec, const std::function<void()>& stop = {},
                    std::optional<GridPosition> position = {});

// The metrics as CSV (one line per cell, a header first) and as JSON (the spec, then one object per cell);
// NaN is an empty CSV field and JSON null.
std::string grid_metrics_csv(const GridPlan& plan, const GridResult& r);
nlohmann::json grid_metrics_json(const GridPlan& plan, const GridResult& r);


}  // namespace diffscope
