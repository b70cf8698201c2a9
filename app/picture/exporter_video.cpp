// exporter_video.cpp — the GUI's video export: frames 0..shown rendered offscreen one per UI frame and piped
// to ffmpeg (formats/video_writer.h), with the sidecar of SEMANTICS §6.
#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "base/errors.h"
#include "formats/json_path.h"
#include "formats/video_writer.h"
#include "picture/export_dir.h"
#include "picture/exporter.h"
#include "platform/output_files.h"
#include "session/sampling_session.h"

namespace fs = std::filesystem;

namespace diffscope {

namespace {
const char* const kVideoExt[] = {".mp4", ".gif", ".webp"};
}

ExportResult Exporter::start_video(const ExportView& v, std::string path) {
  ExportResult r;
  try {
    if (m_video || m_seq_next >= 0) throw InvalidInput("an export is still running");
    check_frames_exportable(v, v.shown_slot);
    const int fmt = std::clamp(video.format, 0, 2);
    if (path.empty()) path = next_free_name(resolve_export_dir(v.settings->export_dir), "video", kVideoExt[fmt]);
    const VideoFormat f = video_format_of("export video", path);
    check_distinct_outputs({{"export video", path}, {"its sidecar", video_sidecar_path(path)}});
    int w = v.settings->export_width, h = v.settings->export_height;
    video_frame_size(f, &w, &h);
    m_vid_total = v.shown_slot + 1;
    try {
      m_video = std::make_shared<VideoWriter>(VideoOptions{path, w, h, double(video.fps), video.lossless, "export video", video.yuv420});
    } catch (const ResourceUnavailable& e) {
      // No ffmpeg: the same frames as a PNG sequence, and the reason stays in the messages.
      finish({false, "", e.what(), true});
      r = start_frame_sequence(v);
      m_seq_total = std::min(m_seq_total, m_vid_total);
      if (r.ok) messages.push_back("no ffmpeg: writing the " + std::to_string(m_seq_total) + " frames as PNGs instead");
      m_vid_total = 0;
      return r;
    }
    m_vid_next = 0;
    m_vid_w = w, m_vid_h = h;
    m_vid_path = path;
    m_vid_sidecar = sidecar(v, "video");
    char fps[40];
    std::snprintf(fps, sizeof fps, "%.17g", double(video.fps));
    const std::string video_options = std::string(" --fps ") + fps + (video.lossless ? " --video-lossless" : "") +
                                      (f == VideoFormat::Mp4 && !video.lossless && video.yuv420 ? " --video-yuv420" : "");
    put_path(m_vid_sidecar, "command_line", command_line(v, "video", path, video_options));
    put_path(m_vid_sidecar, "video", fs::path(path).filename().string());
    m_vid_sidecar["export_width"] = w;  // made even for MP4
    m_vid_sidecar["export_height"] = h;
    m_vid_sidecar["fps"] = video.fps;
    m_vid_sidecar["lossless"] = video.lossless;
    if (f == VideoFormat::Mp4 && !video.lossless) m_vid_sidecar["pix_fmt"] = video.yuv420 ? "yuv420p" : "yuv444p";
    std::vector<int> frames;
    for (int k = 0; k < m_vid_total; ++k) frames.push_back(v.session->layout().frame_of_slot(k));
    m_vid_sidecar["frames"] = frames;
    messages.push_back("encoding " + std::to_string(m_vid_total) + " frames into " + path);
    r.ok = true;
    r.path = path;
    return r;
  } catch (const std::exception& e) {
    m_video.reset();
    r.error = e.what();
    r.unavailable = dynamic_cast<const ResourceUnavailable*>(&e) != nullptr;
  }
  return finish(r);
}

void Exporter::tick_video(const ExportView& v) {
  try {
    m_video->add_frame(render_scene(v, m_vid_next, m_vid_w, m_vid_h).data());
    if (++m_vid_next < m_vid_total) return;
    m_video->finish();
    m_video.reset();
    write_sidecar(m_vid_path, m_vid_sidecar);
    finish({true, m_vid_path, ""});
  } catch (const ResourceUnavailable& e) {
    m_video.reset();  // stops ffmpeg and removes its file
    finish({false, "", e.what(), true});
  } catch (const std::exception& e) {
    m_video.reset();
    finish({false, "", e.what()});
  }
}

void Exporter::cancel_video() {
  if (!m_video) return;
  m_video->cancel();
  m_video.reset();
  messages.push_back("video export cancelled; nothing written");
}

}  // namespace diffscope
