// renderer.h — draws one frame of the scene with OpenGL 4.3 only: the points of trajectory slot `slot`,
// trails over the previous slots, the data overlay, the field arrows, axes, and for image models the
// image grid beside a 2D projection (PCA of the data). Used by the window, the headless loop and exports.
#pragma once
#include <epoxy/gl.h>

#include <memory>
#include <vector>

#include "diffusion/density.h"
#include "render/gl_program.h"
#include "run/compute_path.h"

namespace diffscope::render {

class ParticlePick;  // render/particle_pick.h
class SplatDraw;     // render/splat.h

struct Camera {
  double cx = 0, cy = 0;  // data units at the center of the scatter rect
  double half_h = 3;      // half the visible height, data units
};

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;  // pixels, GL convention (origin bottom-left)
};

// One colored line vertex in data units (field arrows, overlays).
struct LineVertex {
  float x, y, r, g, b, a;
};

// Pixels of the framebuffer's edges covered by UI panels (GL pixels); the views go in the rest.
struct Insets {
  int left = 0, bottom = 0, top = 0;
};

struct SceneInput {
  const TrajectoryBufferTarget* trajectory = nullptr;
  int B = 0, dim = 0;
  int slot = 0;            // trajectory slot shown
  int trail_slots = 0;     // trails over slots (slot - trail_slots, slot]; 0 = off
  float point_size = 3.0f; // pixels
  float point_alpha = 0.6f;
  bool show_data = true;
  bool show_field = false;
  bool show_axes = true;
  Camera cam;
  bool image_model = false;
  int image_side = 8;
  int grid_cols = 12;
  Insets inset;            // the UI's panels: left controls, bottom dock, top status strip
  // The density view (SEMANTICS §6): points and trails, and/or the samples' 2D histogram over the view through
  // the viridis tone map with its colour bar; contours of the exact density (empty: none).
  bool draw_points = true;
  // How points and trails are drawn (SEMANTICS §6 "Drawing points and trails"): one GL primitive each with
  // alpha blending (false), or the compute splat of render/splat.h (true; a pane whose accumulation image GL
  // cannot bind whole is drawn with the primitives).
  bool splat = false;
  bool draw_density = false;
  bool density_log = true;     // log(1 + c) / log(1 + max), else c / max
  int density_bin_px = 3;      // pixels per bin, each way
  std::vector<IsoGaussian2> contours;
  std::vector<int> picks;  // picked rows, highlighted with their paths (render/particle_pick.h)
  int pick_slots = 1 << 30;  // their paths run over slots [0, pick_slots) (the computed ones)
};

// Where things go in a w x h framebuffer (GL pixels, origin bottom-left): both views inside the part the
// UI does not cover, so no panel hides them.
struct SceneLayout {
  Rect scatter;            // viewport of the 2D view; the camera center is its center
  Rect grid;               // image grid (w = 0 when none)
};

class Renderer {
 public:
  Renderer();  // needs a current GL 4.3 context; throws std::runtime_error on shader errors
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // The 2D projection of dim-dimensional rows: p = ((x - mean) . axis0, (x - mean) . axis1). For dim = 2
  // pass mean 0 and the unit axes (the shader short-cuts dim 2 anyway).
  void set_projection(const std::vector<float>& mean, const std::vector<float>& axis0, const std::vector<float>& axis1);
  // The data overlay: n rows of dim floats.
  void set_data(const float* data, int n, int dim);
  void set_field_lines(const std::vector<LineVertex>& lines) { m_field = lines; m_field_dirty = true; }
  // Image values mapped to black .. white.
  void set_image_range(float lo, float hi) { m_img_lo = lo, m_img_hi = hi; }

  // Insets are clamped (left, bottom: half the framebuffer; top + bottom: three quarters), so the views
  // never vanish.
  static SceneLayout layout(int w, int h, bool image_model, const Insets& inset);
  // Clears and draws the whole scene into the bound framebuffer of size w x h.
  void draw_scene(const SceneInput& in, int w, int h);
  // One pane of the comparison grid: the rect r (GL pixels) cleared to a panel shade, then the 2D view of `in`
  // in it (axes, data overlay, points of in.slot) with in.cam; nothing outside r is touched.
  void draw_pane(const SceneInput& in, const Rect& r);
  // Only the image grid, filling the viewport rect r.
  void draw_image_grid(const SceneInput& in, const Rect& r, int rows);
  static int grid_rows(int B, int cols, int max_rows);
  // Picking (render/particle_pick.h) in the 2D view's projection.
  int pick_nearest(const SceneInput& in, double x, double y, double radius);
  std::vector<float> pick_row_path(const SceneInput& in, int row, int n_slots);

  // The density view's histogram of slot in.slot over `grid` on the GPU (density_bin.comp, from the trajectory
  // buffer; no read-back), and its largest count. draw_scene calls it with the pane's grid (pane_histogram_grid).
  void bin_density(const SceneInput& in, const HistogramGrid& grid);
  // The latest histogram's grid and counts ((ny, nx) row-major, as diffusion/density.h histogram_2d): a blocking
  // read-back, for tests.
  const HistogramGrid& density_grid() const { return m_density_grid; }
  std::vector<uint32_t> density_counts() const;
  // The largest count of a recent histogram the GPU has finished, read without waiting for the GPU (a frame or
  // two late; 0 before the first); the colour bar's labels.
  uint32_t density_max();
  // The latest histogram's largest count, waiting for the GPU (4 bytes read back): for exported pictures.
  uint32_t density_max_wait() const;
  // Where the colour bar goes in a pane (GL pixels): a strip at the right edge, from 8% to 53% of its height.
  static Rect colour_bar_rect(const Rect& pane);
  // The splat pass (render/splat.h): its latest accumulation image, for tests.
  const SplatDraw& splat() const { return *m_splat; }

 private:
  void draw_scatter(const SceneInput& in, const Rect& r);
  // The points of in.slot and their trails, as GL primitives or by the splat (in.splat).
  void draw_samples(const SceneInput& in, const Rect& r, const float view[4]);
  void draw_axes(const SceneInput& in, const float view[4], double aspect);
  void draw_density(const SceneInput& in, const Rect& r, double aspect);
  void draw_colour_bar(const Rect& pane);
  void draw_contours(const SceneInput& in, const Rect& r, const float view[4]);
  void draw_lines(const std::vector<LineVertex>& v, const float view[4], float width);

  GlProgram m_points, m_trails, m_lines, m_grid, m_bin, m_max, m_density, m_contours;
  std::unique_ptr<ParticlePick> m_pick;
  std::unique_ptr<SplatDraw> m_splat;
  GLuint m_vao_empty = 0, m_vao_lines = 0, m_vbo_lines = 0, m_proj = 0, m_data = 0;
  GLuint m_counts = 0, m_edges = 0, m_palette = 0, m_mix = 0, m_max_copy = 0;
  GLsync m_max_fence = nullptr;
  uint32_t m_max_seen = 0;
  size_t m_counts_bytes = 0;
  HistogramGrid m_density_grid;
  int m_data_n = 0, m_proj_dim = 0;
  std::vector<LineVertex> m_field, m_scratch;
  bool m_field_dirty = true;
  float m_img_lo = -1, m_img_hi = 1;
};

}  // namespace diffscope::render
