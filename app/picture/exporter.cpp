// exporter.cpp — snapshots, image grids, .npy and frame sequences with their sidecars.
#include "picture/exporter.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <functional>
#include <unistd.h>

#include "base/errors.h"
#include "formats/json_path.h"
#include "formats/npy.h"
#include "formats/png_write.h"
#include "formats/sha256.h"
#include "picture/colour_bar_text.h"
#include "picture/command_line.h"
#include "picture/export_dir.h"
#include "picture/picture.h"
#include "platform/atomic_write.h"
#include "platform/model_paths.h"
#include "platform/output_files.h"
#include "run/finite_checks.h"
#include "session/field_view.h"
#include "session/sampling_session.h"
#include "session/view_fit.h"

namespace fs = std::filesystem;

namespace diffscope {

std::string next_free_name(const std::string& dir, const std::string& base, const std::string& ext) {
  if (const std::string file = file_in_the_way(dir); !file.empty())
    throw InvalidInput("export folder " + dir + ": " + file_in_the_way_text(file));
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
    last_error_unavailable = r.unavailable;
  }
  if (messages.size() > 50) messages.erase(messages.begin());
  return r;
}

std::vector<uint8_t> Exporter::render_scene(const ExportView& v, int slot, int w, int h) {
  const SamplingSession& ss = *v.session;
  const render::SavedFramebuffer prev;
  m_target.ensure(w, h);
  m_target.bind();
  if (ss.compute_path()) ss.compute_path()->before_draw();
  const TrajectoryLayout& l = ss.layout();
  render::SceneInput in =
      picture_scene(v.settings->view, v.ui_scale, v.trajectory, l.B, l.dim, slot, ss.is_image_model() ? ss.image_side() : 0);
  // Whatever the export's shape (16x16384 .. 16384x16), it shows at least what the window's pane shows.
  const CameraFit cam = picture_camera(v.settings->view, v.camera_aspect, w, h, in.image_model);
  in.cam = {cam.cx, cam.cy, cam.half_h};
  const bool field = in.show_field && ss.compute_path();
  if (field) {  // the field for this picture's camera and pane, at the frame drawn (SEMANTICS §6)
    // The window's quantity at the frame's level (session/field_view.h), as App::update_field draws it.
    const FieldLevel lv = field_level(ss.model(), ss.table(), l.frame_of_slot(slot));
    const FieldQuantity q = v.settings->view.field_quantity;
    ComputePath* path = ss.compute_path();
    m_last_field = field_lines(cam, picture_pane_aspect(w, h, in.image_model), v.settings->view.field_grid,
                               q == FieldQuantity::X0, [&](const float* p, int n, float* out) {
                                 eval_field(ss.model(), lv, q, p, n, out, [&](const float* a, int k, int t, bool x0, float* o) {
                                   path->field(a, k, t, x0, o);
                                 });
                               });
    v.renderer->set_field_lines(m_last_field);
  } else {
    m_last_field.clear();
  }
  in.contours = density_contours(v.settings->view, ss.model(), &ss.table(), l.frame_of_slot(slot));
  v.renderer->draw_scene(in, w, h);
  if (field && v.window_field) v.renderer->set_field_lines(*v.window_field);
  std::vector<uint8_t> px = m_target.read_rgba_top_down();
  label_scene_colour_bar(px, w, h, in, *v.renderer, v.ui_scale);
  prev.restore();
  return px;
}

