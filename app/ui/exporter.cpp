// exporter.cpp — snapshots, image grids, .npy and frame sequences with their sidecars.
#include "ui/exporter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>

#include "core/atomic_write.h"
#include "core/command_line.h"
#include "core/errors.h"
#include "core/finite_checks.h"
#include "core/json_path.h"
#include "core/npy.h"
#include "core/png_write.h"
#include "core/output_files.h"
#include "ui/app.h"
#include "ui/export_dir.h"
#include "ui/sha256.h"
#include "core/view_fit.h"

namespace fs = std::filesystem;

namespace diffscope::ui {

std::string next_free_name(const std::string& dir, const std::string& base, const std::string& ext) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw InvalidInput("export folder " + dir + " cannot be created" + (ec ? " (" + ec.message() + ")" : ""));
  for (int i = 1; i < 100000; ++i) {
    char num[16];
    std::snprintf(num, sizeof num, "_%04d", i);
    const fs::path p = fs::path(dir) / (base + num);
    if (!fs::exists(p.string() + ext, ec) && !fs::exists(p.string() + ".json", ec)) return p.string() + ext;
  }
  throw InvalidInput("export folder " + dir + " has no free name for " + base);
}

std::string encode_png_rgba(const std::vector<uint8_t>& rgba, int w, int h, int channels,
                            const std::string& sidecar_json) {
  std::vector<uint8_t> px;
  const uint8_t* src = rgba.data();
  if (channels == 3) {
    px.resize(size_t(w) * h * 3);
    for (size_t i = 0; i < size_t(w) * h; ++i)
      for (int c = 0; c < 3; ++c) px[3 * i + c] = rgba[4 * i + c];
    src = px.data();
  }
  std::vector<std::pair<std::string, std::string>> text;
  if (!sidecar_json.empty()) text.emplace_back("diffscope", sidecar_json);
  return encode_png(src, w, h, channels, text, "PNG " + std::to_string(w) + "x" + std::to_string(h));
}

void write_png_rgba(const std::string& path, const std::vector<uint8_t>& rgba, int w, int h, int channels,
                    const std::string& sidecar_json) {
  write_file_atomic(path, encode_png_rgba(rgba, w, h, channels, sidecar_json), "export");
}

void Exporter::clear_stale_messages() {
  auto stale = [](const std::string& m) { return m.rfind("error", 0) == 0 || m.rfind("writing frames", 0) == 0; };
  messages.erase(std::remove_if(messages.begin(), messages.end(), stale), messages.end());
}

std::string sidecar_text(const nlohmann::json& j) { return j.dump(2) + "\n"; }

std::string Exporter::png_text(const nlohmann::json& j) const { return embed_sidecar ? sidecar_text(j) : ""; }

ExportResult Exporter::finish(ExportResult r) {
  // A finished sequence's "writing ..." line, and old errors once an export succeeds, are no longer true.
  auto writing = [](const std::string& m) { return m.rfind("writing frames", 0) == 0; };
  messages.erase(std::remove_if(messages.begin(), messages.end(), writing), messages.end());
  if (r.ok) clear_stale_messages();
  if (r.ok) {
    std::error_code ec;
    const fs::path full = fs::absolute(r.path, ec);
    last_path = ec ? r.path : full.lexically_normal().string();
    messages.push_back("wrote " + last_path);
  } else {
    messages.push_back("error: " + r.error);
    last_error = r.error;
  }
  if (messages.size() > 50) messages.erase(messages.begin());
  return r;
}

