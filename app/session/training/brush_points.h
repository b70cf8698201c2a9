// brush_points.h — a 2D data set drawn with a brush (the training panel's "brush" source; SEMANTICS §11 "The
// training panel"): dabs of points added uniformly in a disc, points erased inside a disc, and undo.
#pragma once
#include <cstdint>
#include <vector>

namespace diffscope {

class BrushPoints {
 public:
  // Most points a drawing holds (a dab past it adds only up to it) and most undo steps kept.
  static constexpr int64_t kMaxPoints = 100000;
  static constexpr int kMaxUndo = 256;

  // Adds `count` points uniform in the disc of `radius` around (x, y) (a counter-seeded stream: the same dabs give
  // the same points). One undo step.
  void add(double x, double y, double radius, int count);
  // Removes the points within `radius` of (x, y); returns how many. One undo step when any.
  int64_t erase(double x, double y, double radius);
  // A stroke: later add/erase calls until end_stroke() share the undo step of the first.
  void begin_stroke() { m_in_stroke = true, m_stroke_saved = false; }
  void end_stroke() { m_in_stroke = false; }
  // Back to before the last step; false when there is none.
  bool undo();
  void clear();  // one undo step when there were points
  int64_t size() const { return int64_t(m_xy.size() / 2); }
  const std::vector<float>& xy() const { return m_xy; }  // (size(), 2) row-major
  int undo_depth() const { return int(m_undo.size()); }

 private:
  void save_step();
  std::vector<float> m_xy;
  std::vector<std::vector<float>> m_undo;
  uint64_t m_dabs = 0;  // the stream's counter
  bool m_in_stroke = false, m_stroke_saved = false;
};

}  // namespace diffscope
