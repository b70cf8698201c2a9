// picture.h — what a picture of a run shows, built ONE way for the window, the GUI's exports and `diffscope
// sample --png/--video` (SEMANTICS §6): the scene input from the view settings, the camera of
// an export of any size, the field arrows for that camera and pane, and the ONE sidecar builder.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diffusion/step_table.h"
#include "model/model.h"
#include "render/renderer.h"
#include "session/settings_io.h"
#include "session/view_fit.h"

namespace diffscope {

// The scene of kept slot `slot` of a (B, dim) trajectory drawn with view settings `v` at UI scale `ui_scale`
// (point size in pixels = point_size * ui_scale; trails over min(trail_frames, slot) earlier slots). The camera
// is the view's; no UI insets. image_side > 0 draws the image grid beside the 2D view.
render::SceneInput picture_scene(const ViewSettings& v, float ui_scale, const TrajectoryBufferTarget* trajectory, int B,
                                 int dim, int slot, int image_side);

// The density view's contours at frame `frame` of a run: the analytic mixture of a dim-2 model noised to the
// frame's level table->levels[frame] (the family's (alpha, sigma); frame N is the clean data) by
// diffusion/density.h noised_mixture, when the view shows the density (view_mode density or both) and
// density_contours is on; else none (also without a table).
std::vector<IsoGaussian2> density_contours(const ViewSettings& v, const DiffusionModel& m, const StepTable* table,
                                           int frame);

// The camera of a w x h picture: the view's camera (set in a pane of width/height `camera_aspect`) widened so
// the picture's 2D pane shows at least what that pane showed (fit_view_to_aspect). camera_aspect <= 0: the
// picture's own pane (no widening).
CameraFit picture_camera(const ViewSettings& v, double camera_aspect, int w, int h, bool image_model);
// Width/height of the 2D view's pane in a w x h picture.
double picture_pane_aspect(int w, int h, bool image_model);

// The field at a timestep: eval(pts, n, out) writes the eps (or predicted x0) of n points (n, 2) into out.
using FieldEval = std::function<void(const float* pts, int n, float* out)>;
// The field arrows (or x0 lines) for a camera over a pane of `aspect`, `grid` arrows per side (clamped to
// [4, 96]), as line vertices in data units (App::update_field's geometry, shared with exports and the CLI).
std::vector<render::LineVertex> field_lines(const CameraFit& cam, double aspect, int grid, bool x0, const FieldEval& eval);
// The timestep the field is drawn at for frame j of a run with step timesteps `t` (j clamped to the last step).
int field_timestep(const std::vector<int>& t, int j);

// Everything a sidecar says (SEMANTICS §6). Built by build_sidecar only.
struct SidecarInput {
  std::string kind;                   // snapshot | image_grid | state | trajectory | frame_sequence | video | figure | sample
  std::string generator;              // "diffscope gui", "diffscope sample --png", ...
  const DiffusionModel* model = nullptr;
  std::string model_sha256;           // of the bytes loaded
  AppSettings settings;               // sampling, view, export size of the picture
  std::string backend, device;        // "cpu" | "cuda", and the device's name
  int frame = -1;                     // the shown frame (the one drawn)
  int timestep = -1;                  // its timestep label (-1: clean, after the last step)
  int computed_steps = -1;            // -1: not written
  int trajectory_stride = 1;          // kept frames 0, s, 2s, ... and N (trails are drawn over kept frames)
  float ui_scale = 1;                 // UI content scale: point sizes in pixels are point_size * ui_scale
  double camera_aspect = 0;           // width/height of the pane the camera was set in (0: the picture's pane)
  std::string command_line;           // the `diffscope sample ...` line of the run ("" = none)
  // The run's model family (family_sidecar_keys): its step table (table->family, table->levels) and the frames
  // kept (frame numbers, ascending; empty: every frame 0..N). nullptr: no family keys (no run).
  const StepTable* table = nullptr;
  std::vector<int> kept_frames;
  nlohmann::json extra = nlohmann::json::object();  // merged last: timings, png, frames, ...
};
// The family keys of a sidecar (format 3, SEMANTICS §6): prediction_type and time_input of the run (table.family:
// the model's family or the front end's override), and "levels": {"frames": the kept frames, "time": the family's
// own noise level of each (VP timestep t, flow s, EDM sigma), "vp_abar": its VP-equivalent abar
// (NoiseLevel::vp_abar)} when the table has its levels, and the guidance keys the run names (SEMANTICS §12: class_label,
// guidance_scale, guidance_interval [lo, hi] with "inf", guidance_rescale). The request's own family values (sigmas, flow_shift,
// flow_mu) are the caller's to add (SidecarInput::extra).
nlohmann::json family_sidecar_keys(const StepTable& table, const std::vector<int>& kept_frames);

// Format 3: {"format": 3, kind, generator, model {file, sha256, dataset}, every sampling setting at the top
// level, the family keys (family_sidecar_keys), backend, device, frame, timestep, computed_steps,
// trajectory_stride, "view": every view setting that
// changes a pixel and cam_auto, camera_aspect, ui_scale, export_width, export_height, command_line,
// created_utc}, keys as in the settings schema (session/settings_schema.h).
nlohmann::json build_sidecar(const SidecarInput& in);

}  // namespace diffscope
