// particle_pick.h — picking a particle in the 2D view and drawing the picked ones (SEMANTICS §6 "Picked
// particles and edited starts"), on the GL trajectory buffer itself whatever the backend: a compute shader finds
// the nearest row of the shown slot (two passes, 8 bytes read back), another gathers one row's path across the
// slots (2 floats a slot read back), and the highlight is drawn from the buffer. No frame is read back.
#pragma once
#include <epoxy/gl.h>

#include <vector>

#include "render/gl_program.h"
#include "run/compute_path.h"

namespace diffscope::render {

struct SceneInput;

// The pick radius: a click picks the nearest sample within this many pixels (at UI scale 1) of it.
constexpr double kPickRadiusPx = 8.0;

class ParticlePick {
 public:
  ParticlePick();  // needs a current GL 4.3 context; throws std::runtime_error on shader errors
  ~ParticlePick();
  ParticlePick(const ParticlePick&) = delete;
  ParticlePick& operator=(const ParticlePick&) = delete;

  // The row of slot `in.slot` nearest to (x, y) (the 2D view's data units) within `radius` (data units); -1 when
  // none is within it. Ties go to the lowest row. `proj` is the renderer's projection buffer (dim > 2).
  int nearest(const SceneInput& in, GLuint proj, double x, double y, double radius);
  // Row `row`'s 2D position in slots 0 .. n_slots - 1: (n_slots, 2) floats.
  std::vector<float> row_path(const SceneInput& in, GLuint proj, int row, int n_slots);
  // The picked rows' paths over slots [0, in.pick_slots), their shown point and their start (slot 0); the
  // trajectory and projection buffers bound, the viewport the 2D view's.
  void draw(const SceneInput& in, const float view[4]);

 private:
  GLuint m_nearest = 0, m_path = 0, m_result = 0;
  GlProgram m_lines, m_points;
};

}  // namespace diffscope::render
