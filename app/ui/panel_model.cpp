// panel_model.cpp — bundled model picker, path field (Enter loads), drag-and-drop hint, load errors.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <optional>
#include <string>

#include "platform/paths.h"
#include "run/run_plan.h"
#include "session/field_view.h"
#include "ui/app.h"
#include "ui/layout_audit.h"
#include "ui/panels.h"

namespace diffscope::ui {

namespace {

// Bundled models that are not trained (random weights for `diffscope bench`): listed last, under a separator,
// and labelled so that nobody takes their samples for a trained model's.
bool is_untrained(const std::string& name) { return name == "reference_random"; }
std::string picker_label(const std::string& name) {
  return is_untrained(name) ? name + " (untrained, for benchmarks)" : name;
}

// The optional diffusers scheduler_config.json (SEMANTICS §3): a path field, Apply (or Enter) and Clear.
void panel_scheduler_config(Panel& p) {
  const App& app = p.app;
  const float apply_w = ImGui::CalcTextSize("Apply").x + 2 * ImGui::GetStyle().FramePadding.x;
  ImGui::SetNextItemWidth(-(apply_w + ImGui::GetStyle().ItemSpacing.x));
  const char* hint = "scheduler_config.json";
  const bool enter = ImGui::InputTextWithHint("##scheduler_config", hint, &p.ui.scheduler_config_field,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  p.ui.name_item("scheduler_config");
  if (p.ui.scheduler_config_field.empty())
    p.ui.layout_audit.check_text("scheduler config field", hint, last_frame_inner_width(false, "##scheduler_config"));
  tip("optional: a diffusers scheduler_config.json: its timestep_spacing / use_karras_sigmas and steps_offset apply to the runs; "
      "its betas only to an analytic model or a file without a schedule (SEMANTICS §3); Enter applies it");
  ImGui::SameLine();
  if (ImGui::Button("Apply") || enter) p.push(Action::load_scheduler_config(p.ui.scheduler_config_field));
  tip("apply the scheduler config named in the field (an empty field clears it)");
  if (const SchedulerConfig* c = app.session().scheduler_config()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("scheduler config: %s (spacing %s, steps_offset %d)", c->path.c_str(), spacing_name(c->spacing),
                       c->steps_offset);
    ImGui::PopStyleColor();
    same_line_if_fits(ImGui::CalcTextSize("Clear").x + 2 * ImGui::GetStyle().FramePadding.x);
    if (ImGui::SmallButton("Clear")) p.ui.scheduler_config_field.clear(), p.push(Action::load_scheduler_config(""));
    tip("back to the model file's own schedule, steps_offset 0 and the spacing picked before the config was applied "
        "(a spacing picked since stays)");
    // The config names a scheduler; the sampler picker chooses what runs (SEMANTICS §3): say so when they differ.
    if (const std::string note = sampler_mismatch_note(*c, p.settings.sampling.sampler); !note.empty())
      ImGui::TextWrapped("%s", note.c_str());
  }
}

// The model's convention line (model/family.h convention_line: family, state, time input, terminal level), the
// prediction_type override for a file that names no family, and the note when the file's own family wins.
void model_family_rows(Panel& p, const DiffusionModel& m) {
  SamplingSettings& s = p.settings.sampling;
  // The run's family parameters as plan_run resolves them (the override only for a file that names none).
  const FamilyParams shown = run_family(m, m.family_in_file ? std::nullopt : s.prediction_type, "prediction_type");
  const Family family = shown.family;
  ImGui::TextWrapped("convention: %s", convention_line(shown).c_str());
  p.ui.name_item("convention");
  tip((std::string("the model family (SEMANTICS §2): ") +
       (m.family_in_file ? "named by the file" : s.prediction_type ? "the prediction_type override" : "the file names none"))
          .c_str());
  const std::string preview = s.prediction_type ? family_name(*s.prediction_type) : "from file";
  if (ImGui::BeginCombo("family", preview.c_str())) {
    const bool index_before = t_start_is_index(family);
    std::optional<Family> picked = s.prediction_type;
    if (p.edit(ImGui::Selectable("from file", !s.prediction_type))) picked.reset();
    for (Family f : {Family::Epsilon, Family::Sample, Family::VPrediction, Family::Flow, Family::Edm})
      if (p.edit(ImGui::Selectable(family_name(f), s.prediction_type == f))) picked = f;
    if (picked != s.prediction_type) {
      s.prediction_type = picked;
      // t_start means another thing in the new family (a timestep or a list index): its default there.
      if (t_start_is_index(gui_family(m, picked)) != index_before)
        s.t_start = family_default_t_start(m, picked);
    }
    ImGui::EndCombo();
  }
  tip("prediction_type: the family of a file that names none (from file: epsilon); a file that names its own keeps "
      "it");
  if (const std::string note = ignored_override_note(m, s.prediction_type); !note.empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.8f, 0.4f, 1));
    ImGui::TextWrapped("%s", note.c_str());
    ImGui::PopStyleColor();
  }
}

}  // namespace

