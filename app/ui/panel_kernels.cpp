// panel_kernels.cpp — kernel timings (fused MLP, denoiser per launch / per step: median, p10, p90, speedup,
// max error vs float64, history) and the per-frame figures (interop map/unmap, GL draw, frame time).
#include <imgui.h>

#include <algorithm>
#include <vector>

#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {
namespace {

// One bar split by the frame's phases (CPU wall time; they add up to the frame), with a legend of the phases
// above 2% of it and every phase in the tooltip.
void draw_phase_split(const FrameReport& fr, float s) {
  static const ImU32 kColors[kFramePhases] = {
      IM_COL32(120, 160, 255, 255), IM_COL32(255, 170, 60, 255),  IM_COL32(150, 220, 120, 255),
      IM_COL32(200, 120, 220, 255), IM_COL32(90, 200, 200, 255),  IM_COL32(240, 90, 90, 255),
      IM_COL32(230, 220, 90, 255),  IM_COL32(170, 170, 170, 255), IM_COL32(120, 100, 80, 255),
      IM_COL32(80, 80, 90, 255)};
  const float w = ImGui::GetContentRegionAvail().x, h = 10 * s;
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const double total = std::max(1e-9, fr.frame_ms);
  float x = p0.x;
  for (int p = 0; p < kFramePhases; ++p) {
    const float dx = float(w * std::clamp(fr.phase_ms[p] / total, 0.0, 1.0));
    if (dx > 0) dl->AddRectFilled(ImVec2(x, p0.y), ImVec2(x + dx, p0.y + h), kColors[p]);
    x += dx;
  }
  ImGui::Dummy(ImVec2(w, h));
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    for (int p = 0; p < kFramePhases; ++p)
      ImGui::Text("%-12s %7.3f ms", frame_phase_name(FramePhase(p)), fr.phase_ms[p]);
    ImGui::EndTooltip();
  }
  bool first = true;
  for (int p = 0; p < kFramePhases; ++p) {
    if (fr.phase_ms[p] < 0.02 * total) continue;
    if (!first) ImGui::SameLine();
    first = false;
    ImGui::ColorButton(frame_phase_name(FramePhase(p)), ImGui::ColorConvertU32ToFloat4(kColors[p]),
                       ImGuiColorEditFlags_NoTooltip, ImVec2(8 * s, 8 * s));
    ImGui::SameLine(0, 3 * s);
    ImGui::Text("%s %.2f", frame_phase_name(FramePhase(p)), fr.phase_ms[p]);
  }
}

}  // namespace

