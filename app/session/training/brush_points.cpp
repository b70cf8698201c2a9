// brush_points.cpp — the brush's data set of brush_points.h.
#include "session/training/brush_points.h"

#include <algorithm>
#include <cmath>
#include <random>

namespace diffscope {

void BrushPoints::save_step() {
  if (m_in_stroke && m_stroke_saved) return;
  m_stroke_saved = m_in_stroke;
  m_undo.push_back(m_xy);
  if (int(m_undo.size()) > kMaxUndo) m_undo.erase(m_undo.begin());
}

void BrushPoints::add(double x, double y, double radius, int count) {
  const int64_t n = std::min<int64_t>(std::max(count, 0), kMaxPoints - size());
  if (n <= 0) return;
  save_step();
  std::mt19937_64 rng(0x9e3779b97f4a7c15ull * ++m_dabs);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int64_t i = 0; i < n; ++i) {
    const double r = radius * std::sqrt(u(rng)), a = 2 * M_PI * u(rng);  // uniform in the disc
    m_xy.push_back(float(x + r * std::cos(a)));
    m_xy.push_back(float(y + r * std::sin(a)));
  }
}

int64_t BrushPoints::erase(double x, double y, double radius) {
  std::vector<float> kept;
  kept.reserve(m_xy.size());
  for (size_t i = 0; i + 1 < m_xy.size(); i += 2)
    if (std::hypot(m_xy[i] - x, m_xy[i + 1] - y) > radius) kept.insert(kept.end(), {m_xy[i], m_xy[i + 1]});
  const int64_t removed = size() - int64_t(kept.size() / 2);
  if (removed > 0) {
    save_step();
    m_xy = std::move(kept);
  }
  return removed;
}

bool BrushPoints::undo() {
  if (m_undo.empty()) return false;
  m_xy = std::move(m_undo.back());
  m_undo.pop_back();
  return true;
}

void BrushPoints::clear() {
  if (m_xy.empty()) return;
  save_step();
  m_xy.clear();
}

}  // namespace diffscope
