// test_gui_units.cpp — the GUI's plain-C++ pieces: SHA-256 against FIPS 180-4 / NIST example digests,
// the trajectory layout under a memory budget (SEMANTICS §3 "keep every k-th frame and the last"), and
// settings JSON round trips and corrupt-file fallback (ARCHITECTURE.md), and where the window opens (fit_window).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "formats/sha256.h"
#include "io_test_util.h"
#include "render/window_fit.h"
#include "run/trajectory_store.h"
#include "session/settings_io.h"
#include "ui/widgets/mini_plot.h"

namespace diffscope {
namespace {

TEST(Sha256, NistExamples) {
  // FIPS 180-4 examples (NIST CSRC "SHA256.pdf").
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding boundary (55, 56, 63, 64 bytes) give distinct 64-hex-digit digests.
  std::set<std::string> d;
  for (int n : {55, 56, 63, 64, 119, 120}) d.insert(sha256_hex(std::string(n, 'x')));
  EXPECT_EQ(d.size(), 6u);
}

TEST(TrajectoryLayout, AllFramesUnderBudget) {
  const auto l = TrajectoryLayout::make(1000, 65536, 2, size_t(1) << 30);
  EXPECT_EQ(l.stride, 1);
  EXPECT_EQ(l.n_slots, 1001);
  EXPECT_EQ(l.slot_of_frame(0), 0);
  EXPECT_EQ(l.slot_of_frame(1000), 1000);
  EXPECT_EQ(l.total_bytes(), size_t(1001) * 65536 * 2 * 4);
}

TEST(TrajectoryLayout, StrideAboveBudgetKeepsFirstAndLast) {
  // 100 frames of 1 MB each in a 30 MB budget: the smallest stride with <= 30 slots is 4
  // (frames 0, 4, ..., 96 = 25 slots, plus frame 99 = 26 slots; stride 3 would need 34 + 1).
  const int B = 131072;  // 131072 rows x 2 dims x 4 bytes = 1 MB per frame
  const auto l = TrajectoryLayout::make(99, B, 2, size_t(30) << 20);
  EXPECT_EQ(l.stride, 4);
  EXPECT_EQ(l.n_slots, 26);
  EXPECT_LE(l.total_bytes(), size_t(30) << 20);
  EXPECT_EQ(l.slot_of_frame(0), 0);
  EXPECT_EQ(l.slot_of_frame(4), 1);
  EXPECT_EQ(l.slot_of_frame(5), -1);
  EXPECT_EQ(l.slot_of_frame(99), 25);
  EXPECT_EQ(l.frame_of_slot(25), 99);
  EXPECT_EQ(l.frame_of_slot(24), 96);
  EXPECT_EQ(l.slot_at_or_before(98), 24);
  EXPECT_EQ(l.slot_at_or_before(99), 25);
  EXPECT_NE(l.describe().find("one frame in 4 of 100 (26 kept"), std::string::npos) << l.describe();  // no "every 2th"
}

TEST(TrajectoryLayout, TinyBudgetStillKeepsStartAndEnd) {
  const auto l = TrajectoryLayout::make(10, 1000, 2, 1);
  EXPECT_EQ(l.stride, 10);
  EXPECT_EQ(l.n_slots, 2);
  EXPECT_EQ(l.frame_of_slot(1), 10);
}

// A plot of one value (the Schedule section of a one-step run: step k = 0 only) reads "-0.5 .. 0.5", not
// "-1.00e-12 .. 1.00e-12"; ranges worked out by hand from the rule in mini_plot.h.
TEST(PlotAxis, OneValueGetsARangeThatReadsAsNumbers) {
  struct Case {
    double lo, hi;
    bool log;
    double want_lo, want_hi;
  } cases[] = {
      {0, 0, false, -0.5, 0.5},
      {999, 999, false, 899.1, 1098.9},
      {-4, -4, false, -4.4, -3.6},
      {2, 2, true, 1.5, 2.5},                  // log10 units: half a decade each way
      {0, 30, false, 0, 30},                   // a real range is kept
      {INFINITY, -INFINITY, false, 0, 1},      // no data
  };
  for (const Case& c : cases) {
    double lo = c.lo, hi = c.hi;
    ui::pad_axis_range(&lo, &hi, c.log);
    EXPECT_DOUBLE_EQ(lo, c.want_lo) << c.lo;
    EXPECT_DOUBLE_EQ(hi, c.want_hi) << c.hi;
  }
}

TEST(TrajectoryStore, KeepsOnlyLaidOutFrames) {
  TrajectoryStore st;
  st.reset(TrajectoryLayout::make(4, 2, 2, 4 * 4 * 3));  // room for 3 frames of 16 bytes: stride 2
  ASSERT_EQ(st.layout().stride, 2);
  const float f[4] = {1, 2, 3, 4};
  EXPECT_EQ(st.store_frame(2, f), 1);
  EXPECT_EQ(st.store_frame(3, f), -1);
  EXPECT_EQ(st.slot(1)[3], 4.0f);
}

TEST(Settings, RoundTripAndCorruptFile) {
  test::TempDir dir;
  AppSettings s;
  s.sampling.steps = 37;
  s.sampling.t_start = 512;
  s.sampling.sampler = Sampler::Ddpm;
  s.sampling.seed = 0x123456789ull;
  s.view.trail_frames = 5;
  s.export_dir = "out here";
  std::string err, note;
  ASSERT_TRUE(save_app_settings(dir.file("settings.json"), s, &err)) << err;
  const AppSettings r = load_app_settings(dir.file("settings.json"), &note);
  EXPECT_TRUE(note.empty()) << note;
  EXPECT_TRUE(r.sampling == s.sampling);
  EXPECT_EQ(r.view.trail_frames, 5);
  EXPECT_EQ(r.export_dir, "out here");

  std::ofstream(dir.file("bad.json")) << "{\"sampling\": {\"steps\": 12,";  // truncated
  note.clear();
  const AppSettings d = load_app_settings(dir.file("bad.json"), &note);
  EXPECT_NE(note.find("corrupt"), std::string::npos) << note;
  EXPECT_TRUE(d.sampling == AppSettings{}.sampling);

  std::ofstream(dir.file("typed.json")) << R"({"sampling": {"steps": "many", "t_start": 7, "sampler": "nope"}})";
  note.clear();
  const AppSettings t = load_app_settings(dir.file("typed.json"), &note);
  EXPECT_EQ(t.sampling.t_start, 7);
  EXPECT_EQ(t.sampling.steps, AppSettings{}.sampling.steps);
  EXPECT_NE(note.find("steps"), std::string::npos) << note;

  note.clear();
  const AppSettings m = load_app_settings(dir.file("missing.json"), &note);
  EXPECT_TRUE(note.empty());
  EXPECT_TRUE(m.sampling == AppSettings{}.sampling);
}

void eq(const render::WindowRect& r, int x, int y, int w, int h) {
  EXPECT_EQ(r.x, x);
  EXPECT_EQ(r.y, y);
  EXPECT_EQ(r.w, w);
  EXPECT_EQ(r.h, h);
}

// Expected values by hand from the rule in render/window_fit.h: a side that does not fit is 90% of the area's
// (truncated), divided by the content scale; the window is centred in the area.
TEST(WindowFit, AskedSizeUnlessItDoesNotFitTheWorkArea) {
  eq(render::fit_window(1600, 1000, 1, {0, 0, 1920, 1080}), -1, -1, 1600, 1000);  // fits: the window system places it
  eq(render::fit_window(1600, 1000, 1, {0, 0, 1600, 1000}), -1, -1, 1600, 1000);  // exactly
  // 1366 x 768 laptop with a 27-pixel top panel: 0.9 x 1366 = 1229.4, 0.9 x 741 = 666.9; x = (1366 - 1229) / 2
  // = 68, y = 27 + (741 - 666) / 2 = 64.
  eq(render::fit_window(1600, 1000, 1, {0, 27, 1366, 741}), 68, 64, 1229, 666);
  // Only the height: the width stays 800; 0.9 x 768 = 691.2; x = (1024 - 800) / 2 = 112, y = (768 - 691) / 2 = 38.
  eq(render::fit_window(800, 1000, 1, {0, 0, 1024, 768}), 112, 38, 800, 691);
  // Content scale 2 on 2560 x 1440 (GLFW doubles the window): 0.9 x 2560 / 2 = 1152, 0.9 x 1440 / 2 = 648;
  // x = (2560 - 2304) / 2 = 128, y = (1440 - 1296) / 2 = 72. A second monitor's origin is kept.
  eq(render::fit_window(1600, 1000, 2, {1920, 0, 2560, 1440}), 1920 + 128, 72, 1152, 648);
  // Unknown area (zero size): unchanged. Hostile values: sizes at least 1, a scale that is not positive or
  // not finite counts as 1.
  eq(render::fit_window(1600, 1000, 1, {0, 0, 0, 0}), -1, -1, 1600, 1000);
  eq(render::fit_window(0, -5, 1, {0, 0, 1024, 768}), -1, -1, 1, 1);
  eq(render::fit_window(1600, 1000, std::nanf(""), {0, 0, 1024, 768}), 51, 38, 921, 691);
  eq(render::fit_window(1600, 1000, 0, {0, 0, 1024, 768}), 51, 38, 921, 691);
  eq(render::fit_window(2147483647, 2147483647, 1, {0, 0, 1024, 768}), 51, 38, 921, 691);
}

// The last window (window.json): its place kept when the window lies inside the work area, else centred; its size
// fitted like fit_window's. Hostile files are ignored (the default window opens).
TEST(WindowFit, SavedWindowIsKeptInsideTheWorkArea) {
  eq(render::place_saved_window({100, 50, 800, 600}, 1, {0, 0, 1920, 1080}), 100, 50, 800, 600);
  // Off the area (a monitor that went away): centred, (1920 - 800) / 2 = 560, (1080 - 600) / 2 = 240.
  eq(render::place_saved_window({3000, 50, 800, 600}, 1, {0, 0, 1920, 1080}), 560, 240, 800, 600);
  eq(render::place_saved_window({1500, 50, 800, 600}, 1, {0, 0, 1920, 1080}), 560, 240, 800, 600);  // sticks out
  // Larger than the area: fitted and centred as fit_window does (0.9 x 1024 = 921, 0.9 x 768 = 691).
  eq(render::place_saved_window({100, 50, 1600, 1000}, 1, {0, 0, 1024, 768}), 51, 38, 921, 691);
  eq(render::place_saved_window({-5, -5, 800, 600}, 1, {0, 0, 0, 0}), -5, -5, 800, 600);  // unknown area

  test::TempDir dir;
  const std::string p = dir.file("window.json");
  EXPECT_FALSE(render::load_window_rect(p).has_value());  // missing
  ASSERT_TRUE(render::save_window_rect(p, {12, -34, 700, 500}));
  const auto back = render::load_window_rect(p);
  ASSERT_TRUE(back.has_value());
  eq(*back, 12, -34, 700, 500);
  for (const char* bad : {"", "garbage", "[1, 2]", R"({"x": 0, "y": 0, "w": 1000000000, "h": 600})",
                          R"({"x": 0, "y": 0, "w": 800.5, "h": 600})", R"({"x": 0, "y": 0, "w": 199, "h": 600})",
                          R"({"x": 0, "y": 0, "w": 800, "h": 16385})", R"({"x": 1e300, "y": 0, "w": 800, "h": 600})",
                          R"({"x": "0", "y": 0, "w": 800, "h": 600})", R"({"y": 0, "w": 800, "h": 600})"}) {
    test::write_bytes(p, bad);
    EXPECT_FALSE(render::load_window_rect(p).has_value()) << bad;
  }
  EXPECT_FALSE(render::save_window_rect(dir.file("no/such/dir/window.json"), {0, 0, 800, 600}));
}

TEST(Settings, UnwritablePathFailsCleanly) {
  std::string err;
  EXPECT_FALSE(save_app_settings("/proc/definitely/not/here/settings.json", AppSettings{}, &err));
  EXPECT_FALSE(err.empty());
}

}  // namespace
}  // namespace diffscope
