// test_train_panel.cpp — the training panel in the headless app on the CPU backend (Mesa EGL), driven by script
// lines: points drawn with the brush, a few hundred CPU steps, the loss falling and the preview's samples (the main
// view's run through the kept EMA weights, same noise) moving onto the drawn discs — measured here from the
// exported states; the brush's undo (Ctrl+Z, not while a text field has the keyboard); bad data refused with a
// message.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "formats/npy.h"
#include "formats/safetensors.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

struct Disc {
  double x, y, r;
};

// The mean over samples of the distance to the nearest disc (0 inside one).
double mean_distance(const NpyFloat& s, const std::vector<Disc>& discs) {
  double total = 0;
  const int64_t n = s.shape[0];
  for (int64_t i = 0; i < n; ++i) {
    double best = std::numeric_limits<double>::infinity();
    for (const Disc& d : discs)
      best = std::min(best, std::max(0.0, std::hypot(s.data[2 * i] - d.x, s.data[2 * i + 1] - d.y) - d.r));
    total += best;
  }
  return total / double(n);
}

// A number after `"key": ` in the output's train JSON line.
double json_number(const std::string& out, const std::string& key) {
  const size_t at = out.rfind("\"" + key + "\": ");
  return at == std::string::npos ? std::nan("") : std::stod(out.substr(at + key.size() + 4));
}

class TrainPanel : public guitest::AppFixture {};

TEST_F(TrainPanel, DrawnPointsAreLearntTheLossFallsAndThePreviewMovesOntoTheDiscs) {
  const std::vector<Disc> discs = {{-1, 0, 0.25}, {1, 0.8, 0.25}};
  const guitest::Result r = run_gui(
      "model " + guitest::model_2d() + "\nset n 400\nset steps 20\nset trail_frames 0\n"
      "brush -1 0 0.25 200\nbrush 1 0.8 0.25 200\n"
      "train_set steps 1000\ntrain_set batch 256\ntrain_set hidden 64\ntrain_set lr 0.003\ntrain_set preview_every 100\n"
      "train start\ntrain wait\n"
      "train checkpoint 0\nwait_complete 5000\nexport state " + file("early.npy") + "\n"
      "train checkpoint -1\nwait_complete 5000\nexport state " + file("late.npy") + "\n"
      "train save " + file("m.safetensors") + "\n");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.out, "\"checkpoints\": [100,200,300,400,500,600,700,800,900,1000]")) << r.out;
  EXPECT_LT(json_number(r.out, "loss_last"), 0.6 * json_number(r.out, "loss_first")) << r.out;
  const NpyFloat early = read_npy_float(file("early.npy"), "early"), late = read_npy_float(file("late.npy"), "late");
  ASSERT_EQ(late.shape, (std::vector<int64_t>{400, 2}));
  const double d_early = mean_distance(early, discs), d_late = mean_distance(late, discs);
  EXPECT_LT(d_late, 0.5 * d_early) << d_early << " -> " << d_late;
  EXPECT_LT(d_late, 0.15);
  // The saved file is the CLI's: its EMA weights after 1000 steps, the drawn data unnormalised (the brush's
  // coordinates are the view's), and the checkpoint beside it.
  const SafetensorsFile f = SafetensorsFile::open(file("m.safetensors"));
  EXPECT_EQ(f.metadata().at("training_steps"), "1000");
  EXPECT_EQ(f.metadata().at("normalization"), "none");
  EXPECT_EQ(f.metadata().at("prediction_type"), "epsilon");
  EXPECT_TRUE(std::filesystem::exists(file("m.ckpt.safetensors")));
}

// The previews are temporary model files: the settings file keeps the model shown before training.
TEST_F(TrainPanel, TheSettingsFileKeepsTheModelFromBeforeTheTrainingPreviews) {
  auto run_in = [&](const std::string& cfg, const std::string& lines) {
    write("s.txt", "model moons_flow\n" + lines);
    const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --config-dir '" + dir.path() + "/" +
                                                   cfg + "' --size 640x480 --script '" + file("s.txt") + "'",
                                               logs.path());
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    return r;
  };
  const guitest::Result r = run_in("trained", "brush 0 0 0.5 100\ntrain_set steps 20\ntrain_set batch 16\n"
                                              "train_set hidden 64\ntrain_set preview_every 10\ntrain start\ntrain wait\n");
  EXPECT_TRUE(has(r.out, "\"checkpoints\": [10,20]")) << r.out;
  run_in("plain", "frames 2\n");
  const auto model = [&](const std::string& cfg) {
    return sidecar(dir.path() + "/" + cfg + "/settings.json")["sampling"]["model_path"];
  };
  EXPECT_EQ(model("trained"), model("plain"));
  EXPECT_NE(model("plain"), "");
}

TEST_F(TrainPanel, CtrlZUndoesTheLastBrushStepButNotWhileATextFieldHasTheKeyboard) {
  const guitest::Result r = run_gui("model " + guitest::model_2d() +
                                    "\nbrush 0 0 0.5 100\nbrush 1 1 0.2 50\nbrush_erase 0 0 10\n"
                                    "key Z ctrl\ntrain print\n"            // the erase undone: 150
                                    "click model_path\nkey Z ctrl\ntrain print\n"  // typing: still 150
                                    "key Z ctrl\n");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const size_t first = r.out.find("\"brush_points\": "), second = r.out.find("\"brush_points\": ", first + 1);
  ASSERT_NE(second, std::string::npos) << r.out;
  EXPECT_EQ(std::stoi(r.out.substr(first + 16)), 150) << r.out;
  EXPECT_EQ(std::stoi(r.out.substr(second + 16)), 150) << r.out;
  const guitest::Result u = run_gui("brush 0 0 0.5 100\nbrush 1 1 0.2 50\nbrush_undo\ntrain print\nbrush_undo\n"
                                    "train print\nbrush_undo\n");
  EXPECT_NE(u.code, 0);  // the third undo has nothing to undo
  EXPECT_TRUE(has(u.out, "\"brush_points\": 100")) << u.out;
  EXPECT_TRUE(has(u.out, "\"brush_points\": 0")) << u.out;
  EXPECT_TRUE(has(u.out, "brush: nothing to undo")) << u.out;
}

TEST_F(TrainPanel, BadDataIsRefusedWithAMessageAndNoRunStarts) {
  std::vector<float> rows = {0, 1, 2, 3, 4, 5, 6, 7};
  rows[5] = std::nanf("");
  write_npy_float(file("nan.npy"), {4, 2}, rows.data(), "test");
  write_npy_float(file("flat.npy"), {8}, rows.data(), "test");
  const guitest::Result r = run_gui("train_data npy " + file("nan.npy") + "\ntrain start\ntrain_data npy " +
                                    file("flat.npy") + "\ntrain start\ntrain_data brush\ntrain start\ntrain print\n");
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.out, "script:2: error: npy " + file("nan.npy"))) << r.out;
  EXPECT_TRUE(has(r.out, "row 2")) << r.out;
  EXPECT_TRUE(has(r.out, "script:4: error: npy " + file("flat.npy") + " has 1 dimensions; valid: a 2-D array")) << r.out;
  EXPECT_TRUE(has(r.out, "script:6: error: brush: 0 points drawn; valid: at least 2")) << r.out;
  EXPECT_TRUE(has(r.out, "\"step\": 0, \"total\": 0")) << r.out;
  const guitest::Result bad = run_gui("train_set hidden 32\n");
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(has(bad.err + bad.out, "hidden = 32 is out of range; valid: an integer in [64, 512]")) << bad.err;
}

}  // namespace
}  // namespace diffscope
