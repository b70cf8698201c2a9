// figure_scene.cpp — a run's figure words, noise levels and projected marks (figure_scene.h).
#include "picture/figure_scene.h"

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "diffusion/sampling.h"
#include "session/field_view.h"

namespace diffscope {

namespace {

// The caption's family words: "epsilon prediction", "v prediction", "flow matching (velocity)", ...
std::string family_words(Family f) {
  switch (f) {
    case Family::Epsilon: return "epsilon prediction";
    case Family::Sample: return "sample (x0) prediction";
    case Family::VPrediction: return "v prediction";
    case Family::Flow: return "flow matching (velocity)";
    case Family::Edm: return "EDM (data prediction)";
  }
  return family_name(f);
}

std::string num3(double v) {
  if (!std::isfinite(v)) return "\xe2\x88\x9e";  // infinity: a flow's pure noise (s = 1)
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

}  // namespace

void describe_run(Figure& f, const DiffusionModel& model, const StepTable* table, const AppSettings& s, int B, int frame,
                  int trail_frames) {
  const SamplingSettings& ss = s.sampling;
  const bool projected = model.net.dim > 2;
  f.x_label = projected ? "PC 1 (the data's first principal axis)" : "x\xe2\x82\x81";
  f.y_label = projected ? "PC 2" : "x\xe2\x82\x82";
  const int N = table ? table->steps() : ss.steps;
  f.samples_label = std::to_string(B) + " samples at step " + std::to_string(frame) + " of " + std::to_string(N);
  f.points_drawn = s.view.view_mode != ViewMode::Density;
  f.trail_frames = f.points_drawn ? trail_frames : 0;  // the density view alone draws no trails
  f.density_label = s.view.view_mode == ViewMode::Points
                        ? ""
                        : "samples per bin (" + std::string(s.view.density_scale == DensityScale::Log ? "log" : "linear") +
                              " scale, " + std::to_string(s.view.density_bin_px) + " px bins)";
  f.show_data = s.view.show_data && model.n_data > 0;
  f.field_label = s.view.show_field && table ? field_quantity_label(s.view.field_quantity, table->family.family) : "";
  f.sigma.clear();
  f.shown_frame = frame;
  const std::string sep = " \xc2\xb7 ";
  std::string cap = std::filesystem::path(model.path).stem().string();
  if (table) cap += sep + family_words(table->family.family);
  cap += sep + std::string(sampler_name(ss.sampler)) + " (" + spacing_name(ss.spacing) + " spacing), " +
         std::to_string(N) + " steps";
  if (table) cap += ", " + std::to_string(table->evaluations(0, N)) + " network evaluations";
  cap += sep + "seed " + std::to_string(ss.seed) + sep + "n = " + std::to_string(B);
  if (table && N > 0) {
    for (int j = 0; j <= N; ++j) {
      // The level of frame j (the state after j steps; frame N after the last step, clean for most runs).
      const bool own = table->levels.size() == size_t(N) + 1;
      const double abar = own ? table->levels[size_t(j)].vp_abar() : field_level(model, *table, j).level.vp_abar();
      f.sigma.push_back(abar >= 1 ? 0.0 : abar <= 0 ? INFINITY : std::sqrt((1 - abar) / abar));
    }
    const double sigma = f.sigma[size_t(std::min(std::max(frame, 0), N))];
    cap += sep + "step " + std::to_string(frame) + " of " + std::to_string(N) + ", \xcf\x83 = " + num3(sigma);
  }
  f.caption = cap;
}

FigureMarks figure_marks(const DiffusionModel& model, const Projection& p, const float* frames, int B, int slot,
                         int trail_frames, bool show_data) {
  const int dim = model.net.dim;
  auto project = [&](const float* row, std::vector<float>& out) {
    if (dim == 2) return out.push_back(row[0]), out.push_back(row[1]);
    double x = 0, y = 0;
    for (int d = 0; d < dim; ++d) {
      const double v = row[d] - p.mean[size_t(d)];
      x += v * p.axis0[size_t(d)], y += v * p.axis1[size_t(d)];
    }
    out.push_back(float(x)), out.push_back(float(y));
  };
  const size_t frame_floats = size_t(B) * dim;
  FigureMarks m;
  m.n = B;
  m.trail_slots = std::min(trail_frames, slot);
  for (int i = 0; i < B; ++i) {
    project(frames + size_t(slot) * frame_floats + size_t(i) * dim, m.points);
    project(frames + size_t(i) * dim, m.start);
  }
  for (int k = slot - m.trail_slots; k <= slot && m.trail_slots > 0; ++k)
    for (int i = 0; i < B; ++i) project(frames + size_t(k) * frame_floats + size_t(i) * dim, m.trails);
  for (int i = 0; show_data && i < model.n_data; ++i) project(model.data_samples.data() + size_t(i) * dim, m.data);
  return m;
}

}  // namespace diffscope
