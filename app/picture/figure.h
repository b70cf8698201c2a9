// figure.h — figures for papers (SEMANTICS §6 "Figures"): the 2D view inside axes with tick values in data units,
// a legend of what the colours mean, a caption line (model, family, solver, steps, network evaluations, seed) and,
// for a run, a strip of the noise level over its steps; drawn with cairo into pixels (the PNG) or as a vector
// figure (SVG, PDF). One scene description (Figure) feeds all three writers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "render/renderer.h"

namespace diffscope {

enum class FigureFormat { Svg, Pdf };

// The plot's marks in data units (the view's 2D projection), for the vector writers.
struct FigureMarks {
  int n = 0;                        // samples
  std::vector<float> points;        // (n, 2): the shown frame
  std::vector<float> start;         // (n, 2): frame 0, whose angle colours each particle (the renderer's palette)
  int trail_slots = 0;              // trails over this many earlier kept frames; 0: none
  std::vector<float> trails;        // (trail_slots + 1, n, 2): kept slots slot - trail_slots .. slot, oldest first
  std::vector<float> data;          // (n_data, 2): the data overlay; empty: none
  std::vector<render::LineVertex> field;  // the field arrows (data units), as the renderer draws them
};

// Everything a figure shows. Sizes in pixels of the page (the PNG's; SVG and PDF pages are the same size in CSS
// pixels, 0.75 pt each).
struct Figure {
  int width = 1024, height = 1024;
  bool image_model = false;           // the plot holds the image grid beside the 2D view (always a raster)
  render::Camera cam;                 // the 2D view's camera over its pane in the plot
  float point_px = 3, point_alpha = 0.6f;  // point diameter in pixels, opacity (the view's)
  bool show_axes = true;              // the faint unit grid inside the plot (vector marks)
  std::string x_label = "x1", y_label = "x2";
  std::string samples_label;          // legend: "samples at step 50 of 50"
  int trail_frames = 0;               // legend: trails over this many kept frames (0: no entry)
  bool show_data = false;             // legend: the data overlay is drawn
  std::string field_label;            // legend: the field's quantity ("" when not drawn)
  bool points_drawn = true;           // legend: the samples as points (view_mode points or both)
  std::string density_label;          // legend: the density view's histogram ("" when not drawn)
  std::string caption;                // the caption line (wrapped to the page's width)
  // The noise level of each frame 0..N of the run (sigma = sqrt((1 - abar) / abar)) and the frame shown; empty:
  // no strip.
  std::vector<double> sigma;
  int shown_frame = 0;
  // The plot rendered (plot_rect's size, RGBA rows top first): the PNG shows it; SVG and PDF embed it when
  // `vector_marks` is false.
  std::vector<uint8_t> raster;
  bool vector_marks = false;
  FigureMarks marks;
};

// The plot's place on the page (pixels, origin top-left): the caller renders the view at w x h into Figure::raster.
struct FigureRect {
  int x = 0, y = 0, w = 0, h = 0;
};
// Measures the legend, caption and strip of `f` (width, height, caption, sigma) and returns the plot's rectangle.
// Throws ResourceUnavailable when the build has no cairo.
FigureRect figure_plot_rect(const Figure& f);

// The rule for the vector writers' marks: the samples (and trails, data, field) are vector marks when the plot is no
// image grid, shows no density view (view_mode points), n <= kFigureVectorMaxPoints and n x (trail frames + 1) <=
// kFigureVectorMaxMarks; otherwise the rendered plot is embedded as one raster image inside the vector axes, legend
// and caption.
constexpr int kFigureVectorMaxPoints = 20000;
constexpr int kFigureVectorMaxMarks = 60000;
bool figure_uses_vector_marks(int n, int trail_frames, bool image_model, bool density_view);

// The page as RGBA rows (top first, width x height): the raster plot inside the axes, legend, caption and strip.
// Throws ResourceUnavailable without cairo.
std::vector<uint8_t> render_figure_rgba(const Figure& f);
// The page as an SVG or PDF document. `embedded`: an SVG's <metadata> (the sidecar's JSON), a PDF's subject (the
// command line). Throws ResourceUnavailable without cairo, InvalidInput naming `arg` when cairo fails.
std::string render_figure_vector(const Figure& f, FigureFormat format, const std::string& arg,
                                 const std::string& embedded = "");

// ".svg" -> Svg, ".pdf" -> Pdf; anything else throws InvalidInput naming `arg` and the value.
FigureFormat figure_format_of(const std::string& arg, const std::string& path);
// Whether this build draws figures (it has cairo).
bool figures_available();
// Throws ResourceUnavailable naming `what` (the output or option) when this build has no cairo.
void require_figures(const std::string& what);

// The renderer's particle colour (shaders/common.glsl palette of the start point's angle), rgb in [0, 1].
void particle_colour(float x0, float y0, float rgb[3]);

}  // namespace diffscope