std::vector<uint8_t> Exporter::render_scene(App& app, int slot, int w, int h) {
  const render::SavedFramebuffer prev;
  m_target.ensure(w, h);
  m_target.bind();
  if (app.session->compute_path()) app.session->compute_path()->before_draw();
  render::SceneInput in = app.scene_input(slot);
  in.inset = {};  // exports have no UI
  // Whatever the export's shape (16x16384 .. 16384x16), it shows at least what the window's pane shows.
  const render::Rect win = app.scatter_pane(), pane = render::Renderer::layout(w, h, in.image_model, {}).scatter;
  auto aspect = [](const render::Rect& r) { return r.h > 0 ? double(r.w) / r.h : 1.0; };
  const CameraFit cam = fit_view_to_aspect({in.cam.cx, in.cam.cy, in.cam.half_h}, aspect(win), aspect(pane));
  in.cam = {cam.cx, cam.cy, cam.half_h};
  app.renderer->draw_scene(in, w, h);
  std::vector<uint8_t> px = m_target.read_rgba_top_down();
  prev.restore();
  return px;
}

nlohmann::json Exporter::sidecar(App& app, const std::string& kind) {
  const SamplingSettings& s = app.session->settings();
  nlohmann::json j;
  j["kind"] = kind;
  j["generator"] = "diffscope gui";
  if (app.session->has_model()) {
    const std::string& mp = app.session->model().path;
    if (mp != m_sha_path) {
      m_sha_path = mp;
      m_sha = sha256_file(mp);
    }
    j["model"] = path_object("file", mp);  // any file name, losslessly (SEMANTICS §6)
    j["model"]["sha256"] = m_sha;
    auto ds = app.session->model().metadata.find("dataset");
    if (ds != app.session->model().metadata.end()) j["model"]["dataset"] = ds->second;
  }
  j["sampler"] = sampler_name(s.sampler);
  j["spacing"] = spacing_name(s.spacing);
  j["eta"] = s.eta;
  j["steps"] = s.steps;
  j["t_start"] = s.t_start;
  j["seed"] = s.seed;
  j["n"] = s.n_samples;
  j["from_data"] = s.from_data;
  j["precision"] = precision_name(s.precision);
  ComputePath* p = app.session->compute_path();
  j["backend"] = p ? p->name() : "none";
  j["device"] = p ? p->device() : "";
  j["steps_per_launch"] = s.steps_per_launch;
  if (app.session->has_model()) j["command_line"] = command_line(app);
  if (const SchedulerConfig* c = app.session->scheduler_config()) put_path(j, "scheduler_config", c->path);
  const int frame = app.shown_frame();
  j["frame"] = frame;
  j["timestep"] = app.session->timestep_of_frame(frame);
  j["computed_steps"] = app.session->computed_steps();
  j["trajectory_stride"] = app.session->layout().stride;
  j["timings"] = {{"last_run_ms", app.session->last_run_ms()},
                  {"frame_ms", app.stats.frame_ms},
                  {"gl_draw_ms", app.stats.draw_gpu_ms},
                  {"interop_map_ms", app.stats.map_ms},
                  {"interop_unmap_ms", app.stats.unmap_ms}};
  const ViewSettings& v = app.settings.view;
  j["view"] = {{"camera", {v.cam_x, v.cam_y, v.cam_half_h}}, {"trail_frames", v.trail_frames},
               {"show_data", v.show_data}, {"show_field", v.show_field}, {"field_x0", v.field_x0},
               {"camera_auto", v.cam_auto}, {"point_size", v.point_size}, {"point_alpha", v.point_alpha}};
  const std::time_t now = std::time(nullptr);
  char ts[32];
  std::strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  j["created_utc"] = ts;
  return j;
}

// An export's main file and its sidecar (png_sidecar_path) are distinct (a main path "x.json" would be
// overwritten by its own sidecar); checked before any rendering (SEMANTICS §9).
static void check_export_paths(const std::string& main_path) {
  check_distinct_outputs({{"export", main_path}, {"its sidecar", png_sidecar_path(main_path)}});
}

// The main file (head + size bytes at data) and its sidecar are written together: both or neither.
static void write_with_sidecar(const std::string& main_path, std::string head, const void* data, size_t size,
                               const nlohmann::json& j) {
  AtomicFileSet files;
  files.add(main_path, "export", std::move(head), data, size);
  files.add(png_sidecar_path(main_path), "export", sidecar_text(j));
  files.commit();
}

