// app_train.cpp — the Train section (SEMANTICS §11 "The training panel"): the data (a bundled model's data set, a
// .npy file, or points drawn with the brush in the 2D view), the run's settings, Start / Stop / Resume, progress
// with ETA, the loss curve (raw and smoothed), the checkpoint scrubber, Save; the App's side of it (the actions, the
// newest EMA weights loaded into the main view, the brush input) and the overlay on the 2D view (the brush's points,
// the ideal denoiser's samples).
#include <imgui.h>
#include <imgui_stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "base/errors.h"
#include "platform/atomic_write.h"
#include "platform/model_paths.h"
#include "session/training/level_loss.h"
#include "ui/app.h"
#include "ui/widgets/mini_plot.h"
#include "ui/panels.h"

namespace diffscope::ui {

namespace {

// "X,Y,R" -> the three numbers (the brush actions' value).
void parse_xyr(const std::string& v, double* x, double* y, double* r) {
  if (std::sscanf(v.c_str(), "%lf,%lf,%lf", x, y, r) != 3 || !std::isfinite(*x) || !std::isfinite(*y) ||
      !(*r > 0) || !std::isfinite(*r))
    throw InvalidInput("brush: '" + v + "' is not X,Y,R with a radius > 0");
}

std::string seconds_text(double s) {
  char b[32];
  if (s < 60) std::snprintf(b, sizeof b, "%.1f s", s);
  else std::snprintf(b, sizeof b, "%dm%02ds", int(s) / 60, int(s) % 60);
  return b;
}

}  // namespace

void App::train_action(const Action& a) {
  const std::string& w = a.text;
  TrainingSession& t = *m_training;
  try {
    if (w == "start") {
      t.start(m_ui.train);
      m_train_checkpoint = -1;
      m_train_generation_shown = 0;
      m_outcome.note = "training started";
    } else if (w == "stop") {
      t.stop();
    } else if (w == "resume") {
      if (!t.resume()) throw InvalidInput("train resume: no stopped run to continue (start one; a finished run is done)");
      m_train_checkpoint = -1;
    } else if (w == "save") {
      const std::string path = a.value.empty() ? m_ui.train_save_path : a.value;
      if (!t.save(path)) throw InvalidInput("train save: no trained weights yet (start a run)");
      m_outcome.note = "saved " + path + " and " + train::default_checkpoint_path(path);
    } else if (w == "checkpoint") {
      m_train_checkpoint = a.number;
      show_train_checkpoint(a.number);
    } else if (w.rfind("set:", 0) == 0) {
      set_train_setting(m_ui.train, w.substr(4), a.value);
    } else if (w == "brush_add" || w == "brush_erase") {
      double x = 0, y = 0, r = 0;
      parse_xyr(a.value, &x, &y, &r);
      if (w == "brush_add") t.brush().add(x, y, r, a.number);
      else t.brush().erase(x, y, r);
    } else if (w == "brush_undo") {
      if (!t.brush().undo()) m_outcome = {false, "brush: nothing to undo"};
    } else if (w == "brush_clear") {
      t.brush().clear();
    } else {
      throw InvalidInput("train: unknown action '" + w + "'");
    }
  } catch (const std::exception& e) {
    m_outcome = {false, e.what()};
  }
  m_ui.train_message = m_outcome.note;
  m_ui.train_message_error = !m_outcome.ok;
}

// The kept checkpoint i (-1: the newest) as a model file in a temporary folder, loaded into the main view: the
// sampler runs the same noise (the seed's) through each checkpoint's weights.
void App::show_train_checkpoint(int i) {
  const std::string bytes = m_training->model_bytes(i);
  if (bytes.empty()) return;
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("diffscope-train-" + std::to_string(getpid()));
  fs::create_directories(dir);
  if (m_train_dir.empty()) m_train_dir = dir.string(), m_model_before_training = m_settings.sampling.model_path;
  const std::string path = (dir / ("model-" + std::to_string(++m_train_file_count) + ".safetensors")).string();
  write_file_atomic(path, bytes, "train preview");
  load_model(path, false);
  m_train_files.push_back(path);
  while (m_train_files.size() > 2) {  // the loaded one and the one before it
    std::remove(m_train_files.front().c_str());
    m_train_files.pop_front();
  }
}

void App::poll_training() {
  const int64_t g = m_training->checkpoint_generation();
  if (g == m_train_generation_shown || m_train_checkpoint >= 0) return;
  m_train_generation_shown = g;
  show_train_checkpoint(-1);
}

bool App::handle_brush_input(double wx, double wy) {
  BrushPoints& b = m_training->brush();
  const double r = m_ui.brush_radius;
  if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
    b.begin_stroke();
    m_brush_x = m_brush_y = 1e300;
  }
  const bool down = ImGui::IsMouseDown(ImGuiMouseButton_Left);
  if (down && m_ui.brush_mode == 2) b.erase(wx, wy, r);
  if (down && m_ui.brush_mode == 1 && std::hypot(wx - m_brush_x, wy - m_brush_y) >= 0.5 * r) {
    b.add(wx, wy, r, m_ui.brush_density);  // a dab every half radius along the stroke
    m_brush_x = wx, m_brush_y = wy;
  }
  if (ImGui::IsMouseReleased(ImGuiMouseButton_Left)) b.end_stroke();
  return down;
}