void panel_model(Panel& p) {
  const App& app = p.app;
  const auto models = bundled_models();
  std::string current = app.session().has_model() ? app.session().model().path : "";
  std::string label = "(none)";
  for (const auto& [name, path] : models)
    if (path == current) label = picker_label(name);
  if (label == "(none)" && !current.empty()) label = current.substr(current.find_last_of('/') + 1);
  // A long file name: its middle elided to the combo's width (the full path is the field below).
  const float inner = ImGui::CalcItemWidth() - ImGui::GetFrameHeight() - 2 * ImGui::GetStyle().FramePadding.x;
  label = elide_middle(label, inner);
  const bool open = ImGui::BeginCombo("bundled", label.c_str());
  if (!open) p.ui.layout_audit.check_text("bundled combo", label, last_frame_inner_width(true, "bundled"));
  if (open) {
    for (int untrained = 0; untrained < 2; ++untrained) {
      bool first = true;
      for (const auto& [name, path] : models) {
        if (is_untrained(name) != (untrained == 1)) continue;
        if (untrained && first) ImGui::Separator();
        first = false;
        ImGui::PushID(name.c_str());
        if (untrained) ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
        if (ImGui::Selectable(picker_label(name).c_str(), path == current)) p.push(Action::load_model(path));
        if (untrained) ImGui::PopStyleColor();
        ImGui::PopID();
      }
    }
    if (models.empty()) ImGui::TextDisabled("no assets/models/*.safetensors found");
    ImGui::EndCombo();
  }
  tip("the trained models in assets/models (their card: assets/models/README.md)");
  ImGui::SetNextItemWidth(-(ImGui::CalcTextSize("Load").x + 2 * ImGui::GetStyle().FramePadding.x +
                            ImGui::GetStyle().ItemSpacing.x));
  const bool enter = ImGui::InputText("##path", &p.ui.path_field, ImGuiInputTextFlags_EnterReturnsTrue);
  p.ui.name_item("model_path");
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip("%s", p.ui.path_field.empty() ? "a .safetensors path or a bundled name; Enter loads it"
                                                   : p.ui.path_field.c_str());
  ImGui::SameLine();
  if (ImGui::Button("Load") || enter) p.push(Action::load_model(p.ui.path_field));
  tip("load the model named in the field (on an error the current model keeps running)");
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("or drop a .safetensors file on the window");
  ImGui::PopStyleColor();
  panel_scheduler_config(p);
  if (!app.model_error().empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.45f, 0.4f, 1.0f));
    ImGui::TextWrapped("%s", app.model_error().c_str());
    ImGui::PopStyleColor();
  }
  if (!app.settings_note().empty()) {
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.8f, 0.4f, 1.0f));
    ImGui::TextWrapped("%s", app.settings_note().c_str());
    ImGui::PopStyleColor();
  }
  if (app.session().has_model()) {
    const DiffusionModel& m = app.session().model();
    auto ds = m.metadata.find("dataset");
    ImGui::TextWrapped("dim %d  hidden %d  T %d  data %d", m.net.dim, m.net.hidden, m.schedule.T, m.n_data);
    if (ds != m.metadata.end()) {  // the dataset's description can be long: its own wrapped line
      ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
      ImGui::TextWrapped("data: %s", ds->second.c_str());
      ImGui::PopStyleColor();
    }
    model_family_rows(p, m);
    ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1, 0.8f, 0.4f, 1));
    for (const auto& w : m.warnings) ImGui::TextWrapped("%s", w.c_str());  // a config's warnings are long
    ImGui::PopStyleColor();
  }
}

}  // namespace diffscope::ui
