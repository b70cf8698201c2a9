// panel_kernels.cpp — kernel timings (fused MLP, denoiser per launch / per step: median, p10, p90, speedup,
// max error vs float64, history) and the per-frame figures (interop map/unmap, GL draw, frame time).
#include <imgui.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "base/words.h"
#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {
namespace {

// One bar split by the frame's phases (CPU wall time; they add up to the frame), with a legend naming every
// segment wide enough to see (in the order of the bar; the names are `print`'s phase_ms keys), and every phase
// in the tooltip.
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
  bool shown[kFramePhases] = {};
  for (int p = 0; p < kFramePhases; ++p) {
    const float dx = float(w * std::clamp(fr.phase_ms[p] / total, 0.0, 1.0));
    shown[p] = dx >= 1.0f;  // a segment one pixel wide or more is seen, so it is named
    if (dx > 0) dl->AddRectFilled(ImVec2(x, p0.y), ImVec2(x + dx, p0.y + h), kColors[p]);
    x += dx;
  }
  ImGui::Dummy(ImVec2(w, h));
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::TextUnformatted("CPU wall time of the frame's phases (they add up to the frame):");
    for (int p = 0; p < kFramePhases; ++p)
      ImGui::Text("%-12s %7.3f ms", frame_phase_name(FramePhase(p)), fr.phase_ms[p]);
    ImGui::EndTooltip();
  }
  ImGui::TextDisabled("CPU ms:");
  for (int p = 0; p < kFramePhases; ++p) {
    if (!shown[p]) continue;
    char text[64];
    std::snprintf(text, sizeof text, "%s %.2f", frame_phase_name(FramePhase(p)), fr.phase_ms[p]);
    same_line_if_fits(8 * s + 3 * s + ImGui::CalcTextSize(text).x);
    ImGui::ColorButton(frame_phase_name(FramePhase(p)), ImGui::ColorConvertU32ToFloat4(kColors[p]),
                       ImGuiColorEditFlags_NoTooltip, ImVec2(8 * s, 8 * s));
    ImGui::SameLine(0, 3 * s);
    ImGui::TextUnformatted(text);
  }
}

// Text items on one line while they fit, else on the next ones.
void flow_text(const std::vector<std::string>& parts) {
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) same_line_if_fits(ImGui::CalcTextSize(parts[i].c_str()).x);
    ImGui::TextUnformatted(parts[i].c_str());
  }
}

std::string ms(const char* name, double v, int digits = 3) {
  char b[96];
  std::snprintf(b, sizeof b, "%s %.*f ms", name, digits, v);
  return b;
}

// The frame's phases, GPU waits, GPU times, the copies of the compute path and the frame-time history.
void per_frame_section(const App& app, float s) {
  const FrameStats& st = app.stats();
  const FrameReport& fr = app.probe().last();
  ImGui::Text("frame %.2f ms (%.0f fps)", fr.frame_ms, st.fps);
  draw_phase_split(fr, s);
  const FrameCounts& c = fr.counts;
  const bool waited = c.readbacks + c.syncs + c.camera_fits > 0;
  if (waited) {
    const std::string text = "GPU waits: " + count_noun(c.readbacks, "read-back") + ", " + count_noun(c.syncs, "sync") +
                             ", " + count_noun(c.camera_fits, "camera fit");
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.75f, 0.3f, 1.0f));
    ImGui::TextWrapped("%s", text.c_str());
    ImGui::PopStyleColor();
  } else {
    ImGui::TextDisabled("GPU waits: none this frame");
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("In steady state a frame never waits for the GPU; exports, Fit view and the field view\n"
                      "(one small read-back per shown timestep) are the exceptions.");
  // GPU time (timer queries and CUDA events), not the CPU phases above: gl_draw is the GPU's side of scene_draw.
  // The steps' row only where they run on the GPU (the CPU path's run time is the Sampling section's).
  const ComputePath* path = app.session().compute_path();
  ImGui::TextDisabled("GPU ms:");
  same_line_if_fits(0);
  std::vector<std::string> gpu_rows;
  if (path && path->is_gpu())
    gpu_rows.push_back(ms("steps", st.steps_ms, 2) + " (" + count_noun(st.steps_this_frame, "step") + ")");
  gpu_rows.push_back(ms("gl_draw", st.draw_gpu_ms));
  flow_text(gpu_rows);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("GPU times are read when the GPU has finished them (a frame or more late), never waited for.");
  // The copies of the compute path: CUDA-GL interop maps and unmaps the trajectory buffer; the CPU path and
  // host staging upload into it. A path shows only the rows it has.
  const bool interop = path && path->name().find("interop") != std::string::npos;
  if (interop || st.map_ms > 0 || st.unmap_ms > 0) {
    ImGui::TextDisabled("interop:");
    same_line_if_fits(0);
    flow_text({ms("map", st.map_ms), ms("unmap", st.unmap_ms)});
  }
  if (!interop || st.upload_ms > 0) {
    ImGui::TextDisabled("host -> GL:");
    same_line_if_fits(0);
    flow_text({ms("upload", st.upload_ms)});
  }
  std::vector<float> h(st.frame_ms_history.begin(), st.frame_ms_history.end());
  if (!h.empty()) {
    std::vector<float> sorted = h;
    std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
    const float scale = std::max(40.0f, 3.0f * sorted[sorted.size() / 2]);  // outliers (benchmarks) clip
    ImGui::PlotLines("##frame", h.data(), int(h.size()), 0, "frame ms (last 240)", 0.0f, scale,
                     ImVec2(ImGui::GetContentRegionAvail().x, 50 * s));
  }
  if (app.session().compute_path()) ImGui::TextDisabled("%s", app.session().compute_path()->device().c_str());
}