static void write_npy_with_sidecar(const std::string& main_path, const std::vector<int64_t>& shape,
                                   const std::vector<float>& x, const nlohmann::json& j) {
  check_output_finite("export " + main_path, x.data(), shape.size() == 3 ? shape[0] : 1, shape[shape.size() - 2],
                      shape.back());
  AtomicFileSet files;
  add_npy_float(files, main_path, shape, x.data(), "export");
  files.add(png_sidecar_path(main_path), "export", sidecar_text(j));
  files.commit();
}

void write_sidecar(const std::string& main_path, const nlohmann::json& j) {
  const fs::path p(main_path);
  try {
    write_file_atomic(png_sidecar_path(main_path), sidecar_text(j), "export");
  } catch (...) {
    std::error_code ec;
    fs::remove(p, ec);
    throw;
  }
}

std::string Exporter::command_line(App& app) const {
  const ComputePath* p = app.session->compute_path();
  const bool cpu = !p || p->name() == "cpu";
  std::string line = sample_command_line(app.session->settings(), app.session->model().path, cpu ? "cpu" : "cuda");
  // The applied scheduler config (its steps_offset and an analytic model's betas), before the trailing --out.
  const std::string out = " --out ";
  if (const SchedulerConfig* c = app.session->scheduler_config(); c && line.rfind(out) != std::string::npos)
    line.insert(line.rfind(out), " --scheduler-config " + shell_quote(c->path));
  return line;
}

void Exporter::remember_model(const std::string& path) {
  m_sha_path = path;
  m_sha = sha256_file(path);
}