nlohmann::json Exporter::sidecar(const ExportView& v, const std::string& kind, const std::string& path) {
  const SamplingSession& ss = *v.session;
  SidecarInput in;
  in.kind = kind;
  in.generator = "diffscope gui";
  in.settings = *v.settings;
  in.settings.sampling = ss.settings();  // the run's (clamped) values, not the widgets'
  if (ss.has_model()) {
    const std::string& mp = ss.model().path;
    if (mp != m_sha_path) {
      m_sha_path = mp;
      m_sha = sha256_file(mp);
    }
    in.model = &ss.model();
    in.model_sha256 = m_sha;
    in.command_line = command_line(v, kind, path);
  }
  ComputePath* p = ss.compute_path();
  in.backend = p ? p->name() : "none";
  in.device = p ? p->device() : "";
  in.frame = v.shown_frame;
  in.timestep = ss.timestep_of_frame(v.shown_frame);
  in.computed_steps = ss.computed_steps();
  in.trajectory_stride = ss.layout().stride;
  if (ss.has_model() && ss.table().steps() > 0 && ss.layout().n_steps == ss.table().steps()) {  // family keys, levels
    in.table = &ss.table();
    for (int k = 0; k < ss.layout().n_slots; ++k) in.kept_frames.push_back(ss.layout().frame_of_slot(k));
  }
  in.ui_scale = v.ui_scale;
  in.camera_aspect = v.camera_aspect;
  in.extra["timings"] = v.timings;
  in.extra["timings"]["last_run_ms"] = ss.last_run_ms();
  if (const SchedulerConfig* c = ss.scheduler_config()) put_path(in.extra, "scheduler_config", c->path);
  return build_sidecar(in);
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
    write_file_atomic(export_sidecar_path(main_path), sidecar_text(j), "export");
  } catch (...) {
    std::error_code ec;
    fs::remove(p, ec);
    throw;
  }
}

std::string Exporter::command_line(const ExportView& v, const std::string& kind, const std::string& path,
                                   const std::string& video_options) {
  const SamplingSession& ss = *v.session;
  const ComputePath* p = ss.compute_path();
  const bool cpu = !p || p->name() == "cpu";
  // The applied scheduler config (its steps_offset and an analytic model's betas), by its absolute path.
  std::string opts;
  if (const SchedulerConfig* c = ss.scheduler_config()) opts += " --scheduler-config " + shell_quote(absolute_path(c->path));
  const std::string file = path.empty() ? "" : absolute_path(path);
  const std::string beside = file.empty() ? "x.npy" : fs::path(file).replace_extension(".npy").string();
  const std::string frame = std::to_string(v.shown_frame);
  std::string out = "x.npy";
  if (kind == "trajectory") {
    opts += " --trajectory " + shell_quote(file) + " --trajectory-stride " + std::to_string(ss.layout().stride);
  } else {
    opts += " --frame " + frame;
    if (kind == "state") out = file;
    if (kind == "snapshot") out = beside, opts += " --png " + shell_quote(file);
    if (kind == "figure")  // a vector figure: --svg or --pdf by its name
      out = beside, opts += (figure_format_of("export", file) == FigureFormat::Pdf ? " --pdf " : " --svg ") + shell_quote(file);
    if (kind == "video")
      out = beside, opts += " --trajectory-stride " + std::to_string(ss.layout().stride) + " --video " +
                            shell_quote(file) + " --video-frames 0:" + frame + video_options;
  }
  if (kind == "snapshot" || kind == "video" || kind == "image_grid" || kind == "frame_sequence" || kind == "figure")
    opts += picture_command_options(*v.settings, !v.settings->view.cam_auto, v.camera_aspect, v.ui_scale);
  return sample_command_line(ss.settings(), ss.model().path, cpu ? "cpu" : "cuda", out, opts);
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
  } catch (const ResourceUnavailable& e) {
    r.error = e.what();
    r.unavailable = true;
  } catch (const std::exception& e) {
    r.error = e.what();
  }
  return finish(r);
}

std::vector<float> Exporter::download_slots(const ExportView& v, int first, int count) {
  if (!v.session->has_model() || v.session->layout().n_slots == 0) throw InvalidInput("nothing to export yet");
  const TrajectoryLayout& l = v.session->layout();
  if (v.session->compute_path()) v.session->compute_path()->before_draw();  // nothing may stay mapped
  std::vector<float> x(l.frame_floats() * size_t(count));
  v.trajectory->download(size_t(first) * l.frame_bytes(), l.frame_bytes() * size_t(count), x.data());
  return x;
}

void check_frames_exportable(const ExportView& v, int last_slot) {
  if (!v.session->has_model() || v.session->layout().n_slots == 0) throw InvalidInput("nothing to export yet");
  const int bad = v.session->overflow_frame(), last = v.session->layout().frame_of_slot(last_slot);
  if (bad >= 0 && last >= bad)
    throw InvalidInput((last > bad ? "frames " + std::to_string(bad) + "-" + std::to_string(last) + " hold"
                                   : "frame " + std::to_string(last) + " holds") +
                       " samples that are not finite; nothing was written (" + v.session->error() + ")");
}