float panel_kernels(App& app) {
  const float s = app.content_scale;
  ImGui::SetNextWindowCollapsed(true, ImGuiCond_FirstUseEver);
  if (app.open_kernels) ImGui::SetNextWindowCollapsed(false, ImGuiCond_Always), app.open_kernels = false;
  static bool toggle = false, collapsed = true;  // a click anywhere on the title bar toggles, like the headers
  if (toggle) ImGui::SetNextWindowCollapsed(!collapsed, ImGuiCond_Always), toggle = false;
  const bool open = ImGui::Begin("Kernels & timing", nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize);
  collapsed = ImGui::IsWindowCollapsed();
  const float top = ImGui::GetWindowPos().y;
  {
    const ImVec2 p = ImGui::GetWindowPos();
    const float bar = ImGui::GetFrameHeight();  // the arrow at the left toggles by itself
    if (ImGui::IsWindowHovered() && ImGui::IsMouseClicked(ImGuiMouseButton_Left) &&
        ImGui::IsMouseHoveringRect(ImVec2(p.x + bar, p.y), ImVec2(p.x + ImGui::GetWindowWidth(), p.y + bar), false))
      toggle = true;
  }
  if (!open) {
    ImGui::End();
    return top;
  }
  const FrameStats& st = app.stats;
  if (ImGui::CollapsingHeader("Per frame", ImGuiTreeNodeFlags_DefaultOpen)) {
    const FrameReport& fr = app.probe.last();
    ImGui::Text("frame %.2f ms (%.0f fps)", fr.frame_ms, st.fps);
    draw_phase_split(fr, s);
    const FrameCounts& c = fr.counts;
    const bool waited = c.readbacks + c.syncs + c.camera_fits > 0;
    (waited ? ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), "GPU waits: %ld read-backs, %ld syncs, %ld camera fits",
                                 c.readbacks, c.syncs, c.camera_fits)
            : ImGui::TextDisabled("GPU waits: none this frame"));
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("In steady state a frame never waits for the GPU; exports, Fit view and the field view\n"
                        "(one small read-back per shown timestep) are the exceptions.");
    ImGui::Text("GPU: %d steps in %.2f ms   scene draw %.3f ms", st.steps_this_frame, st.steps_ms, st.draw_gpu_ms);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("GPU times are read when the GPU has finished them (a frame or more late), never waited for.");
    ImGui::Text("interop map %.3f ms / unmap %.3f ms   upload %.3f ms", st.map_ms, st.unmap_ms, st.upload_ms);
    std::vector<float> h(st.frame_ms_history.begin(), st.frame_ms_history.end());
    if (!h.empty()) {
      std::vector<float> sorted = h;
      std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
      const float scale = std::max(40.0f, 3.0f * sorted[sorted.size() / 2]);  // outliers (benchmarks) clip
      ImGui::PlotLines("##frame", h.data(), int(h.size()), 0, "frame ms (last 240)", 0.0f, scale, ImVec2(ImGui::GetContentRegionAvail().x, 50 * s));
    }
    if (app.session->compute_path()) ImGui::TextDisabled("%s", app.session->compute_path()->device().c_str());
  }
  if (ImGui::CollapsingHeader("Kernels", ImGuiTreeNodeFlags_DefaultOpen)) {
    BenchConfig& c = app.bench.config;
    const ImGuiSliderFlags clamp = ImGuiSliderFlags_AlwaysClamp;
    ImGui::SetNextItemWidth(200 * s);
    ImGui::DragInt4("mlp B,d0,d1,d2", &c.mlp_B, 1.0f, 1, 4096, "%d", clamp);
    ImGui::SetNextItemWidth(200 * s);
    ImGui::DragInt("mlp d3", &c.d3, 1.0f, 1, 4096, "%d", clamp);
    ImGui::SetNextItemWidth(200 * s);
    ImGui::DragInt("denoiser B", &c.den_B, 16.0f, 1, 1 << 20, "%d", clamp);
    ImGui::SetNextItemWidth(200 * s);
    ImGui::DragInt("denoiser S", &c.den_S, 1.0f, 1, 100, "%d", clamp);
    if (ImGui::Button("Run CPU rows") && app.session->has_model()) app.bench.run(app.session->model(), c);
    if (app.bench.gpu_available()) {
      static char filter[64] = "B=16 ";
      ImGui::SameLine();
      if (ImGui::Button("Run GPU rows")) app.bench.run_gpu(filter);
      ImGui::SameLine();
      ImGui::SetNextItemWidth(120 * s);
      ImGui::InputText("filter", filter, sizeof filter);
    }
    if (app.bench.has_run() &&
        ImGui::BeginTable("bench", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                          ImGuiTableFlags_ScrollX, ImVec2(0, 0))) {
      ImGui::TableSetupColumn("workload");
      ImGui::TableSetupColumn("backend");
      ImGui::TableSetupColumn("median us");
      ImGui::TableSetupColumn("p10-p90");
      ImGui::TableSetupColumn("speedup");
      ImGui::TableSetupColumn("err vs f64");
      ImGui::TableHeadersRow();
      for (const BenchRow& r : app.bench.rows()) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn(), ImGui::TextUnformatted(r.what.c_str());
        ImGui::TableNextColumn(), ImGui::TextUnformatted(r.backend.c_str());
        ImGui::TableNextColumn(), ImGui::Text("%.1f", r.median_us);
        ImGui::TableNextColumn();
        const bool noisy = r.p10_us > 0 && r.p90_us / r.p10_us > 1.5;  // a busy machine (bench_command.cpp)
        if (noisy) {
          ImGui::TextColored(ImVec4(1.0f, 0.75f, 0.3f, 1.0f), "%.1f-%.1f", r.p10_us, r.p90_us);
          if (ImGui::IsItemHovered())
            ImGui::SetTooltip("noisy: p90/p10 = %.1f; the machine is busy, so the median may be off", r.p90_us / r.p10_us);
        } else {
          ImGui::Text("%.1f-%.1f", r.p10_us, r.p90_us);
        }
        ImGui::TableNextColumn();
        if (r.speedup > 0) ImGui::Text("%.1fx", r.speedup); else ImGui::TextDisabled("-");
        ImGui::TableNextColumn();
        if (r.max_err >= 0) ImGui::Text(r.rel_err ? "%.1e rel" : "%.1e abs", r.max_err); else ImGui::TextDisabled("-");
        if (!r.note.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", r.note.c_str());
      }
      ImGui::EndTable();
    }
    const auto& hist = app.bench.history();
    if (!hist.empty())
      ImGui::PlotLines("##hist", hist.data(), int(hist.size()), 0, "denoiser launch median (us)", 0.0f, FLT_MAX,
                       ImVec2(ImGui::GetContentRegionAvail().x, 50 * s));
    const std::string note = app.bench.gpu_note();
    if (!note.empty()) ImGui::TextDisabled("%s", note.c_str());
  }
  ImGui::End();
  return top;
}

}  // namespace diffscope::ui
