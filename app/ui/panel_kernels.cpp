// panel_kernels.cpp — kernel timings (fused MLP, denoiser per launch / per step: median, p10, p90, speedup,
// max error vs float64, history) and the per-frame figures (interop map/unmap, GL draw, frame time).
#include <imgui.h>

#include <algorithm>
#include <vector>

#include "ui/app.h"
#include "ui/panels.h"

namespace diffscope::ui {

float panel_kernels(App& app) {
  const float s = app.content_scale;
  ImGui::SetNextWindowCollapsed(true, ImGuiCond_FirstUseEver);
  if (app.open_kernels) ImGui::SetNextWindowCollapsed(false, ImGuiCond_Always), app.open_kernels = false;
  const bool open = ImGui::Begin("Kernels & timing", nullptr, ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize);
  const float top = ImGui::GetWindowPos().y;
  if (!open) {
    ImGui::End();
    return top;
  }
  const FrameStats& st = app.stats;
  if (ImGui::CollapsingHeader("Per frame", ImGuiTreeNodeFlags_DefaultOpen)) {
    ImGui::Text("frame %.2f ms (%.0f fps)   GL draw %.3f ms", st.frame_ms, st.fps, st.draw_gpu_ms);
    ImGui::Text("steps %d in %.2f ms   upload %.3f ms", st.steps_this_frame, st.steps_ms, st.upload_ms);
    ImGui::Text("interop map %.3f ms / unmap %.3f ms", st.map_ms, st.unmap_ms);
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
        ImGui::TableNextColumn(), ImGui::Text("%.1f-%.1f", r.p10_us, r.p90_us);
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