ExportKind parse_export_kind(const std::string& name) {
  if (name == "snapshot") return ExportKind::Snapshot;
  if (name == "grid") return ExportKind::ImageGrid;
  if (name == "state") return ExportKind::State;
  if (name == "trajectory") return ExportKind::Trajectory;
  if (name == "frames") return ExportKind::Frames;
  if (name == "video") return ExportKind::Video;
  if (name == "svg") return ExportKind::Svg;
  if (name == "pdf") return ExportKind::Pdf;
  throw InvalidInput("export: unknown kind '" + name + "'; valid: snapshot, grid, state, trajectory, frames, video, "
                     "svg, pdf");
}

ExportResult Exporter::run(ExportKind kind, const ExportView& v, std::string path) {
  switch (kind) {
    case ExportKind::Snapshot: return snapshot(v, path);
    case ExportKind::ImageGrid: return image_grid(v, path);
    case ExportKind::State: return state_npy(v, path);
    case ExportKind::Trajectory: return trajectory_npy(v, path);
    case ExportKind::Frames: return start_frame_sequence(v, path);
    case ExportKind::Video: return start_video(v, path);
    case ExportKind::Svg: return vector_figure(v, FigureFormat::Svg, path);
    case ExportKind::Pdf: return vector_figure(v, FigureFormat::Pdf, path);
  }
  return {};
}

ExportResult Exporter::snapshot(const ExportView& v, std::string path) {
  return guarded([&] {
    check_frames_exportable(v, v.shown_slot);
    if (path.empty()) path = next_free_name(resolve_export_dir(v.settings->export_dir), "snapshot", ".png");
    check_export_paths(path);
    const int w = v.settings->export_width, h = v.settings->export_height;
    const auto px = render_picture(v, v.shown_slot, w, h);
    nlohmann::json j = sidecar(v, "snapshot", path);
    put_path(j, "png", fs::path(path).filename().string());
    write_with_sidecar(path, encode_png_rgba(px, w, h, 3, png_text(j)), nullptr, 0, j);
    return path;
  });
}

ExportResult Exporter::image_grid(const ExportView& v, std::string path) {
  return guarded([&] {
    if (!v.session->is_image_model() || v.session->image_side() <= 0)
      throw InvalidInput("the image grid needs an image model (dim 64, 8x8)");
    check_frames_exportable(v, v.shown_slot);
    if (path.empty()) path = next_free_name(resolve_export_dir(v.settings->export_dir), "grid", ".png");
    check_export_paths(path);
    const TrajectoryLayout& l = v.session->layout();
    const render::SceneInput in = picture_scene(v.settings->view, v.ui_scale, v.trajectory, l.B, l.dim, v.shown_slot,
                                                v.session->image_side());
    const int cols = std::max(1, in.grid_cols);
    const int rows = render::Renderer::grid_rows(in.B, cols, cols);
    const int scale = std::max(1, v.settings->image_grid_scale);
    const int cell = (in.image_side + 1) * scale;  // one image pixel of gap per cell
    const int w = cols * cell, h = rows * cell;
    const render::SavedFramebuffer prev;
    m_target.ensure(w, h);
    m_target.bind();
    v.renderer->draw_image_grid(in, {0, 0, w, h}, rows);
    const auto px = m_target.read_rgba_top_down();
    prev.restore();
    nlohmann::json j = sidecar(v, "image_grid", path);
    put_path(j, "png", fs::path(path).filename().string());
    j["grid"] = {{"cols", cols}, {"rows", rows}, {"scale", scale}};
    write_with_sidecar(path, encode_png_rgba(px, w, h, 3, png_text(j)), nullptr, 0, j);
    return path;
  });
}

