// trajectory_store.cpp — frame/slot bookkeeping of the trajectory buffer under a memory budget.
#include "base/words.h"
#include "run/trajectory_store.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "base/errors.h"

namespace diffscope {

static int slots_for(int n_steps, int stride) {
  // frames 0, stride, ..., floor(N/stride)*stride, plus N if it is not a multiple.
  int n = n_steps / stride + 1;
  if (n_steps % stride != 0) ++n;
  return n;
}

TrajectoryLayout TrajectoryLayout::make(int n_steps, int B, int dim, size_t budget_bytes) {
  if (n_steps < 1 || B < 1 || dim < 1) {
    std::ostringstream m;
    m << "trajectory layout: steps = " << n_steps << ", B = " << B << ", dim = " << dim << "; each must be >= 1";
    throw InvalidInput(m.str());
  }
  TrajectoryLayout l;
  l.n_steps = n_steps;
  l.B = B;
  l.dim = dim;
  const size_t frame = l.frame_bytes();
  const size_t max_slots = std::max<size_t>(2, budget_bytes / std::max<size_t>(frame, 1));
  int stride = 1;
  while (stride < n_steps && static_cast<size_t>(slots_for(n_steps, stride)) > max_slots) ++stride;
  l.stride = stride;
  l.n_slots = slots_for(n_steps, stride);
  return l;
}

int TrajectoryLayout::slot_of_frame(int j) const {
  if (j < 0 || j > n_steps) return -1;
  if (j % stride == 0) return j / stride;
  if (j == n_steps) return n_slots - 1;
  return -1;
}

int TrajectoryLayout::frame_of_slot(int s) const {
  if (s >= n_slots - 1) return n_steps;
  return s * stride;
}

int TrajectoryLayout::slot_at_or_before(int j) const {
  j = std::clamp(j, 0, n_steps);
  if (j == n_steps) return n_slots - 1;
  return j / stride;
}

std::string TrajectoryLayout::describe() const {
  std::ostringstream m;
  m.precision(1);
  m << std::fixed;
  const double mb = total_bytes() / 1048576.0;
  if (stride == 1)
    m << count_noun(n_slots, "frame") << ", " << mb << " MB";
  else
    m << "one frame in " << stride << " of " << (n_steps + 1) << " (" << n_slots << " kept, " << mb
      << " MB: over the memory budget)";
  return m.str();
}

void TrajectoryStore::reset(const TrajectoryLayout& layout) {
  m_layout = layout;
  m_data.assign(layout.frame_floats() * layout.n_slots, 0.0f);
}

int TrajectoryStore::store_frame(int j, const float* x) {
  const int s = m_layout.slot_of_frame(j);
  if (s >= 0) std::memcpy(slot(s), x, m_layout.frame_bytes());
  return s;
}

}  // namespace diffscope
