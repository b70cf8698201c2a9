// sample_png.cpp — headless rendering of a sample run for the CLI.
#include "ui/sample_png.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/errors.h"
#include "core/json_path.h"
#include "render/egl_context.h"
#include "render/gl_buffers.h"
#include "render/renderer.h"
#include "ui/exporter.h"
#include "ui/sha256.h"
#include "ui/view_fit.h"

namespace diffscope::ui {

void parse_png_size(const std::string& arg, const std::string& value, int* w, int* h) {
  int a = 0, b = 0;
  char x = 0, extra = 0;
  if (std::sscanf(value.c_str(), "%d%c%d%c", &a, &x, &b, &extra) != 3 || (x != 'x' && x != 'X') || a < 16 ||
      b < 16 || a > 16384 || b > 16384)
    throw InvalidInput(arg + " = " + value + " is not valid; want WxH with W and H in [16, 16384], e.g. 1024x1024");
  *w = a;
  *h = b;
}

SamplePngFiles render_sample_png(const SamplePng& r) {
  if (!r.model || r.B < 1 || r.n_frames < 1 || !r.frames) throw InvalidInput("--png: nothing to render");
  const DiffusionModel& m = *r.model;
  const int dim = m.net.dim;
  render::EglContext egl;  // throws ResourceUnavailable
  std::string device = egl.description();
  SamplePngFiles out;
  {
    render::GlTrajectoryBuffer traj;
    const size_t frame_bytes = size_t(r.B) * dim * sizeof(float);
    traj.resize(frame_bytes * r.n_frames);
    traj.upload(0, frame_bytes * r.n_frames, r.frames);
    render::Renderer renderer;
    const Projection p = fit_projection(m, r.frames, r.B);
    renderer.set_projection(p.mean, p.axis0, p.axis1);
    renderer.set_data(m.data_samples.data(), m.n_data, dim);
    if (m.n_data > 0) {
      const auto [lo, hi] = std::minmax_element(m.data_samples.begin(), m.data_samples.end());
      renderer.set_image_range(*lo, *hi > *lo ? *hi : *lo + 1);
    }
    render::SceneInput in;
    in.trajectory = &traj;
    in.B = r.B;
    in.dim = dim;
    in.slot = r.n_frames - 1;
    in.trail_slots = std::min(12, r.n_frames - 1);
    in.point_size = r.B > 20000 ? 2.0f : 3.0f;
    in.point_alpha = r.B > 20000 ? 0.35f : 0.6f;
    in.image_side = image_side(m);
    in.image_model = in.image_side > 0;
    in.grid_cols = 12;
    const render::Rect pane = render::Renderer::layout(r.width, r.height, in.image_model, {}).scatter;
    const float* last = r.frames + size_t(r.n_frames - 1) * r.B * dim;
    const CameraFit c = fit_camera(m, p, pane.h > 0 ? double(pane.w) / pane.h : 1.0, last, r.B);
    in.cam = {c.cx, c.cy, c.half_h};
    render::OffscreenTarget target;
    target.ensure(r.width, r.height);
    target.bind();
    renderer.draw_scene(in, r.width, r.height);
    out.png = encode_png_rgba(target.read_rgba_top_down(), r.width, r.height, 3);
  }
  nlohmann::json j = r.run;
  j["kind"] = "sample";
  if (!j.contains("N")) j["N"] = r.B;  // SEMANTICS §6 names the sample count N
  j["generator"] = "diffscope sample --png";
  j["model"] = path_object("file", m.path);  // any file name, losslessly (SEMANTICS §6)
  j["model"]["sha256"] = sha256_file(m.path);
  auto ds = m.metadata.find("dataset");
  if (ds != m.metadata.end()) j["model"]["dataset"] = ds->second;
  put_path(j, "png", std::filesystem::path(r.png).filename().string());
  j["size"] = {r.width, r.height};
  j["render_device"] = device;
  j["frames_drawn"] = r.n_frames;
  out.sidecar = j.dump(2) + "\n";
  return out;
}

}  // namespace diffscope::ui
