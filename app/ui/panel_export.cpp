// panel_export.cpp — export buttons, size, folder, and the result messages.
#include <imgui.h>
#include <imgui_stdlib.h>

#include "picture/export_dir.h"
#include "picture/exporter.h"
#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

namespace {

// A file's path as its folder (dimmed, elided in the middle to one line) over its name (wrapped only if the
// name alone is wider than the panel), so a file name is never split between lines.
void path_lines(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos) {
    const std::string dir = path.substr(0, slash + 1);
    const std::string shown = elide_middle(dir, ImGui::GetContentRegionAvail().x);
    ImGui::TextDisabled("%s", shown.c_str());
    if (shown != dir && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", dir.c_str());
  }
  ImGui::TextWrapped("%s", slash == std::string::npos ? path.c_str() : path.c_str() + slash + 1);
}

// Video of frames 0..shown (Exporter::start_video): format, fps, lossless, then progress with a cancel button.
void panel_video_export(Panel& p) {
  const App& app = p.app;
  Exporter& ex = p.exporter;
  if (ex.video_active()) {
    ImGui::ProgressBar(ex.video_progress(), ImVec2(-80 * app.content_scale(), 0), "video");
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ex.cancel_video();
    return;
  }
  // One row while it fits, else as many rows as the panel's width needs (UI scale 2: three).
  const ImGuiStyle& st = ImGui::GetStyle();
  static const char* kFormats[] = {"MP4", "GIF", "WebP"};
  const float format_w = ImGui::CalcTextSize("WebP").x + 2 * st.FramePadding.x + ImGui::GetFrameHeight();
  ImGui::SetNextItemWidth(format_w);
  ImGui::Combo("##video_format", &ex.video.format, kFormats, 3);
  const float fps_w = ImGui::CalcTextSize("240").x + 2 * st.FramePadding.x + 8 * app.content_scale();
  same_line_if_fits(fps_w + st.ItemInnerSpacing.x + ImGui::CalcTextSize("fps").x);
  ImGui::SetNextItemWidth(fps_w);
  ImGui::DragInt("fps", &ex.video.fps, 0.5f, 1, 240, "%d", ImGuiSliderFlags_AlwaysClamp);
  auto checkbox_w = [&](const char* label) {
    return ImGui::GetFrameHeight() + st.ItemInnerSpacing.x + ImGui::CalcTextSize(label).x;
  };
  same_line_if_fits(checkbox_w("lossless"));
  ImGui::Checkbox("lossless", &ex.video.lossless);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("MP4: libx264rgb -qp 0 (exact RGB); WebP: lossless; GIF: 256 colours");
  if (ex.video.format == 0 && !ex.video.lossless) {
    same_line_if_fits(checkbox_w("yuv420p"));
    ImGui::Checkbox("yuv420p", &ex.video.yuv420);
    tip("MP4 that every player plays (browsers, QuickTime); the default yuv444p keeps the colour of small points "
        "(VLC, mpv, ffplay play it)");
  }
  if (ImGui::Button("Video (V): first frame to shown")) p.push(Action::export_file(ExportKind::Video));
  tip("frames 0 .. the shown one at the export size through ffmpeg; without ffmpeg, PNG frames instead");
}

}  // namespace

