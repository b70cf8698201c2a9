// test_ui_layout.cpp — where the views go: the scene layout keeps both views out of the panels' insets (the
// kernel panel and timeline never cover them), the shortcut queue keeps short taps, and the default export
// folder follows the XDG user dirs. (The camera fit: tests/session/test_view_fit.cpp.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gui_test_util.h"
#include "io_test_util.h"
#include "picture/export_dir.h"
#include "render/renderer.h"
#include "ui/key_queue.h"
#include "ui/keys.h"

namespace diffscope {
namespace {

using render::Rect;

bool inside(const Rect& r, const Rect& outer) {
  return r.x >= outer.x && r.y >= outer.y && r.x + r.w <= outer.x + outer.w && r.y + r.h <= outer.y + outer.h;
}

TEST(SceneLayout, ViewsStayOutOfThePanels) {
  // 1600x1000 with the left panel (348 px), an open kernel panel + timeline (400 px) and the status strip (40 px).
  const render::Insets in{348, 400, 40};
  const Rect free{348, 400, 1600 - 348, 1000 - 400 - 40};
  const render::SceneLayout l2 = render::Renderer::layout(1600, 1000, false, in);
  EXPECT_EQ(l2.scatter.x, free.x);
  EXPECT_EQ(l2.scatter.y, free.y);
  EXPECT_EQ(l2.scatter.w, free.w);
  EXPECT_EQ(l2.scatter.h, free.h);
  const render::SceneLayout li = render::Renderer::layout(1600, 1000, true, in);
  EXPECT_TRUE(inside(li.grid, free));
  EXPECT_TRUE(inside(li.scatter, free));
  EXPECT_LE(li.grid.x + li.grid.w, li.scatter.x) << "the image grid and the PCA view side by side";
  EXPECT_EQ(li.grid.w, li.grid.h) << "square image grid";
  EXPECT_GT(li.scatter.w, 0);
}

TEST(SceneLayout, HugeInsetsLeaveRoomForTheViews) {
  const render::SceneLayout l = render::Renderer::layout(800, 600, true, {5000, 5000, 5000});
  EXPECT_GE(l.scatter.w, 200);  // left clamped to half the width
  EXPECT_GE(l.scatter.h, 150);  // top + bottom clamped to three quarters of the height
  EXPECT_GT(l.grid.w, 0);
}

TEST(KeyQueue, KeepsEveryPressInOrderAndEmptiesOnTake) {
  ui::KeyQueue q;
  q.connect();
  // A tap of Space and two of Right inside one frame: press and release before the frame polls.
  q.push({ui::kKeySpace});
  q.push({ui::kKeyRight, true});
  q.push({ui::kKeyRight, false, false, true});
  const auto got = q.take();
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].key, ui::kKeySpace);
  EXPECT_TRUE(got[1].shift);
  EXPECT_TRUE(got[2].repeat);
  EXPECT_TRUE(q.take().empty()) << "each press acts once";
}

// Sets or unsets an environment variable for the scope of one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : m_name(name) {
    if (const char* old = std::getenv(name)) m_old = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { m_old ? setenv(m_name, m_old->c_str(), 1) : unsetenv(m_name); }

 private:
  const char* m_name;
  std::optional<std::string> m_old;
};

TEST(ExportDir, PicturesFolderWhenThereIsOneElseHome) {
  test::TempDir home;
  ScopedEnv h("HOME", home.path().c_str()), x("XDG_PICTURES_DIR", nullptr), c("XDG_CONFIG_HOME", nullptr);
  EXPECT_EQ(default_export_dir(), home.path() + "/diffscope-exports");
  std::filesystem::create_directories(home.path() + "/Pictures");
  EXPECT_EQ(default_export_dir(), home.path() + "/Pictures/diffscope");
  // xdg-user-dirs' file names a localized pictures folder.
  std::filesystem::create_directories(home.path() + "/.config");
  std::filesystem::create_directories(home.path() + "/Bilder");
  std::ofstream(home.path() + "/.config/user-dirs.dirs") << "# comment\nXDG_PICTURES_DIR=\"$HOME/Bilder\"\n";
  EXPECT_EQ(default_export_dir(), home.path() + "/Bilder/diffscope");
  {
    ScopedEnv e("XDG_PICTURES_DIR", "/srv/pics");
    EXPECT_EQ(default_export_dir(), "/srv/pics/diffscope");
  }
  // The setting wins; "" and the old default (relative to the working directory) mean the default folder.
  EXPECT_EQ(resolve_export_dir("/data/out"), "/data/out");
  EXPECT_EQ(resolve_export_dir(""), home.path() + "/Bilder/diffscope");
  EXPECT_EQ(resolve_export_dir("diffscope_exports"), home.path() + "/Bilder/diffscope");
}

