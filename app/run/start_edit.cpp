// start_edit.cpp — the one-row run of an edited start (start_edit.h); the text forms are start_edit_text.cpp.
#include "run/start_edit.h"

#include "run/backend.h"

namespace diffscope {

std::vector<StartEdit> with_start_edit(std::vector<StartEdit> edits, int row, const std::vector<float>& x) {
  for (StartEdit& e : edits)
    if (e.row == row) {
      e.x = x;
      return edits;
    }
  edits.push_back({row, x});
  return edits;
}

std::vector<float> run_one_row(const DiffusionModel& model, const StepTable& table, const TrajectoryLayout& layout,
                               uint64_t seed, int row, const float* start) {
  const int dim = layout.dim, n = table.steps();
  std::vector<float> x(start, start + dim), frames(static_cast<size_t>(n) * dim), prev(table.uses_prev() ? dim : 0, 0.f);
  make_cpu_backend()->run_steps(model, table, 0, n, x.data(), 1, seed, frames.data(), Precision::Fp32,
                                static_cast<uint32_t>(row), prev.empty() ? nullptr : prev.data());
  std::vector<float> out(static_cast<size_t>(layout.n_slots) * dim);
  for (int s = 0; s < layout.n_slots; ++s) {
    const int j = layout.frame_of_slot(s);
    const float* src = j == 0 ? start : frames.data() + static_cast<size_t>(j - 1) * dim;
    std::copy(src, src + dim, out.begin() + static_cast<size_t>(s) * dim);
  }
  return out;
}

}  // namespace diffscope
