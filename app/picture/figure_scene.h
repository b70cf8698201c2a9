// figure_scene.h — a run's figure (picture/figure.h) from what the window, the exports and `sample` hold: its words
// (axis labels, legend, caption), the noise level per step, and the marks projected to the view's 2D plane.
#pragma once
#include <string>
#include <vector>

#include "diffusion/step_table.h"
#include "model/model.h"
#include "picture/figure.h"
#include "session/settings_io.h"
#include "session/view_fit.h"

namespace diffscope {

// The words and strip of a figure of `model`'s run on `table` (nullptr: no strip, no family) with the settings `s`
// (sampler, spacing, steps, seed, view), B samples, the shown frame `frame` and `trail_frames` kept frames of trail:
// axis labels (x1, x2; PC 1, PC 2 of a projection), the legend's entries, the caption "moons · epsilon prediction ·
// ddim (default spacing), 50 steps, 50 network evaluations · seed 0 · n = 4096 · step 50 of 50, sigma = 0" and
// sigma = sqrt((1 - abar) / abar) of each frame 0..N.
void describe_run(Figure& f, const DiffusionModel& model, const StepTable* table, const AppSettings& s, int B, int frame,
                  int trail_frames);

// The marks of kept slot `slot` of host frames (n_slots, B, dim): the shown slot, frame 0 (the colours), the trail's
// `trail_frames` earlier slots, the data overlay when shown, all projected by `p` (dim 2: as they are).
FigureMarks figure_marks(const DiffusionModel& model, const Projection& p, const float* frames, int B, int slot,
                         int trail_frames, bool show_data);

}  // namespace diffscope
