// trajectory_store.h — the sampling trajectory [frame][row][dim] float32 under a memory budget
// (ARCHITECTURE.md "One frame, as data"; SEMANTICS §3 "Trajectories").
// Frame j is the state after j steps (frame 0 = start). When all N+1 frames do not fit in the budget,
// only frames 0, k, 2k, ... and always the last one are kept ("slots"); the layout says which.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace diffscope {

// Which frames of an N-step run occupy which slot of a (n_slots, B, dim) buffer.
struct TrajectoryLayout {
  int n_steps = 0;   // N: frames 0..N
  int B = 0, dim = 0;
  int stride = 1;    // keep frames 0, stride, 2 stride, ... and frame N
  int n_slots = 0;

  // Chooses the smallest stride whose slots fit in budget_bytes (at least frames 0 and N are kept, even
  // above the budget). Throws InvalidInput for n_steps < 1, B < 1 or dim < 1.
  static TrajectoryLayout make(int n_steps, int B, int dim, size_t budget_bytes);

  size_t frame_floats() const { return static_cast<size_t>(B) * dim; }
  size_t frame_bytes() const { return frame_floats() * sizeof(float); }
  size_t total_bytes() const { return frame_bytes() * n_slots; }
  bool all_frames() const { return stride == 1; }
  // Slot holding frame j, or -1 when frame j is not kept.
  int slot_of_frame(int j) const;
  // Frame held by slot s.
  int frame_of_slot(int s) const;
  // The last kept slot whose frame is <= j (j clamped to [0, N]).
  int slot_at_or_before(int j) const;
  // A line for the UI, e.g. "1001 frames, 512.5 MB" or "every 4th frame of 1001 (budget 256 MB)".
  std::string describe() const;
  bool operator==(const TrajectoryLayout& o) const {
    return n_steps == o.n_steps && B == o.B && dim == o.dim && stride == o.stride && n_slots == o.n_slots;
  }
  bool operator!=(const TrajectoryLayout& o) const { return !(*this == o); }
};

// A host copy of the kept frames, filled as steps complete (CPU path, staging, export).
class TrajectoryStore {
 public:
  void reset(const TrajectoryLayout& layout);
  const TrajectoryLayout& layout() const { return m_layout; }
  float* slot(int s) { return m_data.data() + static_cast<size_t>(s) * m_layout.frame_floats(); }
  const float* slot(int s) const { return m_data.data() + static_cast<size_t>(s) * m_layout.frame_floats(); }
  // Stores frame j (B*dim floats) if the layout keeps it; returns its slot or -1.
  int store_frame(int j, const float* x);
  const std::vector<float>& data() const { return m_data; }

 private:
  TrajectoryLayout m_layout;
  std::vector<float> m_data;
};

}  // namespace diffscope
