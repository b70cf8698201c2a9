// test_app_actions.cpp — the App's action queue and settings persistence, in this process (Mesa EGL, CPU
// backend): a shortcut key and the action a script line pushes leave the App in the same state; a changed
// setting marks the settings dirty once and is serialised once, a second after it rests; frames in which
// nothing changed serialise nothing.
#include <gtest/gtest.h>
#include <imgui.h>

#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gui_test_util.h"
#include "io_test_util.h"
#include "render/egl_display.h"
#include "shell/compute_select.h"
#include "shell/frame_loop.h"
#include "ui/app.h"
#include "ui/keys.h"

namespace diffscope {
namespace {

using ui::Action;
using ui::ActionKind;
using ui::KeyPress;

// ImGui's input side without a window: a fixed time step, so ImGui::GetTime() (the autosave's clock) is exact.
class StepPlatform final : public shell::FramePlatform {
 public:
  explicit StepPlatform(float dt) : m_dt(dt) {}
  void new_frame(render::DisplaySize size) override {
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(float(size.w), float(size.h));
    io.DisplayFramebufferScale = ImVec2(1, 1);
    io.DeltaTime = m_dt;
  }

 private:
  float m_dt;
};

// One headless app on the CPU backend: 48 samples, 12 steps of the 2D model.
struct Harness {
  explicit Harness(const std::string& config_dir, bool persist, float dt = 1.0f / 60)
      : platform(dt), app(options(config_dir, persist), shell::make_compute_services()) {
    app.init(1.0f);
    display.set_size(640, 400);
    loop.emplace(app, display, platform);
  }
  ~Harness() { app.shutdown(); }
  static ui::AppOptions options(const std::string& config_dir, bool persist) {
    ui::AppOptions o;
    o.backend = "cpu";
    o.headless = true;
    o.persist = persist;
    o.config_dir = config_dir;
    o.model = guitest::model_2d();
    o.sets = {{"n", "48", "--n"}, {"steps", "12", "--steps"}};
    return o;
  }
  void frames(int n) {
    for (int k = 0; k < n; ++k) loop->run_frame();
  }
  void run_to_completion() {
    for (int k = 0; k < 2000 && !app.session().complete(); ++k) loop->run_frame();
    ASSERT_TRUE(app.session().complete()) << app.session().error();
    frames(2);
  }
  render::EglDisplay display;
  shell::ImGuiSession imgui;
  StepPlatform platform;
  shell::ImGuiGl3Renderer gl3;
  ui::App app;
  std::optional<shell::FrameLoop> loop;
};

// What the keys change: the shown frame, playing, the panels shown.
struct Seen {
  int frame;
  bool playing, show_ui;
  bool operator==(const Seen& o) const { return frame == o.frame && playing == o.playing && show_ui == o.show_ui; }
};

// Runs the app to the end of its run, then each step (two frames with a key, or with its action).
std::vector<Seen> after_each(const std::vector<std::function<void(Harness&)>>& steps) {
  test::TempDir dir;
  Harness h(dir.path(), false);
  h.app.connect_keys();  // presses only from push_key, as the window's key callback feeds them
  h.run_to_completion();
  std::vector<Seen> seen;
  for (const auto& step : steps) {
    step(h);
    seen.push_back({h.app.shown_frame(), h.app.playing(), h.app.settings().view.show_ui});
  }
  return seen;
}

TEST(AppActions, KeyMapsToTheActionAScriptLinePushes) {
  EXPECT_EQ(ui::key_action({ui::kKeySpace}), Action::simple(ActionKind::TogglePlay));
  EXPECT_EQ(ui::key_action({ui::kKeyLeft}), Action::step_frames(-1));
  EXPECT_EQ(ui::key_action({ui::kKeyRight, true}), Action::step_frames(10));
  EXPECT_EQ(ui::key_action({ui::kKeyHome}), Action::show_frame(0));
  EXPECT_EQ(ui::key_action({ui::kKeyEnd}), Action::show_frame(-1));
  EXPECT_EQ(ui::key_action({ui::kKeyH}), Action::simple(ActionKind::ToggleUi));
  EXPECT_EQ(ui::key_action({ui::kKeyS}), Action::simple(ActionKind::Snapshot));
  EXPECT_EQ(ui::key_action({ui::kKeyV}), Action::simple(ActionKind::Video));
  EXPECT_FALSE(ui::key_action({ui::kKeyS, false, true}));                 // Ctrl+S: the text field's
  EXPECT_FALSE(ui::key_action({ui::kKeySpace, false, false, true}));      // held Space: one press only
  EXPECT_EQ(ui::key_action({ui::kKeyLeft, false, false, true}), Action::step_frames(-1));  // arrows repeat
  EXPECT_FALSE(ui::key_action({ui::kKeyA}));
}

TEST(AppActions, AKeyAndTheSameActionFromAScriptLineGiveTheSameState) {
  const std::vector<std::pair<KeyPress, Action>> cases = {
      {{ui::kKeyEnd}, Action::show_frame(-1)},          {{ui::kKeyLeft, true}, Action::step_frames(-10)},
      {{ui::kKeyRight}, Action::step_frames(1)},        {{ui::kKeyH}, Action::simple(ActionKind::ToggleUi)},
      {{ui::kKeySpace}, Action::simple(ActionKind::TogglePlay)}, {{ui::kKeyHome}, Action::show_frame(0)},
      {{ui::kKeyH}, Action::simple(ActionKind::ToggleUi)}};
  std::vector<std::function<void(Harness&)>> by_key, by_line;
  for (const auto& [key, action] : cases) {
    // A key pressed before a frame acts at the end of that frame (after the panels: App::handle_keys).
    by_key.push_back([key = key](Harness& h) {
      h.app.push_key(key);
      h.frames(2);
    });
    // A script line between the same frames pushes its action and applies it at once (Script::act).
    by_line.push_back([action = action](Harness& h) {
      h.frames(1);
      h.app.push(action);
      h.app.apply_actions();
      h.frames(1);
    });
  }
  const std::vector<Seen> keys = after_each(by_key), lines = after_each(by_line);
  ASSERT_EQ(keys.size(), cases.size());
  for (size_t k = 0; k < cases.size(); ++k)
    EXPECT_TRUE(keys[k] == lines[k]) << "step " << k << ": key frame " << keys[k].frame << " playing "
                                     << keys[k].playing << " ui " << keys[k].show_ui << "; line frame "
                                     << lines[k].frame << " playing " << lines[k].playing << " ui " << lines[k].show_ui;
  // Independently of the two paths: End shows the last of 12 steps, Shift+Left 10 back, Right 1 on, paused.
  EXPECT_EQ(keys[0].frame, 12);
  EXPECT_FALSE(keys[0].playing);
  EXPECT_EQ(keys[1].frame, 2);
  EXPECT_EQ(keys[2].frame, 3);
  EXPECT_FALSE(keys[3].show_ui);
  EXPECT_TRUE(keys[4].playing);  // a replay from the shown frame
  EXPECT_GT(keys[4].frame, 3);
  EXPECT_EQ(keys[5].frame, 0);
  EXPECT_TRUE(keys[6].show_ui);
}

double saved_point_size(const std::string& dir) {
  std::ifstream f(dir + "/settings.json");
  return nlohmann::json::parse(f)["view"]["point_size"].get<double>();
}

TEST(AppActions, AChangedSettingIsMarkedDirtyOnceAndSerialisedOnceAfterItRests) {
  test::TempDir dir;
  Harness h(dir.path(), true, 0.25f);  // ImGui time: a quarter second a frame
  h.run_to_completion();
  h.frames(8);  // the start's own marks (the first run, the camera fit) rest for a second and are checked
  const int marks0 = h.app.settings_dirty_marks(), serialised0 = h.app.settings_serialisations();
  h.frames(20);
  EXPECT_EQ(h.app.settings_dirty_marks(), marks0) << "nothing changed";
  EXPECT_EQ(h.app.settings_serialisations(), serialised0) << "no JSON in frames where nothing changed";

  h.app.push(Action::set_setting("point_size", "5"));  // the View section's point size: no new run
  h.frames(1);
  EXPECT_EQ(h.app.settings_dirty_marks(), marks0 + 1);
  EXPECT_EQ(h.app.settings_serialisations(), serialised0) << "written only once the change rests for a second";
  h.frames(6);  // 1.5 s
  EXPECT_EQ(h.app.settings_dirty_marks(), marks0 + 1);
  EXPECT_EQ(h.app.settings_serialisations(), serialised0 + 1);
  EXPECT_EQ(saved_point_size(dir.path()), 5.0);
  h.frames(20);
  EXPECT_EQ(h.app.settings_serialisations(), serialised0 + 1);

  // A sampling setting restarts the run (a second mark inside the same change): still one transition.
  h.app.push(Action::set_setting("seed", "7"));
  h.frames(1);
  EXPECT_EQ(h.app.settings_dirty_marks(), marks0 + 2);
  h.run_to_completion();
  h.frames(6);
  EXPECT_EQ(h.app.settings_dirty_marks(), marks0 + 2);
  EXPECT_EQ(h.app.settings_serialisations(), serialised0 + 2);
}

TEST(AppActions, ActionsThatOnlyMoveTheViewOfTheRunLeaveTheSettingsClean) {
  test::TempDir dir;
  Harness h(dir.path(), true, 0.25f);
  h.run_to_completion();
  h.frames(8);
  const int marks0 = h.app.settings_dirty_marks(), serialised0 = h.app.settings_serialisations();
  for (const Action& a : {Action::show_frame(3), Action::step_frames(1), Action::simple(ActionKind::TogglePlay)}) {
    h.app.push(a);
    h.frames(3);
  }
  EXPECT_EQ(h.app.settings_dirty_marks(), marks0);
  EXPECT_EQ(h.app.settings_serialisations(), serialised0);
}

}  // namespace
}  // namespace diffscope
