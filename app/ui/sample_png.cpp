// sample_png.cpp — headless rendering of a sample run for the CLI.
#include "ui/sample_png.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/atomic_write.h"
#include "core/errors.h"
#include "core/video_writer.h"
#include "core/json_path.h"
#include "core/output_files.h"
#include "render/egl_context.h"
#include "render/gl_buffers.h"
#include "render/renderer.h"
#include "ui/exporter.h"
#include "ui/sha256.h"
#include "core/view_fit.h"

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

struct RunRenderer::Impl {
  // Declared in this order so that the GL objects go before the context that owns them.
  render::EglContext egl;  // throws ResourceUnavailable
  std::string device = egl.description();
  render::GlTrajectoryBuffer traj;
  render::Renderer renderer;
  render::OffscreenTarget target;
  render::SceneInput in;
  const DiffusionModel* model = nullptr;
  Projection p;
  const float* last = nullptr;
};

RunRenderer::RunRenderer(const SamplePng& r) : m(std::make_unique<Impl>()) {
  if (!r.model || r.B < 1 || r.n_frames < 1 || !r.frames) throw InvalidInput("--png: nothing to render");
  const DiffusionModel& md = *r.model;
  const int dim = md.net.dim;
  const size_t frame_bytes = size_t(r.B) * dim * sizeof(float);
  m->traj.resize(frame_bytes * r.n_frames);
  m->traj.upload(0, frame_bytes * r.n_frames, r.frames);
  m->p = fit_projection(md, r.frames, r.B);
  m->renderer.set_projection(m->p.mean, m->p.axis0, m->p.axis1);
  m->renderer.set_data(md.data_samples.data(), md.n_data, dim);
  if (md.n_data > 0) {
    const auto [lo, hi] = std::minmax_element(md.data_samples.begin(), md.data_samples.end());
    m->renderer.set_image_range(*lo, *hi > *lo ? *hi : *lo + 1);
  }
  render::SceneInput& in = m->in;
  in.trajectory = &m->traj;
  in.B = r.B;
  in.dim = dim;
  in.point_size = r.B > 20000 ? 2.0f : 3.0f;
  in.point_alpha = r.B > 20000 ? 0.35f : 0.6f;
  in.image_side = image_side(md);
  in.image_model = in.image_side > 0;
  in.grid_cols = 12;
  m->model = &md;
  m->last = r.frames + size_t(r.n_frames - 1) * r.B * dim;
}

RunRenderer::~RunRenderer() = default;

const std::string& RunRenderer::device() const { return m->device; }

std::vector<uint8_t> RunRenderer::render(int slot, int w, int h) {
  render::SceneInput in = m->in;
  in.slot = slot;
  in.trail_slots = std::min(12, slot);
  const render::Rect pane = render::Renderer::layout(w, h, in.image_model, {}).scatter;
  const CameraFit c = fit_camera(*m->model, m->p, pane.h > 0 ? double(pane.w) / pane.h : 1.0, m->last, in.B);
  in.cam = {c.cx, c.cy, c.half_h};
  m->target.ensure(w, h);
  m->target.bind();
  m->renderer.draw_scene(in, w, h);
  return m->target.read_rgba_top_down();
}

namespace {

// The sidecar of SEMANTICS §6 for a CLI picture or video of the run.
nlohmann::json run_sidecar(const SamplePng& r, const std::string& device, const std::string& generator) {
  const DiffusionModel& m = *r.model;
  nlohmann::json j = r.run;
  j["kind"] = "sample";
  if (!j.contains("n")) j["n"] = r.B;  // the sample count (SEMANTICS §6)
  j["generator"] = generator;
  j["model"] = path_object("file", m.path);  // any file name, losslessly (SEMANTICS §6)
  j["model"]["sha256"] = sha256_file(m.path);
  auto ds = m.metadata.find("dataset");
  if (ds != m.metadata.end()) j["model"]["dataset"] = ds->second;
  j["render_device"] = device;
  return j;
}

}  // namespace

SamplePngFiles render_sample_png(const SamplePng& r) {
  std::string device;
  std::vector<uint8_t> px;
  {
    RunRenderer rr(r);
    device = rr.device();
    px = rr.render(r.n_frames - 1, r.width, r.height);
  }
  nlohmann::json j = run_sidecar(r, device, "diffscope sample --png");
  put_path(j, "png", std::filesystem::path(r.png).filename().string());
  j["size"] = {r.width, r.height};
  j["frames_drawn"] = r.n_frames;
  SamplePngFiles out;
  out.sidecar = sidecar_text(j);
  out.png = encode_png_rgba(px, r.width, r.height, 3, r.png_text ? out.sidecar : "");
  return out;
}

int render_sample_video(const SamplePng& r, const SampleVideo& v) {
  const VideoFormat format = video_format_of("--video", v.path);
  int w = r.width, h = r.height;
  video_frame_size(format, &w, &h);
  const int last = v.last < 0 ? r.n_frames - 1 : v.last;
  if (v.first < 0 || last >= r.n_frames || v.first > last) throw InvalidInput("--video-frames: empty frame range");
  RunRenderer rr(r);
  std::unique_ptr<VideoWriter> writer;
  std::string fallback;
  try {
    writer = std::make_unique<VideoWriter>(VideoOptions{v.path, w, h, v.fps, v.lossless, "--video"});
  } catch (const ResourceUnavailable&) {
    const std::filesystem::path vp(v.path);
    fallback = next_free_name(vp.parent_path().empty() ? "." : vp.parent_path().string(), vp.stem().string() + "_frames", "");
    std::filesystem::create_directories(fallback);
    nlohmann::json j = run_sidecar(r, rr.device(), "diffscope sample --video (PNG frames: no ffmpeg)");
    j["size"] = {w, h};
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
  for (int s = v.first; s <= last; ++s) writer->add_frame(rr.render(s, w, h).data());
  writer->finish();
  nlohmann::json j = run_sidecar(r, rr.device(), "diffscope sample --video");
  put_path(j, "video", std::filesystem::path(v.path).filename().string());
  j["size"] = {w, h};
  j["fps"] = v.fps;
  j["lossless"] = v.lossless;
  std::vector<int> frames;
  for (int s = v.first; s <= last; ++s) frames.push_back(s < int(r.frame_numbers.size()) ? r.frame_numbers[s] : s);
  j["frames"] = frames;
  try {
    write_file_atomic(png_sidecar_path(v.path), sidecar_text(j), "--video");
  } catch (...) {  // both or neither (SEMANTICS §9)
    std::error_code ec;
    std::filesystem::remove(v.path, ec);
    throw;
  }
  return last - v.first + 1;
}

}  // namespace diffscope::ui
