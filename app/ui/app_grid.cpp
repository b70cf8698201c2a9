// app_grid.cpp — the comparison grid in the window (SEMANTICS §10 "The grid in the window"): the App's side (run
// it when its inputs change, upload the cells' states at the timeline position, draw the cells with the renderer,
// a click on a cell), the Grid section of the left panel and the labels drawn over the cells.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/errors.h"
#include "model/model.h"
#include "picture/picture.h"
#include "platform/paths.h"
#include "session/field_view.h"
#include "session/settings_keys.h"
#include "ui/app.h"
#include "ui/widgets/mini_plot.h"
#include "ui/panels.h"

namespace diffscope::ui {

double App::grid_position() const {
  const int n = m_session && m_session->has_model() ? m_session->n_steps() : 0;
  return n > 0 ? std::clamp(static_cast<double>(shown_frame()) / n, 0.0, 1.0) : 1.0;
}

GridAlign App::grid_align() const {
  return m_settings.view.grid_align == "step" ? GridAlign::Step : GridAlign::NoiseLevel;
}

// Runs the grid again when its spec, the sampling settings, the model or the backend changed (every cell from
// the same noise, through the run plan), then uploads each cell's state at the timeline position when that moved.
void App::update_grid() {
  if (!grid_shown() || !m_session->has_model()) return;
  if (!m_grid) m_grid = std::make_unique<GridLive>();
  const bool gpu = m_session->compute_path() && m_session->compute_path()->is_gpu();
  const std::string key = m_settings.view.grid + "\n" + to_json(m_settings)["sampling"].dump() + "\n" +
                          m_session->model().path + (gpu ? "\ngpu" : "\ncpu");
  if (key != m_grid_key) {
    m_grid_key = key;
    m_grid_upload_key.clear();
    try {
      if (m_session->scheduler_config())
        throw InvalidInput("the grid runs the models' own schedules; clear the scheduler config to run it");
      if (!m_grid_backend || m_grid_backend_gpu != gpu) {
        m_grid_backend = m_services.make_backend ? m_services.make_backend(gpu) : make_cpu_backend();
        m_grid_backend_gpu = gpu;
      }
      GridRequest g;
      g.spec = parse_grid_spec(m_settings.view.grid, "grid");
      g.base = session_request(m_settings.sampling, nullptr, gpu, 0, &m_session->model());
      g.base_model = m_session->model().path;
      // Across models each cell starts at its model's default t_start (a timestep, or a list index: SEMANTICS §10).
      if (g.spec.rows.axis == GridAxis::Model || g.spec.cols.axis == GridAxis::Model) g.base.t_start.reset();
      g.load = [this](const std::string& name) {
        std::shared_ptr<const DiffusionModel>& m = m_grid_models[resolve_model(name)];
        if (!m) m = std::make_shared<const DiffusionModel>(load_diffusion_model(resolve_model(name)));
        return m;
      };
      m_grid->run(g, *m_grid_backend);
      ++m_grid_runs;
      m_grid_error.clear();
    } catch (const std::exception& e) {
      m_grid->clear();
      m_grid_error = e.what();
    }
  }
  if (!m_grid->has_grid()) return;
  const GridPlan& p = m_grid->plan();
  char ukey[64];
  std::snprintf(ukey, sizeof ukey, "%d %.9f %d", m_grid_runs, grid_position(), static_cast<int>(grid_align()));
  if (ukey == m_grid_upload_key) return;
  m_grid_upload_key = ukey;
  if (!m_grid_points) m_grid_points = std::make_unique<render::GlTrajectoryBuffer>();
  const size_t cell_bytes = static_cast<size_t>(p.n) * p.dim * sizeof(float);
  if (m_grid_points->size_bytes() != cell_bytes * m_grid->cells()) m_grid_points->resize(cell_bytes * m_grid->cells());
  for (int i = 0; i < m_grid->cells(); ++i)
    m_grid_points->upload(cell_bytes * i, cell_bytes, m_grid->state_at(i, grid_position(), grid_align()));
}

App::GridPane App::grid_pane() const {
  GridPane g;
  g.area = render::Renderer::layout(m_fb_w, m_fb_h, false, ui_insets_px()).scatter;  // image models: no image grid
  if (!m_grid || !m_grid->has_grid()) return g;
  const GridPlan& p = m_grid->plan();
  const int rows = p.spec.n_rows(), cols = p.spec.n_cols();
  const float line = ImGui::GetTextLineHeight() * ImGui::GetIO().DisplayFramebufferScale.y;
  g.label_top = p.spec.cols.axis == GridAxis::None ? 0 : static_cast<int>(line * 1.6f);
  float widest = ImGui::CalcTextSize(grid_axis_name(p.spec.rows.axis)).x;  // the row values, up to a quarter
  for (const std::string& v : p.spec.rows.values) widest = std::max(widest, ImGui::CalcTextSize(v.c_str()).x);
  widest = (widest + ImGui::GetFontSize()) * ImGui::GetIO().DisplayFramebufferScale.x;
  g.label_left = p.spec.rows.axis == GridAxis::None ? 0 : static_cast<int>(std::min(widest, g.area.w * 0.25f));
  const int gap = std::max(2, static_cast<int>(line * 0.25f));
  const int cw = (g.area.w - g.label_left) / cols, ch = (g.area.h - g.label_top) / rows;
  g.cols = cols;
  g.order = m_grid->order(m_settings.view.grid_metric, m_settings.view.grid_sort);
  for (int k = 0; k < rows * cols; ++k) {
    const int r = k / cols, c = k % cols;  // GL pixels: row 0 at the top
    g.cells.push_back({g.area.x + g.label_left + c * cw + gap / 2, g.area.y + g.area.h - g.label_top - (r + 1) * ch + gap / 2,
                       cw - gap, ch - gap});
  }
  return g;
}

void App::draw_grid(int w, int h) {
  m_renderer->draw_scene({}, w, h);  // clears the frame
  if (!m_grid || !m_grid->has_grid() || !m_grid_points) return;
  const GridPlan& p = m_grid->plan();
  const GridPane g = grid_pane();
  render::SceneInput in = picture_scene(m_settings.view, m_content_scale, m_grid_points.get(), p.n, p.dim, 0, 0);
  in.trail_slots = 0;
  in.draw_density = false;
  in.draw_points = true;
  in.picks.clear();
  in.point_size = std::max(1.5f, in.point_size * 0.75f);  // the single view's camera in every cell
  for (size_t k = 0; k < g.cells.size(); ++k) {
    in.slot = g.order[k];
    m_renderer->draw_pane(in, g.cells[k]);
  }
}

void App::handle_grid_input(double mx, double my) {
  if (!ImGui::IsMouseReleased(ImGuiMouseButton_Left) || ImGui::GetIO().MouseDragMaxDistanceSqr[0] > 16) return;
  const GridPane g = grid_pane();
  for (size_t k = 0; k < g.cells.size(); ++k) {
    const render::Rect& r = g.cells[k];
    if (mx >= r.x && mx < r.x + r.w && my >= r.y && my < r.y + r.h) push(Action::grid_click(g.order[k]));
  }
}

// The cell's settings become the single view's: a model axis loads its model first (and its default t_start, as
// the cell ran), then the other axis (t_start before steps, as steps is clamped by t_start); the grid is hidden
// (its spec stays).
void App::click_grid(int cell) {
  if (!m_grid || cell < 0 || cell >= m_grid->cells()) {
    m_outcome = {false, "grid_click: no cell " + std::to_string(cell) + " in the grid shown"};
    return;
  }
  const GridPlan& p = m_grid->plan();
  const GridCell c = p.cells[static_cast<size_t>(cell)];
  std::vector<std::pair<GridAxis, std::string>> values;
  if (p.spec.rows.axis != GridAxis::None) values.emplace_back(p.spec.rows.axis, p.spec.rows.values[c.row]);
  if (p.spec.cols.axis != GridAxis::None) values.emplace_back(p.spec.cols.axis, p.spec.cols.values[c.col]);
  std::stable_sort(values.begin(), values.end(), [](const auto& a, const auto& b) {
    const auto rank = [](GridAxis x) { return x == GridAxis::Model ? 0 : x == GridAxis::TStart ? 1 : 2; };
    return rank(a.first) < rank(b.first);
  });
  const bool t_start_axis = p.spec.rows.axis == GridAxis::TStart || p.spec.cols.axis == GridAxis::TStart;
  for (const auto& [axis, value] : values) {
    if (axis != GridAxis::Model) {
      set_setting(grid_axis_name(axis), value);
      continue;
    }
    load_model(value, false);  // the cell ran from its model's default t_start (a t_start axis: its own)
    if (!t_start_axis && m_session->has_model())
      m_settings.sampling.t_start = family_default_t_start(m_session->model(), m_settings.sampling.prediction_type);
  }
  m_settings.view.grid_show = false;
  m_outcome = {true, "the single view runs cell (" + std::to_string(c.row) + ", " + std::to_string(c.col) + "): " +
                         p.row_label(c.row) + (p.row_label(c.row).empty() ? "" : " ") + p.col_label(c.col)};
}

namespace {

const char* const kAxisNames[] = {"(none)", "sampler", "steps", "spacing", "eta", "precision", "model", "t_start"};

int axis_index(GridAxis a) { return a == GridAxis::None ? 0 : static_cast<int>(a); }

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

// The fields as a spec's text ("rows=steps:5,10 cols=sampler:ddim,heun"); a dimension without an axis left out.
std::string fields_text(const UiState& ui) {
  std::string t;
  const char* dims[] = {"rows", "cols"};
  for (int d = 0; d < 2; ++d)
    if (ui.grid_axis[d] > 0) t += std::string(t.empty() ? "" : " ") + dims[d] + "=" + kAxisNames[ui.grid_axis[d]] + ":" + ui.grid_values[d];
  return t;
}

// Fills the fields from the settings' spec when it changed (a script, a restore, the settings file).
void sync_fields(Panel& p) {
  const std::string& spec = p.settings.view.grid;
  if (spec == p.ui.grid_fields_from) return;
  p.ui.grid_fields_from = spec;
  if (spec.empty()) return;
  const GridSpec g = parse_grid_spec(spec, "grid");
  p.ui.grid_axis[0] = axis_index(g.rows.axis), p.ui.grid_values[0] = joined(g.rows.values);
  p.ui.grid_axis[1] = axis_index(g.cols.axis), p.ui.grid_values[1] = joined(g.cols.values);
}

// A metric against the column axis, one line per row: numeric column values on x, else the column index.
void grid_plot(const App& app) {
  const GridLive& g = app.grid();
  const GridPlan& p = g.plan();
  const std::string& metric = app.settings().view.grid_metric;
  const bool numeric = p.spec.cols.axis == GridAxis::Steps || p.spec.cols.axis == GridAxis::Eta ||
                       p.spec.cols.axis == GridAxis::TStart;
  static const ImU32 colours[] = {IM_COL32(120, 180, 255, 255), IM_COL32(255, 160, 90, 255), IM_COL32(130, 220, 130, 255),
                                  IM_COL32(230, 110, 160, 255), IM_COL32(200, 200, 110, 255), IM_COL32(160, 140, 250, 255),
                                  IM_COL32(110, 220, 220, 255), IM_COL32(220, 220, 220, 255)};
  std::vector<PlotLine> lines;
  for (int r = 0; r < p.spec.n_rows(); ++r) {
    PlotLine l;
    l.color = colours[r % 8];
    l.points = true;
    l.name = p.spec.rows.axis == GridAxis::None ? "" : p.spec.rows.values[static_cast<size_t>(r)];
    for (int c = 0; c < p.spec.n_cols(); ++c) {
      l.x.push_back(numeric ? std::stod(p.spec.cols.values[c]) : c);
      l.y.push_back(grid_metric_value(g.result().metrics[static_cast<size_t>(r) * p.spec.n_cols() + c], metric));
    }
    lines.push_back(std::move(l));
  }
  const std::string title = metric + " vs " + (p.spec.cols.axis == GridAxis::None ? "cell" : grid_axis_name(p.spec.cols.axis));
  PlotSpec spec;
  spec.title = title.c_str();
  spec.help = "the metric each cell shows, against the column axis (one line per row)";
  spec.x_label = numeric ? grid_axis_name(p.spec.cols.axis) : "column";
  spec.log_x = numeric && p.spec.cols.axis == GridAxis::Steps;
  spec.log_y = metric != "straightness" && metric != "evaluations";  // errors over decades (0: not drawn)
  spec.height = 90;
  draw_plot(spec, lines);
}

}  // namespace

void panel_grid(Panel& p) {
  ViewSettings& v = p.settings.view;
  sync_fields(p);
  ImGui::TextWrapped("Rows x columns of runs from the same noise, each re-simulated when a setting changes.");
  const char* dims[] = {"rows", "columns"};
  for (int d = 0; d < 2; ++d) {
    ImGui::PushID(d);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    ImGui::Combo(dims[d], &p.ui.grid_axis[d], kAxisNames, IM_ARRAYSIZE(kAxisNames));
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-FLT_MIN);
    ImGui::InputText("##values", &p.ui.grid_values[d]);
    tip("the values, comma-separated (at most 8): ddim,heun  5,10,20  0,0.5,1  moons_eps,moons_flow");
    ImGui::PopID();
  }
  if (ImGui::Button("Apply")) {
    try {
      const std::string text = fields_text(p.ui);
      if (text.empty()) throw InvalidInput("grid: choose an axis for the rows or the columns");
      v.grid = grid_spec_text(parse_grid_spec(text, "grid"));
      v.grid_show = true;
      p.ui.grid_fields_from = v.grid;
      p.ui.grid_field_error.clear();
      p.edit(true);
    } catch (const InvalidInput& e) {
      p.ui.grid_field_error = e.what();
    }
  }
  ImGui::SameLine();
  p.edit(ImGui::Checkbox("show the grid", &v.grid_show));
  if (!p.ui.grid_field_error.empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", p.ui.grid_field_error.c_str());
  if (!p.app.grid_error().empty()) ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "%s", p.app.grid_error().c_str());
  const std::vector<std::string>& names = grid_metric_names();
  if (ImGui::BeginCombo("metric", v.grid_metric.c_str())) {
    for (const std::string& n : names)
      if (ImGui::Selectable(n.c_str(), n == v.grid_metric)) v.grid_metric = n, p.edit(true);
    ImGui::EndCombo();
  }
  p.edit(ImGui::Checkbox("sort by it", &v.grid_sort));
  ImGui::SameLine();
  bool by_step = v.grid_align == "step";
  if (p.edit(ImGui::Checkbox("align by step", &by_step))) v.grid_align = by_step ? "step" : "noise";
  tip("the timeline shows each cell's frame at the same step fraction (on), or at the nearest noise level (off)");
  if (p.app.grid_shown() && p.app.grid().has_grid()) grid_plot(p.app);
}

