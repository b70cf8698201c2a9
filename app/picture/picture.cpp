// picture.cpp — the scene, camera, field and sidecar of a picture (picture.h).
#include "picture/picture.h"

#include <algorithm>
#include <cmath>
#include <ctime>

#include "formats/json_path.h"
#include "platform/model_paths.h"
#include "session/settings_schema.h"

namespace diffscope {

render::SceneInput picture_scene(const ViewSettings& v, float ui_scale, const TrajectoryBufferTarget* trajectory, int B,
                                 int dim, int slot, int image_side) {
  render::SceneInput in;
  in.trajectory = trajectory;
  in.B = B;
  in.dim = dim;
  in.slot = slot;
  in.trail_slots = std::min(v.trail_frames, slot);
  in.point_size = v.point_size * ui_scale;
  in.point_alpha = v.point_alpha;
  in.show_data = v.show_data;
  in.show_axes = v.show_axes;
  in.show_field = v.show_field && dim == 2;
  in.cam = {v.cam_x, v.cam_y, v.cam_half_h};
  in.image_model = image_side > 0;
  in.image_side = image_side;
  in.grid_cols = v.image_grid_cols;
  in.draw_points = v.view_mode != ViewMode::Density;
  in.draw_density = v.view_mode != ViewMode::Points;
  in.splat = v.draw_mode == DrawMode::Splat;
  in.density_log = v.density_scale == DensityScale::Log;
  in.density_bin_px = v.density_bin_px;
  in.picks = v.picks;
  return in;
}

std::vector<IsoGaussian2> density_contours(const ViewSettings& v, const DiffusionModel& m, const StepTable* table,
                                           int frame) {
  if (v.view_mode == ViewMode::Points || !v.density_contours || !m.mixture || m.mixture->dim != 2 || !table ||
      table->levels.empty())
    return {};
  return noised_mixture(*m.mixture, table->levels[std::clamp<size_t>(size_t(std::max(frame, 0)), 0, table->levels.size() - 1)]);
}

double picture_pane_aspect(int w, int h, bool image_model) {
  const render::Rect pane = render::Renderer::layout(w, h, image_model, {}).scatter;
  return pane.h > 0 ? double(pane.w) / pane.h : 1.0;
}

CameraFit picture_camera(const ViewSettings& v, double camera_aspect, int w, int h, bool image_model) {
  const double to = picture_pane_aspect(w, h, image_model);
  return fit_view_to_aspect({v.cam_x, v.cam_y, v.cam_half_h}, camera_aspect > 0 ? camera_aspect : to, to);
}

int field_timestep(const std::vector<int>& t, int j) {
  if (t.empty()) return 0;
  return t[std::clamp(j, 0, int(t.size()) - 1)];
}

std::vector<render::LineVertex> field_lines(const CameraFit& cam, double aspect, int grid_in, bool x0, const FieldEval& eval) {
  const int grid = std::clamp(grid_in, 4, 96);
  const double hw = cam.half_h * aspect, hh = cam.half_h;
  const int gx = std::max(4, int(std::round(grid * aspect))), gy = grid;
  std::vector<float> pts(size_t(gx) * gy * 2), out(pts.size());
  for (int iy = 0; iy < gy; ++iy)
    for (int ix = 0; ix < gx; ++ix) {
      const size_t i = size_t(iy) * gx + ix;
      pts[2 * i] = float(cam.cx - hw + (ix + 0.5) * 2 * hw / gx);
      pts[2 * i + 1] = float(cam.cy - hh + (iy + 0.5) * 2 * hh / gy);
    }
  eval(pts.data(), gx * gy, out.data());
  std::vector<render::LineVertex> lines;
  const double cell = 2 * hh / gy;
  const size_t n = size_t(gx) * gy;
  if (!x0) {
    // Arrows along -eps (towards the data: the score direction), length scaled so the longest is 0.9 cell;
    // color by |eps| (blue small .. orange large).
    double max_len = 1e-12;
    for (size_t i = 0; i < n; ++i) max_len = std::max(max_len, double(std::hypot(out[2 * i], out[2 * i + 1])));
    for (size_t i = 0; i < n; ++i) {
      const float ex = -out[2 * i], ey = -out[2 * i + 1];
      const float len = std::hypot(ex, ey);
      const float k = float(0.9 * cell / max_len);
      const float m = float(len / max_len);
      const float cr = 0.3f + 0.7f * m, cg = 0.55f + 0.1f * m, cb = 1.0f - 0.7f * m, ca = 0.85f;
      const float x0p = pts[2 * i], y0p = pts[2 * i + 1], x1 = x0p + k * ex, y1 = y0p + k * ey;
      lines.push_back({x0p, y0p, cr, cg, cb, ca * 0.5f});
      lines.push_back({x1, y1, cr, cg, cb, ca});
      // arrowhead
      const float dx = x1 - x0p, dy = y1 - y0p, h = 0.3f;
      lines.push_back({x1, y1, cr, cg, cb, ca});
      lines.push_back({x1 - h * (dx - 0.5f * dy), y1 - h * (dy + 0.5f * dx), cr, cg, cb, ca});
      lines.push_back({x1, y1, cr, cg, cb, ca});
      lines.push_back({x1 - h * (dx + 0.5f * dy), y1 - h * (dy - 0.5f * dx), cr, cg, cb, ca});
    }
  } else {
    // A faint line from each grid point to the network's predicted clean point, which is marked.
    for (size_t i = 0; i < n; ++i) {
      const float xa = pts[2 * i], ya = pts[2 * i + 1], x1 = out[2 * i], y1 = out[2 * i + 1];
      lines.push_back({xa, ya, 0.4f, 0.75f, 1.0f, 0.05f});
      lines.push_back({x1, y1, 0.4f, 0.75f, 1.0f, 0.35f});
      const float c = float(cell * 0.08);
      lines.push_back({x1 - c, y1, 1.0f, 0.85f, 0.4f, 0.9f});
      lines.push_back({x1 + c, y1, 1.0f, 0.85f, 0.4f, 0.9f});
      lines.push_back({x1, y1 - c, 1.0f, 0.85f, 0.4f, 0.9f});
      lines.push_back({x1, y1 + c, 1.0f, 0.85f, 0.4f, 0.9f});
    }
  }
  return lines;
}

nlohmann::json family_sidecar_keys(const StepTable& table, const std::vector<int>& kept_frames) {
  nlohmann::json j;
  j["prediction_type"] = family_name(table.family.family);
  j["time_input"] = time_input_name(table.family.time_input);
  const Guidance& g = table.guidance;  // SEMANTICS §12: written when the run names a class or guidance
  if (g.class_label >= 0) j["class_label"] = g.class_label;
  if (g.scale != 1.0) j["guidance_scale"] = g.scale;
  if (g.has_interval())
    j["guidance_interval"] = {g.sigma_lo, std::isinf(g.sigma_hi) ? nlohmann::json("inf") : nlohmann::json(g.sigma_hi)};
  if (g.rescale != 0.0) j["guidance_rescale"] = g.rescale;
  if (table.levels.empty()) return j;
  std::vector<int> frames = kept_frames;
  if (frames.empty())
    for (int k = 0; k < static_cast<int>(table.levels.size()); ++k) frames.push_back(k);
  nlohmann::json time = nlohmann::json::array(), abar = nlohmann::json::array();
  for (int f : frames) {
    const NoiseLevel& lv = table.levels.at(static_cast<size_t>(f));
    time.push_back(lv.time);
    abar.push_back(lv.vp_abar());
  }
  j["levels"] = {{"frames", frames}, {"time", time}, {"vp_abar", abar}};
  return j;
}

nlohmann::json build_sidecar(const SidecarInput& in) {
  nlohmann::json j;
  j["format"] = 3;
  j["kind"] = in.kind;
  j["generator"] = in.generator;
  if (in.model) {
    // Any file name, losslessly, and absolute, so that the sidecar works from any folder (SEMANTICS §6).
    j["model"] = path_object("file", absolute_path(in.model->path));
    j["model"]["sha256"] = in.model_sha256;
    auto ds = in.model->metadata.find("dataset");
    if (ds != in.model->metadata.end()) j["model"]["dataset"] = ds->second;
    // A bundled model by name too: a restore in another checkout or install opens it when `file` is gone.
    const std::string bundled = bundled_name_of(in.model->path);
    if (!bundled.empty()) j["model"]["bundled"] = bundled;
  }
  // Every sampling setting (what reproduces the .npy), then every view setting that changes a pixel.
  for (const SettingField& f : setting_fields()) {
    if (!f.get || f.key == std::string("backend")) continue;
    if (f.section == SettingSection::Sampling || (f.section == SettingSection::Export && f.pixel))
      j[f.key] = f.get(in.settings);
    else if (f.section == SettingSection::View && (f.pixel || f.key == std::string("cam_auto")))
      j["view"][f.key] = f.get(in.settings);
  }
  j["view"]["camera_aspect"] = in.camera_aspect;
  j["view"]["ui_scale"] = float_as_typed(in.ui_scale);  // 1.1, not 1.10000002384 (session/settings_schema.h)
  j["backend"] = in.backend;
  j["device"] = in.device;
  j["frame"] = in.frame;
  j["timestep"] = in.timestep;
  if (in.computed_steps >= 0) j["computed_steps"] = in.computed_steps;
  j["trajectory_stride"] = in.trajectory_stride;
  if (!in.command_line.empty()) put_path(j, "command_line", in.command_line);  // a model path of any bytes
  if (in.table) j.update(family_sidecar_keys(*in.table, in.kept_frames));
  const std::time_t now = std::time(nullptr);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  j["created_utc"] = ts;
  for (auto it = in.extra.begin(); it != in.extra.end(); ++it) j[it.key()] = it.value();
  return j;
}

}  // namespace diffscope