namespace {

bool combo(Panel& p, const char* label, std::string& value, const std::vector<std::string>& items) {
  bool changed = false;
  if (ImGui::BeginCombo(label, value.c_str())) {
    for (const std::string& it : items)
      if (ImGui::Selectable(it.c_str(), it == value)) value = it, changed = true;
    ImGui::EndCombo();
  }
  return p.edit(changed);
}

void train_data_ui(Panel& p) {
  TrainSettings& t = p.ui.train;
  const TrainingSession& ts = p.app.training();
  combo(p, "data", t.source, {"brush", "bundled", "npy"});
  tip("brush: points drawn in the 2D view; bundled: a bundled model's data_samples; npy: a (N, dim) .npy file");
  if (t.source == "bundled") {
    std::vector<std::string> names;
    for (const auto& [name, path] : bundled_models()) names.push_back(name);
    combo(p, "model##train", t.bundled, names);
  } else if (t.source == "npy") {
    ImGui::InputTextWithHint("file##npy", "data.npy (N, dim)", &t.npy);
    p.ui.name_item("train_npy");
  } else {
    ImGui::RadioButton("off", &p.ui.brush_mode, 0);
    ImGui::SameLine();
    ImGui::RadioButton("add", &p.ui.brush_mode, 1);
    ImGui::SameLine();
    ImGui::RadioButton("erase", &p.ui.brush_mode, 2);
    tip("the brush in the 2D view (a 2D model shown): add draws points in a disc, erase removes them");
    ImGui::SliderFloat("radius", &p.ui.brush_radius, 0.01f, 1.0f, "%.3f", ImGuiSliderFlags_Logarithmic);
    ImGui::SliderInt("density", &p.ui.brush_density, 1, 100);
    tip("points a dab adds (a dab every half radius along a stroke)");
    ImGui::Text("%lld points", (long long)ts.brush().size());
    ImGui::SameLine();
    ImGui::BeginDisabled(ts.brush().undo_depth() == 0);
    if (ImGui::SmallButton("Undo (Ctrl+Z)")) p.push(Action::train("brush_undo"));
    ImGui::EndDisabled();
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear")) p.push(Action::train("brush_clear"));
  }
  int64_t rows = t.rows;
  if (p.edit(ImGui::InputScalar("set size", ImGuiDataType_S64, &rows)))
    t.rows = std::clamp<int64_t>(rows, 0, train::kMaxDataRows);
  tip("the training-set size: the first rows of the shuffled split (0: all). Small sets memorise; up to 2000 rows "
      "the ideal denoiser's samples (orange) are shown beside the model's");
  combo(p, "normalize", t.normalization, {"auto", "standard", "none"});
  tip("x = (raw - offset) * scale. auto: none for the brush (the drawn coordinates), standard otherwise");
}

void train_settings_ui(Panel& p) {
  TrainSettings& t = p.ui.train;
  combo(p, "objective", t.objective, {"epsilon", "sample", "v_prediction", "flow"});
  auto i64 = [&](const char* label, int64_t& v, int64_t lo, int64_t hi) {
    if (p.edit(ImGui::InputScalar(label, ImGuiDataType_S64, &v))) v = std::clamp(v, lo, hi);
  };
  i64("steps##train", t.steps, 1, 10000000);
  int batch = t.batch, hidden = t.hidden;
  if (p.edit(ImGui::InputInt("batch", &batch))) t.batch = std::clamp(batch, 1, 65536);
  if (p.edit(ImGui::InputDouble("lr", &t.lr, 0, 0, "%.2g"))) t.lr = std::clamp(t.lr, 1e-6, 1.0);
  int64_t seed = int64_t(t.seed);
  i64("seed##train", seed, 0, INT64_MAX);
  t.seed = uint64_t(seed);
  if (p.edit(ImGui::InputInt("hidden", &hidden, 64))) t.hidden = std::clamp(hidden, 64, 512);
  i64("preview", t.preview_every, 1, 1000000);
  tip("every this many steps the EMA weights are kept and sampled into the main view (the same noise each time)");
  if (p.edit(ImGui::InputDouble("ema", &t.ema, 0, 0, "%.4g"))) t.ema = std::clamp(t.ema, 0.0, 0.99999);
}

void train_run_ui(Panel& p) {
  const TrainingSession& ts = p.app.training();
  const TrainingSession::Progress pr = ts.progress();
  const bool running = ts.running();
  ImGui::BeginDisabled(running);
  if (ImGui::Button("Start")) p.push(Action::train("start"));
  ImGui::SameLine();
  if (ImGui::Button("Resume")) p.push(Action::train("resume"));
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!running);
  if (ImGui::Button("Stop")) p.push(Action::train("stop"));
  ImGui::EndDisabled();
  if (pr.total > 0) {
    char over[96];
    std::snprintf(over, sizeof over, "%lld / %lld  %s%s", (long long)pr.step, (long long)pr.total,
                  running ? "ETA " : "", (running ? seconds_text(pr.eta_seconds) : seconds_text(pr.seconds)).c_str());
    ImGui::ProgressBar(float(pr.step) / float(pr.total), ImVec2(-1, 0), over);
    ImGui::TextWrapped("%s", pr.data_note.c_str());
  }
  if (!pr.error.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", pr.error.c_str());
  if (!p.ui.train_message.empty())
    ImGui::TextColored(p.ui.train_message_error ? ImVec4(1, 0.45f, 0.4f, 1) : ImVec4(0.6f, 0.9f, 0.6f, 1), "%s",
                       p.ui.train_message.c_str());
}

// The loss per step (raw) and its exponential moving average (the smoothed curve, weight 1/20).
void train_loss_ui(Panel& p) {
  const std::vector<float> loss = p.app.training().losses();
  if (loss.empty()) return;
  const size_t every = std::max<size_t>(1, loss.size() / 400);  // at most ~400 points drawn
  PlotLine raw, smooth;
  raw.color = IM_COL32(120, 180, 255, 110);
  raw.name = "loss";
  smooth.color = IM_COL32(255, 200, 80, 255);
  smooth.name = "smoothed";
  double ema = loss[0];
  for (size_t k = 0; k < loss.size(); ++k) {
    ema = k == 0 ? loss[0] : 0.95 * ema + 0.05 * loss[k];
    if (k % every != 0 && k + 1 != loss.size()) continue;
    raw.x.push_back(double(k + 1));
    raw.y.push_back(loss[k]);
    smooth.x.push_back(double(k + 1));
    smooth.y.push_back(ema);
  }
  PlotSpec spec;
  spec.title = "training loss";
  spec.help = "the batch loss of every step (raw) and its exponential moving average (weight 1/20)";
  spec.x_label = "step";
  spec.log_y = true;
  spec.height = 80 * p.app.content_scale();
  draw_plot(spec, {raw, smooth});
}

// The loss per noise level of each kept checkpoint (session/training/level_loss.h) as a strip: a column per
// checkpoint (oldest left), a row per level (noisiest on top), colour from dark blue (the lowest log loss of the
// strip) to yellow (the highest); the values under the mouse as a tooltip.
void train_level_strip(Panel& p) {
  const std::vector<std::vector<float>> cols = p.app.training().level_losses();
  const std::vector<int64_t> steps = p.app.training().checkpoint_steps();
  if (cols.empty() || cols.size() != steps.size()) return;
  double lo = 1e300, hi = -1e300;
  for (const auto& c : cols)
    for (float v : c)
      if (v > 0) lo = std::min(lo, std::log10(double(v))), hi = std::max(hi, std::log10(double(v)));
  if (!(hi >= lo)) return;
  ImGui::TextUnformatted("loss per noise level");
  tip("each kept checkpoint's EMA weights on the same rows and noise at 16 levels (noisiest on top): the plain MSE "
      "of the objective's target; colour: log loss, dark = low, yellow = high");
  const float w = ImGui::GetContentRegionAvail().x, h = 48 * p.app.content_scale();
  const ImVec2 at = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(w, h));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float cw = w / float(cols.size()), rh = h / float(kLevelBins);
  for (size_t i = 0; i < cols.size(); ++i)
    for (int j = 0; j < kLevelBins && j < int(cols[i].size()); ++j) {
      const double v = cols[i][size_t(j)] > 0 ? std::log10(double(cols[i][size_t(j)])) : lo;
      const float f = float(hi > lo ? (v - lo) / (hi - lo) : 0.5);
      const ImU32 col = IM_COL32(int(30 + 225 * f), int(40 + 180 * f), int(120 - 90 * f), 255);
      const ImVec2 a(at.x + cw * float(i), at.y + rh * float(j));
      dl->AddRectFilled(a, ImVec2(a.x + cw, a.y + rh), col);
    }
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int i = std::clamp(int((m.x - at.x) / cw), 0, int(cols.size()) - 1);
    const int j = std::clamp(int((m.y - at.y) / rh), 0, kLevelBins - 1);
    ImGui::SetTooltip("step %lld, level %d of %d from the noisiest: loss %.4g", (long long)steps[size_t(i)], j + 1,
                      kLevelBins, double(cols[size_t(i)][size_t(j)]));
  }
}

}  // namespace