// Over the cells: the column labels above, the row labels at the left, and in each cell its metric (and, when
// sorted, its row and column values) on a strip coloured by the metric's rank (blue: lowest, orange: highest).
void draw_grid_labels(const App& app) {
  if (!app.grid_shown() || !app.grid().has_grid()) return;
  const App::GridPane g = app.grid_pane();
  const GridLive& grid = app.grid();
  const GridPlan& p = grid.plan();
  const ImVec2 k = ImGui::GetIO().DisplayFramebufferScale;
  const float fb_h = static_cast<float>(app.fb_h());
  const auto top_left = [&](const render::Rect& r) { return ImVec2(r.x / k.x, (fb_h - r.y - r.h) / k.y); };
  ImDrawList* dl = ImGui::GetBackgroundDrawList();
  const float line = ImGui::GetTextLineHeight();
  const bool sorted = app.settings().view.grid_sort;
  const std::string& metric = app.settings().view.grid_metric;
  const int n = static_cast<int>(g.cells.size());
  const std::vector<int> by_metric = sorted ? g.order : grid.order(metric, true);
  for (int pos = 0; pos < n; ++pos) {
    const ImVec2 a = top_left(g.cells[pos]);
    const float w = g.cells[pos].w / k.x;
    const int i = g.order[pos];
    const GridCell& c = p.cells[static_cast<size_t>(i)];
    const double value = grid_metric_value(grid.result().metrics[static_cast<size_t>(i)], metric);
    // The rank among the cells by the metric.
    const int rank = static_cast<int>(std::find(by_metric.begin(), by_metric.end(), i) - by_metric.begin());
    const float f = n > 1 ? static_cast<float>(rank) / (n - 1) : 0.0f;
    const ImU32 colour = std::isfinite(value) ? ImGui::GetColorU32(ImVec4(0.25f + 0.7f * f, 0.45f, 0.95f - 0.7f * f, 0.85f))
                                              : IM_COL32(90, 90, 90, 200);
    // The metric's name while it fits, else the number alone; sorted cells name their values on a second line.
    const std::string number = grid_metric_text(value, metric), named = metric + " " + number;
    const std::string shown = ImGui::CalcTextSize(named.c_str()).x <= w - 6 ? named : elide_middle(number, w - 6);
    std::string values;
    for (const GridLine* l : {&p.spec.rows, &p.spec.cols})
      if (l->axis != GridAxis::None) values += (values.empty() ? "" : " ") + l->values[l == &p.spec.rows ? c.row : c.col];
    const int lines = sorted ? 2 : 1;
    dl->AddRectFilled(a, ImVec2(a.x + w, a.y + lines * line + 4), colour);
    dl->AddText(ImVec2(a.x + 3, a.y + 2), IM_COL32(255, 255, 255, 255), shown.c_str());
    if (sorted)
      dl->AddText(ImVec2(a.x + 3, a.y + 2 + line), IM_COL32(235, 235, 240, 255), elide_middle(values, w - 6).c_str());
  }
  if (sorted) return;  // sorted cells carry their own values
  for (int c = 0; c < g.cols && p.spec.cols.axis != GridAxis::None; ++c) {
    const ImVec2 a = top_left(g.cells[c]);
    const std::string label = elide_middle(p.col_label(c), g.cells[c].w / k.x - 4);
    dl->AddText(ImVec2(a.x + 2, a.y - line - 3), IM_COL32(230, 232, 238, 255), label.c_str());
  }
  if (p.spec.rows.axis == GridAxis::None) return;
  // The row axis's name in the corner, each row's value beside it.
  const ImVec2 corner = top_left(g.cells[0]);
  dl->AddText(ImVec2(g.area.x / k.x + 3, corner.y - line - 3), IM_COL32(160, 165, 175, 255),
              elide_middle(grid_axis_name(p.spec.rows.axis), g.label_left / k.x - 6).c_str());
  for (int r = 0; r < p.spec.n_rows(); ++r) {
    const render::Rect& cell = g.cells[static_cast<size_t>(r) * g.cols];
    const ImVec2 a = top_left(cell);
    const std::string label = elide_middle(p.spec.rows.values[static_cast<size_t>(r)], g.label_left / k.x - 6);
    dl->AddText(ImVec2(g.area.x / k.x + 3, a.y + cell.h / k.y * 0.5f - line * 0.5f), IM_COL32(230, 232, 238, 255),
                label.c_str());
  }
}

}  // namespace diffscope::ui
