// splat.h — points and trails drawn by a compute splat (SEMANTICS §6 "Drawing points and trails", draw_mode splat):
// compute shaders read the trajectory buffer (the CUDA-GL interop buffer on the GPU backend; nothing is read back)
// and add every fragment of every point and trail segment into an accumulation image of the pane with integer
// atomics (shaders/splat.glsl), a pass takes the exposure's statistics (splat_exposure.comp), then a resolve pass
// tone-maps the image over the pane (splat_resolve.frag). The sums do not depend on the
// order the GPU runs the rows in, so neither does the picture.
#pragma once
#include <epoxy/gl.h>

#include <cstdint>
#include <vector>

#include "render/gl_program.h"

namespace diffscope::render {

struct SceneInput;
struct Rect;

class SplatDraw {
 public:
  SplatDraw();  // needs a current GL 4.3 context; throws std::runtime_error on shader errors
  ~SplatDraw();
  SplatDraw(const SplatDraw&) = delete;
  SplatDraw& operator=(const SplatDraw&) = delete;

  // The bytes of the accumulation image of a w x h pane (8 uint32 a pixel), and whether GL can bind it whole
  // (GL_MAX_SHADER_STORAGE_BLOCK_SIZE: 128 MB on llvmpipe, about 2048 x 2048 pixels); a pane that does not fit is
  // drawn with the GL primitives (Renderer::draw_samples).
  static size_t image_bytes(int w, int h);
  static bool fits(int w, int h);
  // Accumulates the trails over `trail` slots (0: none) and the points of in.slot for the pane r (view as the
  // shaders' u_view), with the trajectory (SSBO 0) and projection (SSBO 2) bound; no drawing.
  void accumulate(const SceneInput& in, const Rect& r, const float view[4], int trail);
  // Blends the accumulated image over the pane r of the bound framebuffer (viewport r).
  void resolve(const Rect& r);
  // The latest accumulation image, (h, w, 2, 4) uint32, row 0 the bottom, layer 0 the trails and 1 the points, each
  // (r, g, b, depth) in 1/4096 (shaders/splat.glsl): a blocking
  // read-back, for tests.
  std::vector<uint32_t> accumulation() const;
  static constexpr double kFixed = 4096.0;  // fixed-point units per 1.0 (shaders/splat.glsl kSplatFixed)

 private:
  GlProgram m_points, m_trails, m_exposure, m_resolve;
  GLuint m_accum = 0, m_hist = 0, m_vao = 0;
  size_t m_bytes = 0;
};

}  // namespace diffscope::render
