// sample_png.cpp — headless rendering of a sample run for the CLI.
#include "picture/sample_png.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "base/errors.h"
#include "diffusion/field_eval.h"
#include "formats/json_path.h"
#include "picture/colour_bar_text.h"
#include "formats/sha256.h"
#include "formats/video_writer.h"
#include "picture/exporter.h"
#include "picture/figure_scene.h"
#include "picture/picture.h"
#include "platform/atomic_write.h"
#include "platform/output_files.h"
#include "render/egl_context.h"
#include "render/gl_buffers.h"
#include "render/renderer.h"
#include "session/field_view.h"
#include "session/settings_schema.h"
#include "session/view_fit.h"

namespace diffscope {

void parse_png_size(const std::string& arg, const std::string& value, int* w, int* h) {
  parse_size_wxh(arg, value, w, h);
}

int SamplePng::shown_slot() const {
  if (frame < 0 || frame_numbers.empty()) return n_frames - 1;
  const auto it = std::upper_bound(frame_numbers.begin(), frame_numbers.end(), frame);
  return std::clamp(int(it - frame_numbers.begin()) - 1, 0, n_frames - 1);
}

namespace {
// The GUI's automatic camera (App::fit_camera on model load: the data and the unit-noise box) fitted in a pane
// of camera_aspect (0: the w x h picture's own pane), as the camera the view settings would hold.
CameraFit auto_camera(const SamplePng& r, const Projection& p, int w, int h) {
  const double aspect = r.camera_aspect > 0 ? r.camera_aspect : picture_pane_aspect(w, h, image_side(*r.model) > 0);
  return fit_camera(*r.model, p, aspect);
}

// The camera of a w x h picture: the given one, else the automatic one, widened as the GUI's export widens the
// window's camera (picture/picture.h picture_camera).
CameraFit sample_camera(const SamplePng& r, const Projection& p, int w, int h) {
  ViewSettings v = r.settings.view;
  if (!r.camera_given) {
    const CameraFit c = auto_camera(r, p, w, h);
    v.cam_x = c.cx, v.cam_y = c.cy, v.cam_half_h = c.half_h;
  }
  return picture_camera(v, r.camera_aspect, w, h, image_side(*r.model) > 0);
}
}  // namespace

struct RunRenderer::Impl {
  // Declared in this order so that the GL objects go before the context that owns them.
  render::EglContext egl;  // throws ResourceUnavailable
  std::string device = egl.description();
  render::GlTrajectoryBuffer traj;
  render::Renderer renderer;
  render::OffscreenTarget target;
  const SamplePng* req = nullptr;
  Projection p;
  std::vector<render::LineVertex> field;  // the field lines of the last render (data units)
};

RunRenderer::RunRenderer(const SamplePng& r) : m(std::make_unique<Impl>()) {
  if (!r.model || r.B < 1 || r.n_frames < 1 || !r.frames) throw InvalidInput("--png: nothing to render");
  const DiffusionModel& md = *r.model;
  const int dim = md.net.dim;
  const size_t frame_bytes = size_t(r.B) * dim * sizeof(float);
  m->traj.resize(frame_bytes * r.n_frames);
  m->traj.upload(0, frame_bytes * r.n_frames, r.frames);
  // As App::update_projection: the data's principal axes, else those of the start state (frame 0).
  m->p = fit_projection(md, r.frames, r.B);
  m->renderer.set_projection(m->p.mean, m->p.axis0, m->p.axis1);
  m->renderer.set_data(md.data_samples.data(), md.n_data, dim);
  if (md.n_data > 0) {
    const auto [lo, hi] = std::minmax_element(md.data_samples.begin(), md.data_samples.end());
    m->renderer.set_image_range(*lo, *hi > *lo ? *hi : *lo + 1);
  } else {
    m->renderer.set_image_range(-1, 1);
  }
  m->req = &r;
}

RunRenderer::~RunRenderer() = default;

const std::string& RunRenderer::device() const { return m->device; }

std::vector<uint8_t> RunRenderer::render(int slot, int w, int h) {
  const SamplePng& r = *m->req;
  const DiffusionModel& md = *r.model;
  const int side = image_side(md);
  render::SceneInput in = picture_scene(r.settings.view, r.ui_scale, &m->traj, r.B, md.net.dim, slot, side);
  const CameraFit cam = sample_camera(r, m->p, w, h);
  in.cam = {cam.cx, cam.cy, cam.half_h};
  if (in.show_field) {
    const int j = slot < int(r.frame_numbers.size()) ? r.frame_numbers[slot] : slot;
    const FieldQuantity q = r.settings.view.field_quantity;
    // The app's field (session/field_view.h): the family's quantity at the frame's level; an epsilon network reading
    // t/T takes the backend's eps field at the frame's timestep, as before.
    FieldLevel lv;
    if (r.table) {
      lv = field_level(md, *r.table, j);
    } else {
      lv.t = field_timestep(r.step_t, j);
      lv.level = NoiseLevel::vp(md.schedule.alphas_cumprod[lv.t], lv.t);
      lv.path_eps = true;
    }
    const PathField path = [&](const float* p, int n, int t, bool x0, float* out) {
      if (r.field) r.field(p, n, t, x0, out);
      else eval_field_cpu(md, p, n, t, x0, out);
    };
    m->field = field_lines(cam, picture_pane_aspect(w, h, in.image_model), r.settings.view.field_grid,
                           q == FieldQuantity::X0, [&](const float* p, int n, float* out) {
                             eval_field(md, lv, q, p, n, out, path);
                           });
    m->renderer.set_field_lines(m->field);
  } else {
    m->field.clear();
  }
  in.contours = density_contours(r.settings.view, md, r.table, slot < int(r.frame_numbers.size()) ? r.frame_numbers[slot] : slot);
  m->target.ensure(w, h);
  m->target.bind();
  m->renderer.draw_scene(in, w, h);
  std::vector<uint8_t> px = m->target.read_rgba_top_down();
  label_scene_colour_bar(px, w, h, in, m->renderer, r.ui_scale);
  return px;
}

Figure RunRenderer::figure(int slot, bool vector) {
  const SamplePng& r = *m->req;
  const DiffusionModel& md = *r.model;
  Figure f;
  f.width = r.width(), f.height = r.height();
  f.image_model = image_side(md) > 0;
  const int frame = slot < int(r.frame_numbers.size()) ? r.frame_numbers[slot] : slot;
  const ViewSettings& v = r.settings.view;
  const int trail = std::min(v.trail_frames, slot);
  describe_run(f, md, r.table, r.settings, r.B, frame, trail);
  const FigureRect plot = figure_plot_rect(f);
  const CameraFit cam = sample_camera(r, m->p, plot.w, plot.h);
  f.cam = {cam.cx, cam.cy, cam.half_h};
  f.raster = render(slot, plot.w, plot.h);
  f.point_px = v.point_size * r.ui_scale, f.point_alpha = v.point_alpha, f.show_axes = v.show_axes;
  f.vector_marks = vector && figure_uses_vector_marks(r.B, trail, f.image_model, v.view_mode != ViewMode::Points);
  if (f.vector_marks) {
    f.marks = figure_marks(md, m->p, r.frames, r.B, slot, trail, f.show_data);
    f.marks.field = m->field;
  }
  return f;
}

namespace {

// The sidecar of SEMANTICS §6 for a CLI picture or video of the run (picture/picture.h build_sidecar).
nlohmann::json run_sidecar(const SamplePng& r, const std::string& render_device, const std::string& generator, int slot) {
  SidecarInput in;
  in.kind = "sample";
  in.generator = generator;
  in.model = r.model;
  in.model_sha256 = sha256_file(r.model->path);
  in.settings = r.settings;
  in.backend = r.backend;
  in.device = r.device;
  in.frame = slot < int(r.frame_numbers.size()) ? r.frame_numbers[slot] : slot;
  in.timestep = in.frame < int(r.step_t.size()) ? r.step_t[in.frame] : -1;
  in.trajectory_stride = r.trajectory_stride;
  in.ui_scale = r.ui_scale;
  in.camera_aspect = r.camera_aspect;
  in.command_line = r.command_line;
  in.table = r.table;
  in.kept_frames = r.frame_numbers;
  in.extra = r.extra;
  in.extra["render_device"] = render_device;
  return build_sidecar(in);
}

// The fitted camera in the sidecar `j` when no camera was given, so that the sidecar reproduces the picture anywhere
// (with camera_aspect): PNGs and vector figures alike.
void record_fitted_camera(nlohmann::json& j, const SamplePng& r) {
  if (r.camera_given) return;
  const CameraFit c = auto_camera(r, fit_projection(*r.model, r.frames, r.B), r.width(), r.height());
  j["view"]["cam_x"] = c.cx, j["view"]["cam_y"] = c.cy, j["view"]["cam_half_h"] = c.half_h;
}

}  // namespace

SamplePngFiles render_sample_png(const SamplePng& r) {
  std::string device;
  std::vector<uint8_t> px;
  const int slot = r.shown_slot();
  {
    RunRenderer rr(r);
    device = rr.device();
    // A figure (SEMANTICS §6 "Figures"): the view inside axes, legend and caption; else the view alone.
    px = r.settings.figure ? render_figure_rgba(rr.figure(slot, false)) : rr.render(slot, r.width(), r.height());
  }
  nlohmann::json j = run_sidecar(r, device, "diffscope sample --png", slot);
  put_path(j, "png", std::filesystem::path(r.png).filename().string());
  record_fitted_camera(j, r);
  SamplePngFiles out;
  out.sidecar = sidecar_text(j);
  out.png = encode_png_rgba(px, r.width(), r.height(), 3, r.png_text ? out.sidecar : "");
  return out;
}

SampleFigureFiles render_sample_figure(const SamplePng& r, FigureFormat format, const std::string& path,
                                       const std::string& arg) {
  const int slot = r.shown_slot();
  RunRenderer rr(r);
  const Figure f = rr.figure(slot, true);
  nlohmann::json j = run_sidecar(r, rr.device(), "diffscope sample " + arg, slot);
  put_path(j, format == FigureFormat::Svg ? "svg" : "pdf", std::filesystem::path(path).filename().string());
  record_fitted_camera(j, r);
  SampleFigureFiles out;
  out.sidecar = sidecar_text(j);
  out.figure = render_figure_vector(f, format, arg, format == FigureFormat::Svg ? out.sidecar : r.command_line);
  return out;
}

int render_sample_video(const SamplePng& r, const SampleVideo& v) {
  const VideoFormat format = video_format_of("--video", v.path);
  int w = r.width(), h = r.height();
  video_frame_size(format, &w, &h);
  const int last = v.last < 0 ? r.n_frames - 1 : v.last;
  if (v.first < 0 || last >= r.n_frames || v.first > last) throw InvalidInput("--video-frames: empty frame range");
  RunRenderer rr(r);
  std::unique_ptr<VideoWriter> writer;
  std::string fallback;
  try {
    writer = std::make_unique<VideoWriter>(VideoOptions{v.path, w, h, v.fps, v.lossless, "--video", v.yuv420});
  } catch (const ResourceUnavailable&) {
    const std::filesystem::path vp(v.path);
    fallback = next_free_name(vp.parent_path().empty() ? "." : vp.parent_path().string(), vp.stem().string() + "_frames", "");
    std::filesystem::create_directories(fallback);
    nlohmann::json j = run_sidecar(r, rr.device(), "diffscope sample --video (PNG frames: no ffmpeg)", last);
    j["export_width"] = w, j["export_height"] = h;
    for (int s = v.first; s <= last; ++s) {
      char name[32];
      std::snprintf(name, sizeof name, "/frame_%05d.png", s - v.first);
      j["png"] = name + 1;
      j["frame"] = s < int(r.frame_numbers.size()) ? r.frame_numbers[s] : s;
      write_png_rgba(fallback + name, rr.render(s, w, h), w, h, 3, r.png_text ? sidecar_text(j) : "");
    }
    throw ResourceUnavailable("--video " + v.path + ": ffmpeg was not found (install Debian's package: apt-get "
                              "install ffmpeg, or set DIFFSCOPE_FFMPEG); wrote the " + std::to_string(last - v.first + 1) +
                              " frames as PNGs into " + fallback + " instead (encode later with: ffmpeg -framerate " +
                              std::to_string(int(v.fps)) + " -i " + fallback + "/frame_%05d.png " + v.path + ")");
  }
  for (int s = v.first; s <= last; ++s) {
    writer->add_frame(rr.render(s, w, h).data());
    if (v.on_frame) v.on_frame(s - v.first + 1);
  }
  writer->finish();
  nlohmann::json j = run_sidecar(r, rr.device(), "diffscope sample --video", last);
  put_path(j, "video", std::filesystem::path(v.path).filename().string());
  j["export_width"] = w, j["export_height"] = h;
  j["fps"] = v.fps;
  j["lossless"] = v.lossless;
  if (format == VideoFormat::Mp4 && !v.lossless) j["pix_fmt"] = v.yuv420 ? "yuv420p" : "yuv444p";
  std::vector<int> frames;
  for (int s = v.first; s <= last; ++s) frames.push_back(s < int(r.frame_numbers.size()) ? r.frame_numbers[s] : s);
  j["frames"] = frames;
  try {
    write_file_atomic(video_sidecar_path(v.path), sidecar_text(j), "--video");
  } catch (...) {  // both or neither (SEMANTICS §9)
    std::error_code ec;
    std::filesystem::remove(v.path, ec);
    throw;
  }
  return last - v.first + 1;
}

}  // namespace diffscope
