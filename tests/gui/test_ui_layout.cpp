// test_ui_layout.cpp — where the views go and how they are framed: the scene layout keeps both views out of
// the panels' insets (the kernel panel and timeline never cover them), the camera fit fills a pane of any
// aspect, the shortcut queue keeps short taps, and the default export folder follows the XDG user dirs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "../core/io_test_util.h"
#include "render/renderer.h"
#include "ui/export_dir.h"
#include "ui/key_queue.h"
#include "ui/keys.h"
#include "ui/view_fit.h"

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

// A 2D model with data points spread along x only: (-10, 0) .. (10, 0).
DiffusionModel wide_data_model() {
  DiffusionModel m;
  m.net.dim = 2;
  for (int i = 0; i <= 20; ++i) m.data_samples.insert(m.data_samples.end(), {float(i - 10), 0.f});
  m.n_data = 21;
  return m;
}

TEST(ViewFit, FitsTheDataInPanesOfAnyAspect) {
  const DiffusionModel m = wide_data_model();
  const ui::Projection p = ui::fit_projection(m, nullptr, 0);
  for (const double aspect : {0.5, 0.7, 1.0, 2.0}) {
    const ui::CameraFit c = ui::fit_camera(m, p, aspect);
    // Visible: cx +- half_h * aspect by cy +- half_h. Data x in [-10, 10]; unit noise +-3.2 in y.
    EXPECT_NEAR(c.cx, 0.0, 1e-9);
    EXPECT_GE(c.half_h * aspect, 10.0) << "aspect " << aspect;
    EXPECT_GE(c.half_h, 3.2) << "aspect " << aspect;
    // Fitted, not just covered: the tighter axis has a 10% margin only.
    EXPECT_NEAR(std::min(c.half_h * aspect / 10.0, c.half_h / 3.2), 1.1, 1e-9) << "aspect " << aspect;
  }
}

TEST(ViewFit, NewestFrameWidensTheFitButStraySamplesDoNot) {
  const DiffusionModel m = wide_data_model();
  const ui::Projection p = ui::fit_projection(m, nullptr, 0);
  std::vector<float> rows;
  for (int i = 0; i < 1000; ++i) rows.insert(rows.end(), {0.f, float(i % 2 ? 20 : -20)});  // samples at y = +-20
  rows[1] = 1e6f;  // one stray sample, beyond the 99th percentile
  const ui::CameraFit c = ui::fit_camera(m, p, 1.0, rows.data(), 1000);
  EXPECT_NEAR(c.half_h, 1.1 * 20, 1e-6) << "the samples at +-20 in view, the stray one ignored";
}

// The fit holds every point of the frame, not only the central 98% (digits8x8 with 4096 samples spilled past
// the pane's edges): 2% of the samples at y = 25, within 3x the 99th percentile radius, are all in view.
TEST(ViewFit, NewestFrameFitsEveryPointButFarOutliers) {
  const DiffusionModel m = wide_data_model();
  const ui::Projection p = ui::fit_projection(m, nullptr, 0);
  std::vector<float> rows;
  for (int i = 0; i < 1000; ++i) rows.insert(rows.end(), {0.f, i < 20 ? 25.f : float(i % 20) - 10.f});
  const ui::CameraFit c = ui::fit_camera(m, p, 1.0, rows.data(), 1000);
  EXPECT_GE(c.cy + c.half_h, 25.0 * 1.0) << "the top 2% of samples in view";
  EXPECT_LE(c.cy + c.half_h, 25.0 + 0.1 * (25.0 + 10.0)) << "with a small margin only";
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
  EXPECT_EQ(ui::default_export_dir(), home.path() + "/diffscope-exports");
  std::filesystem::create_directories(home.path() + "/Pictures");
  EXPECT_EQ(ui::default_export_dir(), home.path() + "/Pictures/diffscope");
  // xdg-user-dirs' file names a localized pictures folder.
  std::filesystem::create_directories(home.path() + "/.config");
  std::filesystem::create_directories(home.path() + "/Bilder");
  std::ofstream(home.path() + "/.config/user-dirs.dirs") << "# comment\nXDG_PICTURES_DIR=\"$HOME/Bilder\"\n";
  EXPECT_EQ(ui::default_export_dir(), home.path() + "/Bilder/diffscope");
  {
    ScopedEnv e("XDG_PICTURES_DIR", "/srv/pics");
    EXPECT_EQ(ui::default_export_dir(), "/srv/pics/diffscope");
  }
  // The setting wins; "" and the old default (relative to the working directory) mean the default folder.
  EXPECT_EQ(ui::resolve_export_dir("/data/out"), "/data/out");
  EXPECT_EQ(ui::resolve_export_dir(""), home.path() + "/Bilder/diffscope");
  EXPECT_EQ(ui::resolve_export_dir("diffscope_exports"), home.path() + "/Bilder/diffscope");
}

}  // namespace
}  // namespace diffscope
