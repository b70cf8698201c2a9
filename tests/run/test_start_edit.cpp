// test_start_edit.cpp — the picked rows' and edited starts' text forms (run/start_edit.h) and the one-row run of
// an edited start: it is the row the whole batch computes from that start up to float rounding, noise included (a
// stochastic solver keys a row's noise by its own Philox counter, SEMANTICS §7).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/errors.h"
#include "model_fixtures.h"
#include "run/backend.h"
#include "run/run_plan.h"
#include "run/start_edit.h"

namespace diffscope {
namespace {

TEST(StartEdit, TextFormsReadBackBitForBit) {
  const std::vector<StartEdit> edits{{3, {0.1f, -1e-7f}}, {999'999, {2.0f, 3.4028235e38f}}};
  EXPECT_EQ(start_edits_text(edits), "3:0.1,-1e-07;999999:2,3.4028235e+38");
  const std::vector<StartEdit> back = parse_start_edits("start_edits", start_edits_text(edits));
  ASSERT_EQ(back.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(back[k].row, edits[k].row);
    EXPECT_EQ(std::memcmp(back[k].x.data(), edits[k].x.data(), 2 * sizeof(float)), 0);
  }
  EXPECT_EQ(parse_picks("picks", picks_text({40, 3, 17})), (std::vector<int>{40, 3, 17}));
  EXPECT_TRUE(parse_picks("picks", "none").empty());
  EXPECT_TRUE(parse_start_edits("start_edits", "").empty());
}

TEST(StartEdit, MalformedValuesAreRefusedNamingTheKeyAndTheValue) {
  const auto refused = [](const std::string& key, const std::string& text, const std::string& part) {
    try {
      key == "picks" ? (void)parse_picks(key, text) : (void)parse_start_edits(key, text);
      ADD_FAILURE() << text << " accepted";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  refused("picks", "3,x", "picks = '3,x': 'x' is not a row in [0, 999999]");
  refused("picks", "1000000", "'1000000' is not a row in [0, 999999]");
  refused("picks", "3,3", "row 3 is given twice");
  refused("picks", "1,", "'' is not a row");
  std::string many;
  for (int i = 0; i <= kMaxPicks; ++i) many += (i ? "," : "") + std::to_string(i);
  refused("picks", many, "65 rows; valid: at most 64");
  refused("start_edits", "3", "'3' is not ROW:X0,X1,...");
  refused("start_edits", "3:0,nan", "'nan' is not a finite number");
  refused("start_edits", "3:0,1;4:0", "the edits have different lengths (2 and 1)");
  refused("start_edits", "3:0,1;3:1,1", "row 3 is given twice");
}

TEST(StartEdit, OneRowRunIsTheRowTheBatchComputesFromThatStart) {
  const DiffusionModel model = test::random_model(2, 32, 7);
  SampleRequest r;
  r.sampler = Sampler::Ddim;
  r.eta = 1.0;  // stochastic: every step draws the row's noise
  r.steps = 12;
  r.n = 8;
  r.seed = 11;
  const StepTable table = plan_run(r, model).table;
  const int n = table.steps(), B = 8, dim = 2, row = 5;
  std::vector<float> x = test::random_values(size_t(B) * dim, 3), start(x.begin() + row * dim, x.begin() + (row + 1) * dim);
  std::vector<float> frames(size_t(n) * B * dim), prev(table.uses_prev() ? x.size() : 0, 0.f);
  make_cpu_backend()->run_steps(model, table, 0, n, x.data(), B, r.seed, frames.data(), Precision::Fp32, 0,
                                prev.empty() ? nullptr : prev.data());
  const TrajectoryLayout layout = TrajectoryLayout::make(n, B, dim, size_t(1) << 30);
  const std::vector<float> one = run_one_row(model, table, layout, r.seed, row, start.data());
  ASSERT_EQ(one.size(), size_t(layout.n_slots) * dim);
  EXPECT_EQ(std::memcmp(one.data(), start.data(), dim * sizeof(float)), 0);
  // The same up to float rounding (the CPU reference's matrix products round differently at B = 1 than at B = 8);
  // another row's noise would be off by the noise's own size (eta 1: sigma of order 1 at every step).
  const std::vector<float> other = run_one_row(model, table, layout, r.seed, row + 1, start.data());
  double worst = 0, other_gap = 0;
  for (int j = 1; j <= n; ++j)
    for (int d = 0; d < dim; ++d) {
      const double batch = frames[(size_t(j - 1) * B + row) * dim + d];
      worst = std::max(worst, std::abs(one[size_t(j) * dim + d] - batch) / std::max(1.0, std::abs(batch)));
      other_gap = std::max(other_gap, std::abs(other[size_t(j) * dim + d] - batch));
    }
  EXPECT_LT(worst, 1e-5);
  EXPECT_GT(other_gap, 0.1);
}

}  // namespace
}  // namespace diffscope
