// panels.h — the ImGui panels, each a function of a Panel (ui/app.h: the App to read, the settings it shows to
// edit, the action queue), small panels, one file each.
#pragma once
#include <string>
#include <vector>

namespace diffscope {
struct StepTable;
}
namespace diffscope::ui {
struct Panel;
class App;
void draw_panels(Panel& p);          // all of the below, laid out (panels.cpp)
// The collapsible sections of the left panel and "Kernels" (the kernel panel), as a script's `open` names them.
const std::vector<std::string>& section_names();
float label_column_width();          // room for the left panel's labels right of its widgets (ImGui units)
void same_line_if_fits(float w);     // next item on this line when w (ImGui units) still fits, else below
void tip(const char* text);          // the last item's tooltip (also when it is disabled)
// `text` in at most `width` (ImGui units): its middle replaced by "..." when it does not fit.
std::string elide_middle(const std::string& text, float width);
void panel_model(Panel& p);            // model picker, path field, errors
void panel_sampling(Panel& p);         // sampler settings
void panel_view(Panel& p);             // drawing options
void panel_pick(Panel& p);             // picked particles, their edited starts
// "t = 981", "sigma = 2.5", "s = 0.75", "clean": frame j's noise level as the timeline shows it for the run's family.
std::string frame_level_text(const StepTable& tab, int j);
// The tooltip of a picked particle: its step, noise level and position at each kept frame.
void pick_tooltip(const App& app, int row);
void panel_schedule(Panel& p);         // per-step t, abar, sigma, logSNR, step size; errors vs the exact ODE
// The two docked windows: draw_panels sets their place and size; each returns its window's top edge.
float panel_timeline(Panel& p);        // play / pause / speed / scrubber
float panel_kernels(Panel& p);         // kernel timings + per-frame figures (collapsed: a title bar)
void panel_export(Panel& p);           // snapshot, grid, npy, frame sequence
void panel_train(Panel& p);            // training: data, brush, settings, run, loss, checkpoints, save (app_train.cpp)
void panel_grid(Panel& p);             // the comparison grid: axes, values, metric, sorting, alignment, plot
// On the 2D view: the brush's points and disc, the ideal denoiser's samples (app_train.cpp).
void draw_train_overlay(const App& app);
void draw_grid_labels(const App& app);  // over the grid's cells: labels and each cell's metric (app_grid.cpp)
void draw_view_legend(const App& app);  // on the views: tick labels, axis names, legend, grid caption (view_legend.cpp)
}  // namespace diffscope::ui