// Every label readable at 1280x800 at UI scale 1.0, 1.5 and 2.0 (the default window of a laptop): with every
// section open (the Train section in a run of its own, trained), a scheduler config applied (its long warning and Clear), a one-step run, the kernel rows run and
// the video row shown, no window's items reach past its content region and no text is wider than its box (the
// app's layout audit, ui/layout_audit.h: `expect clipped == 0` lists what it found). A window far too narrow for
// the panels must be reported, so the audit is known to see clipping.
TEST(UiLayout, NothingClippedAt1280x800FromUiScale1To2) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("cfg.json")) << R"({"beta_schedule": "scaled_linear", "timestep_spacing": "trailing",
                                             "clip_sample": false})";
  const std::string common = "scheduler_config " + dir.file("cfg.json") + "\nset n 64\nset steps 1\n"
                             "wait_complete 2000\nopen Schedule\nopen Export\nopen Kernels\nbench cpu\nframes 3\n";
  // An image model adds the grid's rows (grid columns, the grid PNG's scale and button) at the largest scale.
  const std::string digits = test::repo_root() + "/assets/models/digits8x8.safetensors";
  std::vector<std::pair<std::string, std::string>> runs{
      {guitest::model_2d(), "1.0"}, {guitest::model_2d(), "1.5"}, {guitest::model_2d(), "2.0"}};
  if (std::filesystem::exists(digits)) runs.emplace_back(digits, "2.0");
  for (const auto& [model, scale] : runs) {
    const std::string shot = dir.file("scale" + scale + ".png");
    std::ofstream(dir.file("s.txt")) << common << "expect clipped == 0\nscreenshot " << shot << "\n";
    const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 1280x800 --model '" +
                                                   model + "' --script '" + dir.file("s.txt") + "'",
                                               logs.path(), "DIFFSCOPE_UI_SCALE=" + scale);
    EXPECT_EQ(r.code, 0) << model << " at UI scale " << scale << ":\n" << r.out << r.err;
    EXPECT_TRUE(std::filesystem::exists(shot)) << scale;
  }
  // The Train section during and after a short run: progress, loss curve, an older checkpoint shown.
  std::ofstream(dir.file("train.txt")) << "open Train\nbrush 0 0 0.5 50\nbrush 1 1 0.5 50\ntrain_set steps 30\n"
                                          "train_set batch 16\ntrain_set hidden 64\ntrain_set preview_every 10\n"
                                          "train start\ntrain wait\ntrain checkpoint 0\nframes 3\nexpect clipped == 0\n";
  for (const char* scale : {"1.0", "2.0"}) {
    const guitest::Result t = guitest::run_cli("gui --headless --backend cpu --no-persist --size 1280x800 --script '" +
                                                   dir.file("train.txt") + "'",
                                               logs.path(), std::string("DIFFSCOPE_UI_SCALE=") + scale);
    EXPECT_EQ(t.code, 0) << "the Train section at UI scale " << scale << ":\n" << t.out << t.err;
  }
  std::ofstream(dir.file("narrow.txt")) << common << "expect clipped > 0\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 420x800 --model '" +
                                                 guitest::model_2d() + "' --script '" + dir.file("narrow.txt") + "'",
                                             logs.path(), "DIFFSCOPE_UI_SCALE=2.0");
  EXPECT_EQ(r.code, 0) << "the audit saw nothing clipped in a window 420 pixels wide at UI scale 2:\n" << r.out << r.err;
}

}  // namespace
}  // namespace diffscope