// The rows of the last bench run: median, p10-p90 (flagged when noisy), speedup and error vs float64.
void bench_table(const KernelBench& bench) {
  if (!bench.has_run() ||
      !ImGui::BeginTable("bench", 6, ImGuiTableFlags_Borders | ImGuiTableFlags_RowBg | ImGuiTableFlags_SizingFixedFit |
                                         ImGuiTableFlags_ScrollX, ImVec2(0, 0)))
    return;
  ImGui::TableSetupColumn("workload");
  ImGui::TableSetupColumn("backend");
  ImGui::TableSetupColumn("median us");
  ImGui::TableSetupColumn("p10-p90");
  ImGui::TableSetupColumn("speedup");
  ImGui::TableSetupColumn("err vs f64");
  ImGui::TableHeadersRow();
  for (const BenchRow& r : bench.rows()) {
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

// The bench's workload sizes, Run CPU rows / Run GPU rows (actions), the table, history and the GPU note.
void bench_section(Panel& p, float s) {
  BenchConfig& c = p.bench.config;
  const ImGuiSliderFlags clamp = ImGuiSliderFlags_AlwaysClamp;
  // 200 units wide, less where the window leaves no room for the longest label beside them.
  const float field_w = std::min(200 * s, ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemInnerSpacing.x -
                                              ImGui::CalcTextSize("mlp B,d0,d1,d2").x);
  ImGui::SetNextItemWidth(field_w);
  ImGui::DragInt4("mlp B,d0,d1,d2", &c.mlp_B, 1.0f, 1, 4096, "%d", clamp);
  ImGui::SetNextItemWidth(field_w);
  ImGui::DragInt("mlp d3", &c.d3, 1.0f, 1, 4096, "%d", clamp);
  ImGui::SetNextItemWidth(field_w);
  ImGui::DragInt("denoiser B", &c.den_B, 16.0f, 1, 1 << 20, "%d", clamp);
  ImGui::SetNextItemWidth(field_w);
  ImGui::DragInt("denoiser S", &c.den_S, 1.0f, 1, 100, "%d", clamp);
  if (ImGui::Button("Run CPU rows")) p.push(Action::run_bench("cpu"));
  if (p.bench.gpu_available()) {
    static char filter[64] = "B=16 ";
    ImGui::SameLine();
    if (ImGui::Button("Run GPU rows")) p.push(Action::run_bench("gpu", filter));
    same_line_if_fits(120 * s + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("filter").x);
    ImGui::SetNextItemWidth(120 * s);
    ImGui::InputText("filter", filter, sizeof filter);
  }
  bench_table(p.bench);
  const auto& hist = p.bench.history();
  if (!hist.empty())
    ImGui::PlotLines("##hist", hist.data(), int(hist.size()), 0, "denoiser launch median (us)", 0.0f, FLT_MAX,
                     ImVec2(ImGui::GetContentRegionAvail().x, 50 * s));
  const std::string note = p.bench.gpu_note();
  if (!note.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("%s", note.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace

float panel_kernels(Panel& p) {
  const App& app = p.app;
  const float s = app.content_scale();
  ImGui::SetNextWindowCollapsed(true, ImGuiCond_FirstUseEver);
  if (p.ui.open_kernels) ImGui::SetNextWindowCollapsed(false, ImGuiCond_Always), p.ui.open_kernels = false;
  static bool toggle = false, collapsed = true;  // a click anywhere on the title bar toggles, like the headers
  if (toggle) ImGui::SetNextWindowCollapsed(!collapsed, ImGuiCond_Always), toggle = false;
  const bool open = ImGui::Begin("Kernels & timing", nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize);
  collapsed = ImGui::IsWindowCollapsed();
  const float top = ImGui::GetWindowPos().y;
  {
    const ImVec2 pos = ImGui::GetWindowPos();
    const float bar = ImGui::GetFrameHeight();  // the arrow at the left toggles by itself
    if (ImGui::IsWindowHovered() && ImGui::IsMouseClicked(ImGuiMouseButton_Left) &&
        ImGui::IsMouseHoveringRect(ImVec2(pos.x + bar, pos.y), ImVec2(pos.x + ImGui::GetWindowWidth(), pos.y + bar),
                                   false))
      toggle = true;
  }
  if (open) {
    if (ImGui::CollapsingHeader("Per frame", ImGuiTreeNodeFlags_DefaultOpen)) per_frame_section(app, s);
    p.ui.layout_audit.check_window("Kernels & timing", "Per frame");
    if (ImGui::CollapsingHeader("Kernels", ImGuiTreeNodeFlags_DefaultOpen)) bench_section(p, s);
    p.ui.layout_audit.check_window("Kernels & timing");
  }
  ImGui::End();
  return top;
}

}  // namespace diffscope::ui
