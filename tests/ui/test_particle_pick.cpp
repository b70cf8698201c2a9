// test_particle_pick.cpp — picking a particle in the headless app on the CPU backend (Mesa EGL): a pick at a
// sample's position finds the row a brute-force nearest search over the exported state finds; nothing within the
// pick radius picks nothing; the picks and edited starts go into the snapshot's sidecar and come back on restore;
// an edited start re-runs only its row, which equals a one-row `sample` run from that start.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "formats/npy.h"
#include "gui_test_util.h"
#include "run/start_edit.h"
#include "io_test_util.h"

namespace diffscope {
namespace {

class ParticlePick : public guitest::AppFixture {
 protected:
  // The same run each time: 1500 samples, 20 ddim steps (eta 0: no noise after the start) of the 2D model.
  std::string run_prefix() const {
    return "model " + guitest::model_2d() + "\nset n 1500\nset steps 20\nset trail_frames 0\nwait_complete 5000\n";
  }
  guitest::Result run_ok(const std::string& text) {
    guitest::Result r = run_gui(run_prefix() + text);
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    return r;
  }
};

TEST_F(ParticlePick, APickAtASamplesPositionFindsTheNearestRowOfTheExportedState) {
  run_ok("export state " + file("state.npy") + "\n");
  const NpyFloat st = read_npy_float(file("state.npy"), "state");
  ASSERT_EQ(st.shape, (std::vector<int64_t>{1500, 2}));
  // A point just beside sample 321; the nearest row to it, brute force in float64.
  const double px = st.data[2 * 321] + 1e-3, py = st.data[2 * 321 + 1] - 1e-3;
  int expected = -1;
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 1500; ++i) {
    const double d = std::hypot(st.data[2 * i] - px, st.data[2 * i + 1] - py);
    if (d < best) best = d, expected = i;
  }
  char pick[96];
  std::snprintf(pick, sizeof pick, "pick %.9g %.9g\n", px, py);
  const guitest::Result r = run_ok(std::string(pick) + "reset_counts\npick 50 50 add\nexpect readbacks == 0\n"
                                   "export snapshot " + file("p.png") + "\n");
  EXPECT_TRUE(has(r.out, "picked sample " + std::to_string(expected) + " (the search over 1500 samples took ")) << r.out;
  EXPECT_TRUE(has(r.out, "no sample within 8 px of (50, 50)")) << r.out;  // and the picks stay as they were
  EXPECT_EQ(sidecar(file("p.json"))["view"]["picks"], std::to_string(expected));
  // `sample --config` draws the picked sample's path as the app did, pixel for pixel.
  const guitest::Result s = guitest::run_cli("sample --config '" + file("p.png") + "' --png '" + file("q.png") +
                                                 "' --out '" + file("q.npy") + "'", logs.path());
  ASSERT_EQ(s.code, 0) << s.err;
  const guitest::Png app = guitest::read_png(file("p.png")), cli = guitest::read_png(file("q.png"));
  ASSERT_GT(app.w, 0);
  EXPECT_TRUE(app.w == cli.w && app.h == cli.h && app.rgb == cli.rgb);
}

// With the panels hidden (H) the 2D view fills the 640x480 frame: data (x, y) is at ImGui pixel (320 + (x - cx) s,
// 240 - (y - cy) s), s = 240 / half_h, with the camera of the snapshot's sidecar.
struct ViewMap {
  double cx, cy, s;
  explicit ViewMap(const nlohmann::json& sc)
      : cx(sc["view"]["cam_x"].get<double>()), cy(sc["view"]["cam_y"].get<double>()),
        s(240.0 / sc["view"]["cam_half_h"].get<double>()) {}
  std::string at(double x, double y) const {
    char b[64];
    std::snprintf(b, sizeof b, "%.3f %.3f", 320 + (x - cx) * s, 240 - (y - cy) * s);
    return b;
  }
};

TEST_F(ParticlePick, AClickPicksTheSampleUnderItAndADragMovesAPickedStart) {
  run_ok("key H\nframes 3\nexport state " + file("state.npy") + "\nexport trajectory " + file("traj.npy") +
         "\nexport snapshot " + file("v.png") + "\n");
  const ViewMap m(sidecar(file("v.json")));
  const NpyFloat st = read_npy_float(file("state.npy"), "state"), tr = read_npy_float(file("traj.npy"), "traj");
  const std::string at = m.at(st.data[2 * 600], st.data[2 * 600 + 1]);
  int expected = -1;  // the nearest row to the pixel's centre is 600 unless another shares the pixel
  double best = std::numeric_limits<double>::infinity();
  for (int i = 0; i < 1500; ++i) {
    const double d = std::hypot(st.data[2 * i] - st.data[2 * 600], st.data[2 * i + 1] - st.data[2 * 600 + 1]);
    if (d < best) best = d, expected = i;
  }
  // Sample 900's start (frame 0) dragged to the point (1, -2): its start moves there, within a pixel.
  const std::string from = m.at(tr.data[2 * 900], tr.data[2 * 900 + 1]), to = m.at(1.0, -2.0);
  run_ok("key H\nframes 3\nmouse " + at + "\nmouse " + at + " down\nmouse " + at + " up\nexport snapshot " +
         file("c.png") + "\npin 900\nmouse " + from + "\nmouse " + from + " down\nmouse " + to + " down\nmouse " +
         to + " up\nframes 2\nexport snapshot " + file("d.png") + "\n");
  EXPECT_EQ(sidecar(file("c.json"))["view"]["picks"], std::to_string(expected));
  const nlohmann::json d = sidecar(file("d.json"));
  EXPECT_EQ(d["view"]["picks"], std::to_string(expected) + ",900");
  const std::vector<StartEdit> edits = parse_start_edits("start_edits", d["view"]["start_edits"].get<std::string>());
  ASSERT_EQ(edits.size(), 1u) << d["view"]["start_edits"];
  EXPECT_EQ(edits[0].row, 900);
  EXPECT_NEAR(edits[0].x[0], 1.0, 1.0 / m.s);
  EXPECT_NEAR(edits[0].x[1], -2.0, 1.0 / m.s);
}

TEST_F(ParticlePick, PicksAndEditedStartsPersistThroughTheSidecar) {
  run_ok("pin 3\npin 1499\nunpin 3\npin 9\nmove_start 9 1.5 -0.25\nexport snapshot " + file("a.png") + "\n");
  const nlohmann::json a = sidecar(file("a.json"));
  EXPECT_EQ(a["view"]["picks"], "1499,9");
  EXPECT_EQ(a["view"]["start_edits"], "9:1.5,-0.25");
  // A fresh app restores the PNG (its text chunk): the same picks and starts, in the next snapshot's sidecar.
  const guitest::Result r = run_gui("restore " + file("a.png") + "\nwait_complete 5000\nexport snapshot " +
                                    file("b.png") + "\n");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json b = sidecar(file("b.json"));
  EXPECT_EQ(b["view"]["picks"], "1499,9");
  EXPECT_EQ(b["view"]["start_edits"], "9:1.5,-0.25");
  // Bad values are refused with the key, the value and the valid range (exit 2).
  const guitest::Result bad = run_gui("set picks 3,x\n");
  EXPECT_EQ(bad.code, 2);
  EXPECT_TRUE(has(bad.out + bad.err, "picks = '3,x': 'x' is not a row in [0, 999999]")) << bad.out << bad.err;
}

TEST_F(ParticlePick, AnEditedStartReRunsOnlyItsRowAsAOneRowRunFromThatStart) {
  run_ok("export trajectory " + file("t0.npy") + "\nmove_start 7 0.75 -1.5\nexport trajectory " + file("t1.npy") +
         "\nset start_edits none\nwait_complete 5000\nexport trajectory " + file("t2.npy") + "\n");
  const NpyFloat t0 = read_npy_float(file("t0.npy"), "t0"), t1 = read_npy_float(file("t1.npy"), "t1");
  // Taking the edit back runs the row from its own start again: the first trajectory, byte for byte.
  EXPECT_EQ(read_npy_float(file("t2.npy"), "t2").data, t0.data);
  ASSERT_EQ(t0.shape, (std::vector<int64_t>{21, 1500, 2}));
  ASSERT_EQ(t1.shape, t0.shape);
  size_t other_rows_differ = 0;
  for (size_t i = 0; i < t0.data.size(); ++i)
    if ((i / 2) % 1500 != 7) other_rows_differ += std::memcmp(&t0.data[i], &t1.data[i], sizeof(float)) != 0;
  EXPECT_EQ(other_rows_differ, 0u);
  // The row against `diffscope sample` of one sample from that start (ddim with eta 0 draws no noise after it).
  const float start[2] = {0.75f, -1.5f};
  write_npy_float(file("start.npy"), {1, 2}, start, "start");
  const guitest::Result s = guitest::run_cli("sample --backend cpu --model '" + guitest::model_2d() +
                                                 "' --n 1 --steps 20 --noise '" + file("start.npy") + "' --out '" +
                                                 file("one.npy") + "' --trajectory '" + file("one_traj.npy") + "'",
                                             logs.path());
  ASSERT_EQ(s.code, 0) << s.err;
  const NpyFloat one = read_npy_float(file("one_traj.npy"), "one");
  ASSERT_EQ(one.shape, (std::vector<int64_t>{21, 1, 2}));
  for (int j = 0; j < 21; ++j)
    for (int d = 0; d < 2; ++d)
      EXPECT_EQ(t1.data[(size_t(j) * 1500 + 7) * 2 + d], one.data[size_t(j) * 2 + d]) << "frame " << j << " dim " << d;
}

TEST_F(ParticlePick, MoveStartOnAModelOfAnotherDimensionFailsTheRun) {
  const guitest::Result r = run_gui("model digits8x8\nset n 16\nset steps 2\nwait_complete 5000\nmove_start 3 1 1\n");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(has(r.err, "move_start: the model has dim 64; a start is moved on 2D models only")) << r.err;
}

// pin / move_start of a row the run does not have fail the line (exit 2), naming the index and the valid rows; the
// picks and edited starts are left as they were.
TEST_F(ParticlePick, PinAndMoveStartOfARowBeyondNFail) {
  for (const char* line : {"pin 1500", "move_start 1500 0.5 0.5", "pin 99999"}) {
    const guitest::Result r = run_gui(run_prefix() + "pin 3\n" + line + "\nexport snapshot " + file("p.png") + "\n");
    EXPECT_EQ(r.code, 2) << line << "\n" << r.out << r.err;
    const std::string cmd = std::string(line).substr(0, std::string(line).find(' '));
    const std::string index = std::string(line).substr(cmd.size() + 1, std::string(line).find(' ', cmd.size() + 1) - cmd.size() - 1);
    EXPECT_TRUE(has(r.err, cmd + ": INDEX = " + index + " is not a sample of the run: valid [0, 1499] (n = 1500)"))
        << line << "\n" << r.err;
    const nlohmann::json j = sidecar(file("p.json"));
    EXPECT_EQ(j["view"]["picks"], "3") << line;
    EXPECT_EQ(j["view"]["start_edits"], "") << line;
  }
}

TEST_F(ParticlePick, SampleRefusesEditedStartsItDoesNotRun) {
  const guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + guitest::model_2d() +
                                                 "' --n 4 --steps 2 --out '" + file("x.npy") +
                                                 "' --png '" + file("x.png") + "' --start-edits 1:0,0",
                                             logs.path());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.err, "--start-edits = '1:0,0': sample does not run edited starts")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(file("x.npy")));
}

}  // namespace
}  // namespace diffscope