ExportResult Exporter::state_npy(const ExportView& v, std::string path) {
  return guarded([&] {
    const int slot = v.shown_slot;
    const std::vector<float> x = download_slots(v, slot, 1);
    const TrajectoryLayout& l = v.session->layout();
    if (path.empty()) path = next_free_name(resolve_export_dir(v.settings->export_dir), "state", ".npy");
    check_export_paths(path);
    nlohmann::json j = sidecar(v, "state", path);
    put_path(j, "npy", fs::path(path).filename().string());
    j["frame"] = l.frame_of_slot(slot);
    j["shape"] = {l.B, l.dim};
    write_npy_with_sidecar(path, {l.B, l.dim}, x, j);
    return path;
  });
}

ExportResult Exporter::trajectory_npy(const ExportView& v, std::string path) {
  return guarded([&] {
    const int n_slots = v.session->newest_slot() + 1;
    const std::vector<float> x = download_slots(v, 0, n_slots);
    const TrajectoryLayout& l = v.session->layout();
    if (path.empty()) path = next_free_name(resolve_export_dir(v.settings->export_dir), "trajectory", ".npy");
    check_export_paths(path);
    nlohmann::json j = sidecar(v, "trajectory", path);
    put_path(j, "npy", fs::path(path).filename().string());
    std::vector<int> frames;
    for (int k = 0; k < n_slots; ++k) frames.push_back(l.frame_of_slot(k));
    j["frames"] = frames;
    j["shape"] = {n_slots, l.B, l.dim};
    write_npy_with_sidecar(path, {n_slots, l.B, l.dim}, x, j);
    return path;
  });
}

Exporter::~Exporter() { abandon_sequence(); }

void Exporter::abandon_sequence() {
  if (m_seq_dir.empty()) return;
  std::error_code ec;
  fs::remove_all(m_seq_dir, ec);
  m_seq_dir.clear();
  m_seq_next = -1;
}

ExportResult Exporter::start_frame_sequence(const ExportView& v, std::string dir) {
  ExportResult r;
  try {
    check_frames_exportable(v, v.session->newest_slot());
    if (dir.empty()) dir = next_free_name(resolve_export_dir(v.settings->export_dir), "frames", "");
    std::error_code ec;
    if (fs::exists(fs::symlink_status(dir, ec)))
      throw InvalidInput("export frames '" + dir + "' already exists; valid: a new folder");
    static unsigned counter = 0;
    m_seq_final = dir;
    m_seq_dir = dir + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    if (!fs::create_directories(m_seq_dir, ec))
      throw InvalidInput("export frames '" + dir + "': cannot create it (" + (ec ? ec.message() : "exists") + ")");
    m_seq_next = 0;
    m_seq_total = v.session->newest_slot() + 1;
    nlohmann::json j = sidecar(v, "frame_sequence");
    j["frames"] = m_seq_total;
    write_file_atomic(m_seq_dir + "/sequence.json", sidecar_text(j), "export");
    m_seq_sidecar = j;
    r.ok = true;
    r.path = m_seq_final;
    messages.push_back("writing frames into " + m_seq_final);
    return r;
  } catch (const std::exception& e) {
    abandon_sequence();
    r.error = e.what();
  }
  return finish(r);
}

void Exporter::tick(const ExportView& v) {
  if (m_video) tick_video(v);
  if (m_seq_next < 0) return;
  try {
    char name[32];
    std::snprintf(name, sizeof name, "/frame_%05d.png", m_seq_next);
    const int w = v.settings->export_width, h = v.settings->export_height;
    const auto px = render_scene(v, m_seq_next, w, h);
    nlohmann::json j = m_seq_sidecar;  // each frame carries the sequence's sidecar with its own frame
    j["png"] = name + 1;
    j["frame"] = v.session->layout().frame_of_slot(m_seq_next);
    write_png_rgba(m_seq_dir + name, px, w, h, 3, png_text(j));
    if (++m_seq_next >= m_seq_total) {
      std::error_code ec;
      fs::rename(m_seq_dir, m_seq_final, ec);
      if (ec) throw InvalidInput("export frames '" + m_seq_final + "': cannot write (" + ec.message() + ")");
      m_seq_dir.clear();
      m_seq_next = -1;
      finish({true, m_seq_final, ""});
    }
  } catch (const std::exception& e) {
    abandon_sequence();
    finish({false, "", e.what()});
  }
}

}  // namespace diffscope