ExportResult Exporter::guarded(const std::function<std::string()>& write) {
  ExportResult r;
  try {
    r.path = write();
    r.ok = true;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return finish(r);
}

std::vector<float> Exporter::download_slots(App& app, int first, int count) {
  if (!app.session->has_model() || app.session->layout().n_slots == 0) throw InvalidInput("nothing to export yet");
  const TrajectoryLayout& l = app.session->layout();
  if (app.session->compute_path()) app.session->compute_path()->before_draw();  // nothing may stay mapped
  std::vector<float> x(l.frame_floats() * size_t(count));
  app.trajectory->download(size_t(first) * l.frame_bytes(), l.frame_bytes() * size_t(count), x.data());
  return x;
}

ExportResult Exporter::snapshot(App& app, std::string path) {
  return guarded([&] {
    if (!app.session->has_model() || app.session->layout().n_slots == 0) throw InvalidInput("nothing to export yet");
    if (path.empty()) path = next_free_name(resolve_export_dir(app.settings.export_dir), "snapshot", ".png");
    check_export_paths(path);
    const int w = app.settings.export_width, h = app.settings.export_height;
    const auto px = render_scene(app, app.shown_slot(), w, h);
    nlohmann::json j = sidecar(app, "snapshot");
    put_path(j, "png", fs::path(path).filename().string());
    j["size"] = {w, h};
    write_with_sidecar(path, encode_png_rgba(px, w, h, 3, png_text(j)), nullptr, 0, j);
    return path;
  });
}

ExportResult Exporter::image_grid(App& app, std::string path) {
  return guarded([&] {
    if (!app.session->is_image_model() || app.session->image_side() <= 0)
      throw InvalidInput("the image grid needs an image model (dim 64, 8x8)");
    if (path.empty()) path = next_free_name(resolve_export_dir(app.settings.export_dir), "grid", ".png");
    check_export_paths(path);
    render::SceneInput in = app.scene_input(app.shown_slot());
    const int cols = std::max(1, in.grid_cols);
    const int rows = render::Renderer::grid_rows(in.B, cols, cols);
    const int scale = std::max(1, app.settings.image_grid_scale);
    const int cell = (in.image_side + 1) * scale;  // one image pixel of gap per cell
    const int w = cols * cell, h = rows * cell;
    const render::SavedFramebuffer prev;
    m_target.ensure(w, h);
    m_target.bind();
    app.renderer->draw_image_grid(in, {0, 0, w, h}, rows);
    const auto px = m_target.read_rgba_top_down();
    prev.restore();
    nlohmann::json j = sidecar(app, "image_grid");
    put_path(j, "png", fs::path(path).filename().string());
    j["grid"] = {{"cols", cols}, {"rows", rows}, {"scale", scale}};
    write_with_sidecar(path, encode_png_rgba(px, w, h, 3, png_text(j)), nullptr, 0, j);
    return path;
  });
}

ExportResult Exporter::state_npy(App& app, std::string path) {
  return guarded([&] {
    const int slot = app.shown_slot();
    const std::vector<float> x = download_slots(app, slot, 1);
    const TrajectoryLayout& l = app.session->layout();
    if (path.empty()) path = next_free_name(resolve_export_dir(app.settings.export_dir), "state", ".npy");
    check_export_paths(path);
    nlohmann::json j = sidecar(app, "state");
    put_path(j, "npy", fs::path(path).filename().string());
    j["frame"] = l.frame_of_slot(slot);
    j["shape"] = {l.B, l.dim};
    write_npy_with_sidecar(path, {l.B, l.dim}, x, j);
    return path;
  });
}

ExportResult Exporter::trajectory_npy(App& app, std::string path) {
  return guarded([&] {
    const int n_slots = app.session->newest_slot() + 1;
    const std::vector<float> x = download_slots(app, 0, n_slots);
    const TrajectoryLayout& l = app.session->layout();
    if (path.empty()) path = next_free_name(resolve_export_dir(app.settings.export_dir), "trajectory", ".npy");
    check_export_paths(path);
    nlohmann::json j = sidecar(app, "trajectory");
    put_path(j, "npy", fs::path(path).filename().string());
    std::vector<int> frames;
    for (int k = 0; k < n_slots; ++k) frames.push_back(l.frame_of_slot(k));
    j["frames"] = frames;
    j["shape"] = {n_slots, l.B, l.dim};
    write_npy_with_sidecar(path, {n_slots, l.B, l.dim}, x, j);
    return path;
  });
}

ExportResult Exporter::start_frame_sequence(App& app) {
  ExportResult r;
  try {
    if (!app.session->has_model() || app.session->layout().n_slots == 0) throw InvalidInput("nothing to export yet");
    m_seq_dir = next_free_name(resolve_export_dir(app.settings.export_dir), "frames", "");
    std::error_code ec;
    if (!fs::create_directories(m_seq_dir, ec)) throw InvalidInput("cannot create " + m_seq_dir);
    m_seq_next = 0;
    m_seq_total = app.session->newest_slot() + 1;
    nlohmann::json j = sidecar(app, "frame_sequence");
    j["frames"] = m_seq_total;
    write_file_atomic(m_seq_dir + "/sequence.json", sidecar_text(j), "export");
    m_seq_sidecar = j;
    r.ok = true;
    r.path = m_seq_dir;
    messages.push_back("writing frames into " + m_seq_dir);
    return r;
  } catch (const std::exception& e) {
    m_seq_next = -1;
    r.error = e.what();
  }
  return finish(r);
}

void Exporter::tick(App& app) {
  if (m_video) tick_video(app);
  if (m_seq_next < 0) return;
  try {
    char name[32];
    std::snprintf(name, sizeof name, "/frame_%05d.png", m_seq_next);
    const int w = app.settings.export_width, h = app.settings.export_height;
    const auto px = render_scene(app, m_seq_next, w, h);
    nlohmann::json j = m_seq_sidecar;  // each frame carries the sequence's sidecar with its own frame
    j["png"] = name + 1;
    j["frame"] = app.session->layout().frame_of_slot(m_seq_next);
    write_png_rgba(m_seq_dir + name, px, w, h, 3, png_text(j));
    if (++m_seq_next >= m_seq_total) {
      m_seq_next = -1;
      finish({true, m_seq_dir, ""});
    }
  } catch (const std::exception& e) {
    m_seq_next = -1;
    finish({false, "", e.what()});
  }
}

}  // namespace diffscope::ui
