// settings_io.h — the app's plain settings (what is sampled, how it is drawn) and their JSON form.
// Persisted in $XDG_CONFIG_HOME/diffscope/settings.json (ARCHITECTURE.md); a corrupt file gives defaults
// and a note, never an error (the file is kept as settings.json.bad).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "diffusion/step_table.h"
#include "model/family.h"
#include "run/backend.h"
#include "run/start_edit.h"

namespace diffscope {

// What the field view draws at each grid point (SEMANTICS §6 "The field view"): eps (arrows along -eps), x0 (a
// line to the data prediction D), output (the network's raw output o: eps, x0, v or the flow velocity; arrows
// along -o) or score (grad log p = -eps / sigma in the family's own state; arrows along it).
enum class FieldQuantity { Eps, X0, Output, Score };

// What the 2D view draws for the samples (SEMANTICS §6 "The density view"): the points (and trails), their 2D
// histogram tone-mapped through a palette, or the histogram with the points over it.
enum class ViewMode { Points, Density, Both };
// How points and trails are drawn (SEMANTICS §6 "Drawing points and trails"): one GL primitive each with alpha
// blending, or a compute splat into an accumulation image with an order-independent blend.
enum class DrawMode { Primitives, Splat };
// "primitives" | "splat" (the draw_mode setting's values).
const char* draw_mode_name(DrawMode m);
// Throws InvalidInput "draw_mode = 'V' is not valid; valid: primitives, splat".
DrawMode parse_draw_mode(const std::string& v);
// The density view's tone map: log(1 + count) / log(1 + max) or count / max.
enum class DensityScale { Log, Linear };
// "points" | "density" | "both" (the view_mode setting's values).
const char* view_mode_name(ViewMode m);
// Throws InvalidInput "view_mode = 'V' is not valid; valid: points, density, both".
ViewMode parse_view_mode(const std::string& v);

// What is sampled. Changing any of these re-simulates the trajectory (SEMANTICS §3).
struct SamplingSettings {
  std::string model_path;             // "" = the bundled default (moons)
  int n_samples = 4096;               // B
  Sampler sampler = Sampler::Ddim;
  Spacing spacing = Spacing::Default;  // ddim and the newer solvers; ddpm and ddpm-mean always take default
  double eta = 0.0;                   // ddim only, [0, 1]
  int steps = 100;                    // N, [1, t_start + 1]
  int t_start = 999;                  // [0, T-1]
  int steps_per_launch = 10;          // S of the fused kernel, >= 1
  uint64_t seed = 0;
  // On the GPU: fp16 operands on the tensor cores (tf32's accuracy at bf16's speed, docs/PERFORMANCE.md "fp16"); the
  // CPU backend computes in fp32 whatever this says (SamplingSession's checked settings).
  Precision precision = Precision::F16;
  std::string backend = "auto";       // auto | cpu | cuda
  bool from_data = false;             // start from noised data samples (SEMANTICS §3)
  int memory_budget_mb = 1024;        // trajectory buffer budget; above it every k-th frame is kept
  // Model families (SEMANTICS §2 "Model families"): the family of a file that names none (unset: "from_file",
  // i.e. epsilon; a file that names its own family keeps it and the UI says the override is ignored), and the
  // shift of a flow list (unset: the scheduler config's, else the file's; kFlowShiftRange).
  std::optional<Family> prediction_type;
  std::optional<double> flow_shift;

  bool operator==(const SamplingSettings& o) const;
  bool operator!=(const SamplingSettings& o) const { return !(*this == o); }
};

// How it is drawn; changing these never re-simulates.
struct ViewSettings {
  int trail_frames = 12;       // trails over the last L stored frames; 0 = off
  bool show_data = true;       // the model's data_samples as an overlay
  bool show_axes = true;       // the 2D view's unit grid and axes
  bool show_field = false;     // the network's field on a grid at the shown frame's noise level
  FieldQuantity field_quantity = FieldQuantity::Eps;  // what the field shows (session/field_view.h)
  int field_grid = 24;         // arrows per side
  float point_size = 3.0f;     // pixels at content scale 1
  float point_alpha = 0.6f;
  bool vsync = true;
  bool follow_newest = true;   // the shown frame follows the newest computed one while sampling
  float play_speed = 1.0f;     // frames advanced per UI frame while playing
  bool loop_resimulate = false;  // re-simulate with seed+1 whenever a run completes (live benchmark)
  int steps_per_frame = 0;     // steps computed per UI frame; 0 = automatic (time budget on the CPU, all on the GPU)
  int image_grid_cols = 12;    // image models: samples per row of the grid
  bool show_ui = true;
  ViewMode view_mode = ViewMode::Points;
  DrawMode draw_mode = DrawMode::Primitives;
  DensityScale density_scale = DensityScale::Log;
  int density_bin_px = 3;      // pixels per histogram bin (each way)
  bool density_contours = true;  // analytic mixtures: contours of the exact noised density at the shown level
  // Camera: center and half the visible height, in data units.
  double cam_x = 0.0, cam_y = 0.0, cam_half_h = 3.0;
  bool cam_auto = true;        // fit the camera to the data on model load
  // Picked particles (SEMANTICS §6 "Picked particles and edited starts"): the pinned rows, highlighted with their
  // whole trajectory, and the rows whose start state the user dragged (their trajectories re-run one row each).
  std::vector<int> picks;
  std::vector<StartEdit> start_edits;
  // The comparison grid in the window (SEMANTICS §10 "The grid in the window"): its spec in the text form of
  // grid/grid_spec.h ("" = none), whether it is shown in place of the single view, the metric its cells show and
  // sort by (grid/grid_live.h grid_metric_names), the sorting, and the timeline's alignment (noise | step).
  std::string grid;
  bool grid_show = false;
  std::string grid_metric = "energy";
  bool grid_sort = false;
  std::string grid_align = "noise";
};

struct AppSettings {
  SamplingSettings sampling;
  ViewSettings view;
  std::string export_dir;       // "" = the user's pictures folder (picture/export_dir.h picks it)
  int export_width = 1024, export_height = 1024;
  int image_grid_scale = 8;
  // Exported 2D pictures as figures: axes with tick values, a legend and a caption line around the view
  // (picture/figure.h, SEMANTICS §6 "Figures"). Off: the exported pictures are the window's view, pixel for pixel.
  bool figure = false;
};

nlohmann::json to_json(const AppSettings& s);
// Reads what it can; unknown or ill-typed fields keep their defaults and add a line to `note`.
AppSettings app_settings_from_json(const nlohmann::json& j, std::string* note);
// Reads a settings file. Missing file: defaults, empty note. Corrupt file (not JSON, or not a JSON object): defaults and a note saying
// so; the file is first renamed to PATH.bad (PATH.bad.2, ... when taken), so the defaults saved later do not
// destroy it, and the note names where it went.
AppSettings load_app_settings(const std::string& path, std::string* note);
// Writes atomically (temporary file + rename); returns false and fills `error` when it cannot.
bool save_app_settings(const std::string& path, const AppSettings& s, std::string* error);

// $XDG_CONFIG_HOME/diffscope, else $HOME/.config/diffscope (not created here).
std::string default_config_dir();

}  // namespace diffscope