namespace {

// The kept checkpoints: a slider over them (the main view replays the same noise through the chosen one's EMA
// weights) and "newest" to follow the run again; then the save path and Save.
void train_checkpoints_ui(Panel& p) {
  const std::vector<int64_t> steps = p.app.training().checkpoint_steps();
  if (!steps.empty()) {
    const int n = int(steps.size());
    int shown = p.app.train_checkpoint_shown() < 0 ? n - 1 : std::min(p.app.train_checkpoint_shown(), n - 1);
    char fmt[64];
    std::snprintf(fmt, sizeof fmt, "step %lld", (long long)steps[size_t(shown)]);
    if (ImGui::SliderInt("checkpoint", &shown, 0, n - 1, fmt, ImGuiSliderFlags_AlwaysClamp))
      p.push(Action::train("checkpoint", "", shown));
    tip("the kept EMA weights (the last 16 previews): the main view samples the same noise through them");
    if (p.app.train_checkpoint_shown() >= 0 && ImGui::SmallButton("follow the newest"))
      p.push(Action::train("checkpoint", "", -1));
  }
  ImGui::InputText("save as", &p.ui.train_save_path);
  p.ui.name_item("train_save_path");
  if (ImGui::Button("Save .safetensors")) p.push(Action::train("save"));
  tip("the model file (EMA weights, the CLI's layout) and its checkpoint beside it (NAME.ckpt.safetensors), "
      "written atomically");
}

}  // namespace