void panel_export(Panel& p) {
  const App& app = p.app;
  AppSettings& s = p.settings;
  // The folder on a line of its own, the field the panel's full width: a path needs the room.
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("folder");
  ImGui::SetNextItemWidth(-1);
  if (p.edit(ImGui::InputTextWithHint("##folder", resolve_export_dir("").c_str(), &s.export_dir)))
    p.exporter.clear_stale_messages();  // an error about the old folder no longer applies
  p.ui.name_item("export_folder");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("export folder (created when needed): %s", resolve_export_dir(s.export_dir).c_str());
  int wh[2] = {s.export_width, s.export_height};
  if (p.edit(ImGui::DragInt2("size", wh, 8.0f, 16, 8192, "%d", ImGuiSliderFlags_AlwaysClamp)))
    s.export_width = wh[0], s.export_height = wh[1];
  tip("width and height in pixels of snapshots and frame-sequence PNGs");
  ImGui::Checkbox("settings inside PNGs", &p.exporter.embed_sidecar);
  tip("every PNG carries its .json sidecar in a text chunk (iTXt 'diffscope')");
  if (ImGui::Button("Snapshot (S)")) p.push(Action::export_file(ExportKind::Snapshot));
  tip("the views at the shown frame as PNG (no UI), with a .json sidecar that reproduces it");
  auto button_w = [](const char* label) { return ImGui::CalcTextSize(label).x + 2 * ImGui::GetStyle().FramePadding.x; };
  same_line_if_fits(button_w("State .npy"));
  if (ImGui::Button("State .npy")) p.push(Action::export_file(ExportKind::State));
  tip("the samples at the shown frame: (B, dim) float32 .npy");
  same_line_if_fits(button_w("Trajectory .npy"));
  if (ImGui::Button("Trajectory .npy")) p.push(Action::export_file(ExportKind::Trajectory));
  tip("every stored frame: (frames, B, dim) float32 .npy");
  p.edit(ImGui::Checkbox("figure", &s.figure));
  tip("snapshots as figures: axes with tick values, a legend and a caption line (model, family, solver, steps, "
      "evaluations, seed) around the view, and the noise level over the steps");
  same_line_if_fits(button_w("SVG") + button_w("PDF"));
  if (ImGui::Button("SVG")) p.push(Action::export_file(ExportKind::Svg));
  tip("the shown frame as a vector figure (.svg) with axes, legend and caption; above 20,000 samples the plot is an "
      "embedded raster");
  ImGui::SameLine();
  if (ImGui::Button("PDF")) p.push(Action::export_file(ExportKind::Pdf));
  tip("the shown frame as a vector figure (.pdf), as SVG");
  if (app.session().has_model() && ImGui::Button("Copy command line")) {
    const std::string line = Exporter::command_line(app.export_view());
    ImGui::SetClipboardText(line.c_str());
    p.exporter.messages.push_back("copied: " + line);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the diffscope sample line that reproduces this run up to the shown frame (its .npy)");
  if (app.session().is_image_model()) {
    ImGui::SetNextItemWidth(100 * app.content_scale());
    p.edit(ImGui::SliderInt("scale", &s.image_grid_scale, 1, 32, "%d", ImGuiSliderFlags_AlwaysClamp));
    tip("pixels per image pixel in the grid PNG");
    ImGui::SameLine();
    if (ImGui::Button("Image grid PNG")) p.push(Action::export_file(ExportKind::ImageGrid));
    tip("the image grid at the shown frame as PNG");
  }
  if (p.exporter.sequence_active()) {
    ImGui::ProgressBar(p.exporter.sequence_progress(), ImVec2(-1, 0), "frame sequence");
  } else if (ImGui::Button("Frame sequence (PNG per frame)")) {
    p.push(Action::export_file(ExportKind::Frames));
  }
  if (!p.exporter.sequence_active()) tip("one PNG per stored frame into a new numbered folder (for a video)");
  panel_video_export(p);
  if (!p.exporter.last_path.empty()) {
    ImGui::TextDisabled("last export:");
    ImGui::SameLine();
    if (ImGui::SmallButton("copy path")) ImGui::SetClipboardText(p.exporter.last_path.c_str());
    tip("copy the last file's full path to the clipboard");
    path_lines(p.exporter.last_path);
  }
  // The last two messages only (the sidebar must not scroll); a written file by its name alone (the folder is
  // the export folder, shown above for the last one).
  const auto& msgs = p.exporter.messages;
  for (size_t i = msgs.size() > 2 ? msgs.size() - 2 : 0; i < msgs.size(); ++i) {
    if (msgs[i] == "wrote " + p.exporter.last_path) continue;  // shown above
    const bool err = msgs[i].rfind("error", 0) == 0;
    ImGui::PushStyleColor(ImGuiCol_Text, err ? ImVec4(1, 0.45f, 0.4f, 1) : ImVec4(0.6f, 0.9f, 0.6f, 1));
    if (msgs[i].rfind("wrote /", 0) == 0)
      ImGui::TextWrapped("wrote %s", msgs[i].c_str() + msgs[i].find_last_of('/') + 1);
    else
      ImGui::TextWrapped("%s", msgs[i].c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace diffscope::ui
