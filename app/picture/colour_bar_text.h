// colour_bar_text.h — the density view's colour bar labels written into an exported picture (SEMANTICS §6 "The
// density view"): the app draws them over the window with ImGui (ui/view_legend.cpp); snapshots and `sample --png`
// get the same ticks drawn with cairo, so both pictures carry the numbers and stay pixel-identical.
#pragma once
#include <cstdint>
#include <vector>

#include "render/renderer.h"

namespace diffscope {

// Draws, left of the colour bar of `pane` (render::Renderer::colour_bar_rect; GL pixels, origin bottom-left), a tick
// and the count at 0, the powers of ten (log) or the half (linear) and `top` (diffusion/density.h colour_bar_ticks),
// skipping a label that would touch the one above it, and "samples per bin" above the bar; into `rgba` (w x h,
// 4 bytes a pixel, top row first). Nothing for top = 0. `px` is the font size in pixels.
void label_colour_bar(std::vector<uint8_t>& rgba, int w, int h, const render::Rect& pane, uint32_t top, bool log_scale,
                      double px);

// The labels of the scene `in` just drawn by `renderer` into a w x h picture (read back as `rgba`), when it shows the
// density view: its pane's colour bar, the largest count read from the GPU, the font 13 px x ui_scale (the app's).
void label_scene_colour_bar(std::vector<uint8_t>& rgba, int w, int h, const render::SceneInput& in,
                            const render::Renderer& renderer, float ui_scale);

}  // namespace diffscope