void panel_train(Panel& p) {
  train_data_ui(p);
  ImGui::Separator();
  train_settings_ui(p);
  ImGui::Separator();
  train_run_ui(p);
  train_loss_ui(p);
  train_level_strip(p);
  train_checkpoints_ui(p);
}

void draw_train_overlay(const App& app) {
  if (!app.session().has_model() || app.session().dim() != 2 || app.fb_h() <= 0) return;
  const TrainingSession& ts = app.training();
  const bool brush = app.ui().train.source == "brush";
  const std::vector<float> ideal = ts.has_data() && ts.data().dim == 2 ? ts.ideal() : std::vector<float>();
  if ((!brush || ts.brush().size() == 0) && ideal.empty() && app.ui().brush_mode == 0) return;
  const render::Rect r = app.scatter_pane();
  const ViewSettings& v = app.settings().view;
  const ImGuiIO& io = ImGui::GetIO();
  const double sx = io.DisplayFramebufferScale.x, sy = io.DisplayFramebufferScale.y;
  const double data_to_px = r.h / (2.0 * v.cam_half_h);
  auto at = [&](double x, double y) {  // data units -> ImGui coordinates
    const double gx = r.x + 0.5 * r.w + (x - v.cam_x) * data_to_px, gy = r.y + 0.5 * r.h + (y - v.cam_y) * data_to_px;
    return ImVec2(float(gx / sx), float((app.fb_h() - gy) / sy));
  };
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  const float dot = 1.6f * app.content_scale();
  if (brush)
    for (size_t i = 0; i + 1 < ts.brush().xy().size(); i += 2)
      dl->AddCircleFilled(at(ts.brush().xy()[i], ts.brush().xy()[i + 1]), dot, IM_COL32(235, 235, 235, 200), 6);
  for (size_t i = 0; i + 1 < ideal.size(); i += 2)
    dl->AddCircleFilled(at(ideal[i], ideal[i + 1]), dot, IM_COL32(255, 150, 40, 230), 6);
  if (app.ui().brush_mode != 0 && !io.WantCaptureMouse)  // the brush's disc at the mouse
    dl->AddCircle(io.MousePos, float(app.ui().brush_radius * data_to_px / sy), IM_COL32(255, 255, 255, 160), 32);
}

}  // namespace diffscope::ui
