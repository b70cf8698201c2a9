// exporter_figure.cpp — the GUI's figures (picture/figure.h): the snapshot with the setting `figure`, and SVG / PDF.
#include <filesystem>

#include "formats/json_path.h"
#include "picture/export_dir.h"
#include "picture/exporter.h"
#include "picture/figure_scene.h"
#include "picture/picture.h"
#include "platform/atomic_write.h"
#include "platform/output_files.h"
#include "session/sampling_session.h"
#include "session/view_fit.h"

namespace diffscope {

Figure Exporter::build_figure(const ExportView& v, int slot, bool vector) {
  const SamplingSession& ss = *v.session;
  const TrajectoryLayout& l = ss.layout();
  const DiffusionModel& md = ss.model();
  Figure f;
  f.width = v.settings->export_width, f.height = v.settings->export_height;
  f.image_model = ss.is_image_model();
  AppSettings s = *v.settings;
  s.sampling = ss.settings();  // the run's (clamped) values, not the widgets'
  const bool has_table = ss.table().steps() > 0 && l.n_steps == ss.table().steps();
  const int trail = std::min(s.view.trail_frames, slot);
  describe_run(f, md, has_table ? &ss.table() : nullptr, s, l.B, l.frame_of_slot(slot), trail);
  const FigureRect plot = figure_plot_rect(f);
  const CameraFit cam = picture_camera(s.view, v.camera_aspect, plot.w, plot.h, f.image_model);
  f.cam = {cam.cx, cam.cy, cam.half_h};
  f.raster = render_scene(v, slot, plot.w, plot.h);
  f.point_px = s.view.point_size * v.ui_scale, f.point_alpha = s.view.point_alpha, f.show_axes = s.view.show_axes;
  f.vector_marks =
      vector && figure_uses_vector_marks(l.B, trail, f.image_model, s.view.view_mode != ViewMode::Points);
  if (f.vector_marks) {
    const std::vector<float> frames = download_slots(v, 0, slot + 1);
    // As App::update_projection: the data's principal axes, else those of the start state (frame 0).
    f.marks = figure_marks(md, fit_projection(md, frames.data(), l.B), frames.data(), l.B, slot, trail, f.show_data);
    f.marks.field = m_last_field;  // render_scene drew the field for the plot's camera
  }
  return f;
}

std::vector<uint8_t> Exporter::render_picture(const ExportView& v, int slot, int w, int h) {
  if (!v.settings->figure) return render_scene(v, slot, w, h);
  return render_figure_rgba(build_figure(v, slot, false));
}

ExportResult Exporter::vector_figure(const ExportView& v, FigureFormat format, std::string path) {
  return guarded([&] {
    const char* ext = format == FigureFormat::Svg ? ".svg" : ".pdf";
    const std::string kind = format == FigureFormat::Svg ? "svg" : "pdf";
    require_figures("export " + kind);
    check_frames_exportable(v, v.shown_slot);
    if (path.empty()) path = next_free_name(resolve_export_dir(v.settings->export_dir), "figure", ext);
    figure_format_of("export " + kind, path);
    check_distinct_outputs({{"export", path}, {"its sidecar", video_sidecar_path(path)}});
    const Figure f = build_figure(v, v.shown_slot, true);
    nlohmann::json j = sidecar(v, "figure", path);
    put_path(j, kind, std::filesystem::path(path).filename().string());
    const std::string embedded = format == FigureFormat::Svg ? sidecar_text(j) : j.value("command_line", "");
    AtomicFileSet files;
    files.add(path, "export", render_figure_vector(f, format, "export " + path, embedded));
    files.add(video_sidecar_path(path), "export", sidecar_text(j));  // name.svg.json: beside name.png's name.json
    files.commit();
    return path;
  });
}

}  // namespace diffscope
