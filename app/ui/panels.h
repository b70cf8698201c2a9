// panels.h — the ImGui panels, each a plain function of the app state (STYLE.md: small panels).
#pragma once

namespace diffscope::ui {
class App;
void draw_panels(App& app);          // all of the below, laid out
void panel_model(App& app);          // model picker, path field, errors
void panel_sampling(App& app);       // sampler settings
void panel_view(App& app);           // drawing options
void panel_timeline(App& app);       // play / pause / speed / scrubber (its own window at the bottom)
void panel_kernels(App& app);        // kernel timings + per-frame figures (its own window on the right)
void panel_export(App& app);         // snapshot, grid, npy, frame sequence
}  // namespace diffscope::ui
