// start_edit.h — particles picked in the 2D view and starts edited by hand (SEMANTICS §6 "Picked particles and
// edited starts"): the rows a user pinned, the rows whose start state replaces the run's start noise, their text
// form (settings keys `picks`, `start_edits`) and the one-row run that recomputes an edited row's trajectory
// through the run's step table.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "base/ranges.h"
#include "diffusion/step_table.h"
#include "model/model.h"
#include "run/trajectory_store.h"

namespace diffscope {

constexpr IntRange kPickRowRange{0, 999'999};  // a row index (n is at most 1,000,000)
constexpr int kMaxPicks = 64;                  // pinned particles and edited starts, each

// Row `row`'s start state (frame 0) replaced by `x` (dim floats, the model's own state space).
struct StartEdit {
  int row = 0;
  std::vector<float> x;
  bool operator==(const StartEdit& o) const { return row == o.row && x == o.x; }
  bool operator!=(const StartEdit& o) const { return !(*this == o); }
};

// "3,17,40": the pinned rows in pin order. Parses the same form ("" or "none": no rows); throws InvalidInput
// naming `arg` for a word that is not an integer in kPickRowRange, a repeated row or more than kMaxPicks rows.
std::string picks_text(const std::vector<int>& rows);
std::vector<int> parse_picks(const std::string& arg, const std::string& text);

// "3:0.5,-1.25;17:2,0": each edit as ROW:X0,X1,... (floats written as their shortest text, so they read back
// bit for bit), ';' between edits. Parses the same form ("" or "none": no edits); throws InvalidInput naming `arg`
// for a malformed edit, a row outside kPickRowRange, a value that is not finite, a repeated row, edits of
// different lengths or more than kMaxPicks edits.
std::string start_edits_text(const std::vector<StartEdit>& edits);
std::vector<StartEdit> parse_start_edits(const std::string& arg, const std::string& text);

// `edits` with row `row`'s start set to x (added, or replaced in place).
std::vector<StartEdit> with_start_edit(std::vector<StartEdit> edits, int row, const std::vector<float>& x);

// The kept frames of row `row` of a run started from `start` (dim floats): one row through `table` on the CPU
// reference backend (fp32), its noise keyed by the row's own Philox counter (row_offset = row, SEMANTICS §7), so
// that it is the row the whole run computes from that start. Returns (layout.n_slots, dim) floats, slot s holding
// frame layout.frame_of_slot(s); slot 0 is `start`.
std::vector<float> run_one_row(const DiffusionModel& model, const StepTable& table, const TrajectoryLayout& layout,
                               uint64_t seed, int row, const float* start);

}  // namespace diffscope
