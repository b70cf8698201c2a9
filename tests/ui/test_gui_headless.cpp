// test_gui_headless.cpp — the UI end to end without a window (ARCHITECTURE.md "Headless"): the real frame
// loop in a Mesa EGL context on the CPU backend, driven by a script of input events (a mouse drag on the
// timeline, arrow keys) and setting changes (steps, t_start); then the exports are checked: the PNG is not
// blank, the sidecar matches the settings (SEMANTICS §6), and the .npy state and trajectory equal what
// `diffscope sample` writes for the same settings (both on the CPU backend, SEMANTICS §3).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <chrono>

#include "formats/npy.h"
#include "formats/sha256.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

using guitest::Result;

class GuiHeadless : public ::testing::Test {
 protected:
  test::TempDir m_dir, m_logs;

  void write(const std::string& name, const std::string& text) { std::ofstream(m_dir.file(name)) << text; }
  // Runs the headless UI; skips the test when this machine has no EGL/GL 4.3 (exit 3).
  Result run_gui(const std::string& args) {
    Result r = guitest::run_cli("gui --headless --backend cpu " + args, m_logs.path());
    if (r.code == 3 && r.err.find("EGL") != std::string::npos) {
      ADD_FAILURE() << "no headless GL context: " << r.err;  // CI has Mesa: this must work there
    }
    return r;
  }
};

void expect_npy_equal(const std::string& a_path, const std::string& b_path, double tol) {
  const NpyFloat a = read_npy_float(a_path, "a"), b = read_npy_float(b_path, "b");
  ASSERT_EQ(a.shape, b.shape);
  ASSERT_EQ(a.data.size(), b.data.size());
  double max_err = 0, max_abs = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    max_err = std::max(max_err, double(std::abs(a.data[i] - b.data[i])));
    max_abs = std::max(max_abs, double(std::abs(b.data[i])));
  }
  EXPECT_LE(max_err, tol * std::max(1.0, max_abs)) << a_path << " vs " << b_path;
}

// The JSON lines `print` wrote ({"frame": ...}), in order.
std::vector<nlohmann::json> printed_states(const std::string& out) {
  std::vector<nlohmann::json> v;
  std::istringstream in(out);
  for (std::string l; std::getline(in, l);)
    if (l.rfind("{\"frame\"", 0) == 0) v.push_back(nlohmann::json::parse(l));
  return v;
}

// The sidecar of a snapshot of the scripted test's second run (SEMANTICS §6): 25 ddim steps from t = 300, n 300.
void expect_second_run_sidecar(const std::string& path, const std::string& model) {
  const auto side = nlohmann::json::parse(guitest::slurp(path));
  EXPECT_EQ(side["model"]["file"].get<std::string>(), model);
  EXPECT_EQ(side["model"]["sha256"].get<std::string>(), sha256_file(model));
  EXPECT_EQ(side["sampler"], "ddim");
  EXPECT_EQ(side["eta"].get<double>(), 0.0);
  EXPECT_EQ(side["steps"].get<int>(), 25);
  EXPECT_EQ(side["t_start"].get<int>(), 300);
  EXPECT_EQ(side["seed"].get<uint64_t>(), 0u);
  EXPECT_EQ(side["n"].get<int>(), 300);
  EXPECT_EQ(side["precision"], "fp32");
  EXPECT_EQ(side["backend"], "cpu");
  EXPECT_EQ(side["frame"].get<int>(), 25);
  EXPECT_TRUE(side.contains("device"));
  EXPECT_TRUE(side["timings"].contains("last_run_ms"));
}

TEST_F(GuiHeadless, ScriptedTimelineStepsTStartAndExports) {
  const std::string model = guitest::model_2d();
  const std::string d = m_dir.path();
  write("s.txt", "set n 300\nset t_start 500\nset steps 40\nset spl 7\nset trail 6\n"
                 "wait_complete 5000\nexpect computed == 40\nexpect frame == 40\n"
                 // drag the timeline from 95% to 25%: about frame 10 of 40, playback stops
                 "drag_timeline 0.95 0.25 10\nexpect playing == 0\nexpect frame >= 7\nexpect frame <= 13\nprint\n"
                 "key Right\nkey Left\nkey Left\nprint\n"
                 "set export_dir " + d + "/exports\nset export_size 640x480\n"
                 "export snapshot " + d + "/scrubbed.png\n"
                 // live setting changes: a new run, followed to its end
                 "set steps 25\nset t_start 300\nwait_complete 5000\n"
                 "expect steps == 25\nexpect t_start == 300\nexpect frame == 25\n"
                 "export snapshot\nexport state " + d + "/state.npy\nexport trajectory " + d + "/traj.npy\n"
                 "export snapshot /proc/no/such/dir/x.png\n"
                 "set export_size 96x64\nexport frames\n"
                 "screenshot " + d + "/ui.png\n");
  const Result r = run_gui("--no-persist --size 1024x700 --model '" + model + "' --script '" + m_dir.file("s.txt") + "'");
  // The one unwritable export makes the run fail (exit 2, the export named) after the whole script ran.
  ASSERT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("1 command failed, the first: script:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(": export snapshot: export /proc/no/such/dir/x.png: cannot write"), std::string::npos) << r.err;

  // The scrubbed frame after Right, Left, Left is one before the dragged-to frame.
  const auto states = printed_states(r.out);
  ASSERT_GE(states.size(), 2u) << r.out;
  EXPECT_EQ(states[1]["frame"].get<int>(), states[0]["frame"].get<int>() - 1);

  // The scrubbed snapshot: 640x480, not blank, sidecar at that frame.
  const guitest::Png snap = guitest::read_png(m_dir.file("scrubbed.png"));
  ASSERT_EQ(snap.w, 640);
  ASSERT_EQ(snap.h, 480);
  EXPECT_GT(snap.distinct_colors(), 20u);
  EXPECT_GT(snap.non_background(), 0.002);
  const auto side_a = nlohmann::json::parse(guitest::slurp(m_dir.file("scrubbed.json")));
  EXPECT_EQ(side_a["frame"].get<int>(), states[1]["frame"].get<int>());
  EXPECT_EQ(side_a["steps"].get<int>(), 40);
  EXPECT_EQ(side_a["t_start"].get<int>(), 500);

  // The auto-numbered snapshot of the second run and its sidecar (SEMANTICS §6).
  const std::string snap_b = d + "/exports/snapshot_0001.png";
  ASSERT_TRUE(std::filesystem::exists(snap_b)) << r.out;
  expect_second_run_sidecar(d + "/exports/snapshot_0001.json", model);
  EXPECT_GT(guitest::read_png(snap_b).non_background(), 0.002);

  // The unwritable path: an error line, the run went on (the screenshot after it exists).
  EXPECT_NE(r.out.find("export snapshot: error:"), std::string::npos) << r.out;
  EXPECT_GT(guitest::read_png(m_dir.file("ui.png")).distinct_colors(), 20u);

  // The frame sequence: one PNG per frame 0..25 in a new numbered folder, plus its sidecar.
  const std::string seq = d + "/exports/frames_0001";
  ASSERT_TRUE(std::filesystem::is_directory(seq)) << r.out;
  EXPECT_TRUE(std::filesystem::exists(seq + "/sequence.json"));
  EXPECT_TRUE(std::filesystem::exists(seq + "/frame_00000.png"));
  EXPECT_TRUE(std::filesystem::exists(seq + "/frame_00025.png"));
  EXPECT_FALSE(std::filesystem::exists(seq + "/frame_00026.png"));
  EXPECT_EQ(guitest::read_png(seq + "/frame_00025.png").w, 96);

  // The exported state and trajectory equal the CLI's for the same settings.
  const Result c = guitest::run_cli("sample --backend cpu --model '" + model + "' --n 300 --steps 25 --t-start 300 "
                                    "--seed 0 --out '" + d + "/cli.npy' --trajectory '" + d + "/cli_traj.npy'",
                                    m_logs.path());
  ASSERT_EQ(c.code, 0) << c.err;
  expect_npy_equal(d + "/state.npy", d + "/cli.npy", 1e-5);
  expect_npy_equal(d + "/traj.npy", d + "/cli_traj.npy", 1e-5);
}

TEST_F(GuiHeadless, SettingsFileValuesAreClamped) {
  // SEMANTICS §3: the settings file clamps (like the widgets). steps > t_start + 1 and t_start > T-1 (T = 1000).
  const std::string cfg = m_dir.file("cfg");
  std::filesystem::create_directories(cfg);
  std::ofstream(cfg + "/settings.json")
      << R"({"sampling": {"t_start": 5000, "steps": 100000, "n_samples": 50, "eta": 7},)"
      << R"( "view": {"trail_frames": 1000}, "export": {"export_width": 99999999}})";
  write("s.txt", "frames 2\nexpect t_start == 999\nexpect steps == 1000\nset t_start 9\nframes 1\nexpect steps == 10\n");
  const Result r = run_gui("--config-dir '" + cfg + "' --size 640x480 --model '" + guitest::model_2d() +
                           "' --script '" + m_dir.file("s.txt") + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // Each clamp is noted with the key, the value and the range (the model's clamps were silent until 2026-12-01).
  EXPECT_NE(r.err.find("settings: sampling.t_start = 5000 clamped to 999 (valid: [0, 999] for this model, T = 1000)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("settings: sampling.steps = 100000 clamped to 1000 (valid: [1, 1000]: at most t_start + 1)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("settings: view.trail_frames = 1000 clamped to 64 (valid: [0, 64])"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("settings: sampling.eta = 7 clamped to 1 (valid: [0, 1])"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("settings: export.export_width = 99999999 clamped to 16384 (valid: [16, 16384])"),
            std::string::npos)
      << r.err;
}

TEST_F(GuiHeadless, OutOfRangeScriptSetIsRefused) {
  // SEMANTICS §3: a script's `set` is refused like a command-line value: exit 2 naming the range.
  const std::string base = "--no-persist --size 320x240 --model '" + guitest::model_2d() + "' --script '";
  write("a.txt", "set t_start 5000\n");
  Result r = run_gui(base + m_dir.file("a.txt") + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("[0, 999]"), std::string::npos) << r.err;  // T = 1000
  write("b.txt", "set t_start 9\nset steps 11\n");  // steps in [1, t_start + 1] = [1, 10]
  r = run_gui(base + m_dir.file("b.txt") + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("[1, 10]"), std::string::npos) << r.err;
  write("c.txt", "set trail 65\n");  // [0, 64]
  r = run_gui(base + m_dir.file("c.txt") + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("[0, 64]"), std::string::npos) << r.err;
}

TEST_F(GuiHeadless, OutOfRangeCommandLineValuesAreRefused) {
  // `gui` refuses what `sample` refuses (exit 2), and an unknown --set key lists the keys.
  const std::string base = "--no-persist --size 320x240 --model '" + guitest::model_2d() + "' ";
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{"--steps 0", "[1, "}, Case{"--n 0", "[1, 1000000]"}, Case{"--set steps=-5", "[1, "},
                        Case{"--t-start 1000", "[0, 999]"}, Case{"--t-start 99 --steps 101", "[1, 100]"},
                        Case{"--set foo=1", "valid keys: steps, t_start, n"}, Case{"--set eta=2", "[0, 1]"},
                        Case{"--set follow=maybe", "not a switch"}, Case{"--n abc", "not an integer"}}) {
    const Result r = run_gui(base + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
  }
}

TEST_F(GuiHeadless, CommandLineValuesApplyToThatRunOnly) {
  // --backend, --n, --steps, --set ... are not saved; what the script (the UI) changes is.
  const std::string cfg = m_dir.file("cfg");
  write("a.txt", "set t_start 400\nframes 2\nexpect steps == 40\nexpect n == 64\n");
  Result r = run_gui("--config-dir '" + cfg + "' --size 320x240 --n 64 --steps 40 --set trail=3 --model '" +
                     guitest::model_2d() + "' --script '" + m_dir.file("a.txt") + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(guitest::slurp(cfg + "/settings.json"));
  EXPECT_EQ(j["sampling"]["t_start"], 400);         // changed in the UI: saved
  EXPECT_EQ(j["sampling"]["steps"], 100);           // the default, not --steps 40
  EXPECT_EQ(j["sampling"]["n"], 4096);              // the default, not --n 64
  EXPECT_EQ(j["view"]["trail_frames"], 12);         // the default, not --set trail=3
  EXPECT_EQ(j["sampling"]["backend"], "auto");      // not the test's --backend cpu
  EXPECT_EQ(j["sampling"]["model_path"], "");       // not --model
}

// A scheduler config's spacing belongs to the config: the settings file keeps the user's own spacing (the config is
// not saved, so a relaunch runs without it), and Clear gives the user's spacing back to the picker.
TEST_F(GuiHeadless, SchedulerConfigSpacingIsNotSavedAndClearRestoresTheUsers) {
  const std::string cfg = m_dir.file("cfg"), model = guitest::model_2d();
  write("leading.json", R"({"timestep_spacing": "leading", "clip_sample": false})");
  auto saved_spacing = [&] {
    return nlohmann::json::parse(guitest::slurp(cfg + "/settings.json"))["sampling"]["spacing"].get<std::string>();
  };
  write("a.txt", "set spacing trailing\nframes 2\n");  // the user's own choice
  Result r = run_gui("--config-dir '" + cfg + "' --size 640x480 --n 64 --model '" + model + "' --script '" +
                     m_dir.file("a.txt") + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ASSERT_EQ(saved_spacing(), "trailing");
  // Apply the config (its spacing runs: the sidecar says leading) and quit with it applied.
  write("b.txt", "scheduler_config " + m_dir.file("leading.json") + "\nset steps 5\nwait_complete 2000\nexport state " +
                     m_dir.file("with.npy") + "\n");
  r = run_gui("--config-dir '" + cfg + "' --size 640x480 --n 64 --model '" + model + "' --script '" +
              m_dir.file("b.txt") + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(guitest::slurp(m_dir.file("with.json")))["spacing"], "leading");
  EXPECT_EQ(saved_spacing(), "trailing") << "the config's spacing was saved as the user's";
  // A relaunch (no config) runs the user's spacing; applying and clearing the config gives it back too.
  write("c.txt", "wait_complete 2000\nexport state " + m_dir.file("relaunch.npy") + "\nscheduler_config " +
                     m_dir.file("leading.json") + "\nscheduler_config\nwait_complete 2000\nexport state " +
                     m_dir.file("cleared.npy") + "\n");
  r = run_gui("--config-dir '" + cfg + "' --size 640x480 --n 64 --model '" + model + "' --script '" +
              m_dir.file("c.txt") + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(guitest::slurp(m_dir.file("relaunch.json")))["spacing"], "trailing");
  EXPECT_EQ(nlohmann::json::parse(guitest::slurp(m_dir.file("cleared.json")))["spacing"], "trailing");
  EXPECT_EQ(saved_spacing(), "trailing");
}

// A prediction_type override is for the session, as a scheduler config is: the settings file keeps from_file, so
// the next launch's model (moons: its file names no family) runs as epsilon again; the export's sidecar keeps it.
TEST_F(GuiHeadless, FamilyOverrideIsNotSaved) {
  const std::string cfg = m_dir.file("cfg"), model = guitest::model_2d();
  write("a.txt", "set prediction_type v_prediction\nset steps 5\nwait_complete 2000\nexport state " +
                     m_dir.file("v.npy") + "\n");
  const Result r = run_gui("--config-dir '" + cfg + "' --size 640x480 --n 64 --model '" + model + "' --script '" +
                           m_dir.file("a.txt") + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(guitest::slurp(m_dir.file("v.json")))["prediction_type"], "v_prediction");
  EXPECT_EQ(nlohmann::json::parse(guitest::slurp(cfg + "/settings.json"))["sampling"]["prediction_type"], "from_file");
}

// Single-key shortcuts act only when no widget has the keyboard. Keys typed right after a click on a text field
// (in the click's own frame: a slow CPU frame collects them) are the field's: no snapshot, no video, the UI
// stays shown and playback untouched; the same keys with no field focused do act.
TEST_F(GuiHeadless, ShortcutKeysTypedIntoATextFieldAreTheFields) {
  const std::string ex = m_dir.file("exports");
  write("s.txt", "set export_dir " + ex + "\nset n 64\nset steps 10\nwait_complete 2000\nkey Home\n"
                 "expect playing == 0\nclick model_path S V H Space\nkey S\nkey V\nkey H\nkey Space\n"
                 "frames 3\nexpect exports == 0\nexpect show_ui == 1\nexpect playing == 0\n"
                 "click scheduler_config S\nexpect exports == 0\n"
                 // the field lets go of the keyboard when the view is clicked: S acts again
                 "mouse 900 300\nmouse 900 300 down\nmouse 900 300 up\nkey S\nexpect exports == 1\n");
  const Result r = run_gui("--no-persist --size 1280x800 --model '" + guitest::model_2d() + "' --script '" +
                           m_dir.file("s.txt") + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  size_t files = 0;
  if (std::filesystem::exists(ex))
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(ex)) ++files;
  EXPECT_EQ(files, 2u) << "only the last S's snapshot and its sidecar";
}

TEST_F(GuiHeadless, ReplayAtTheEndTakesOnePress) {
  // At the last frame of a finished run (still "playing"), Space replays from frame 0 at once.
  write("s.txt", "set n 16\nset steps 40\nwait_complete 2000\nexpect frame == 40\nexpect playing == 1\n"
                 "set speed 1\nkey Space\nexpect playing == 1\nexpect frame < 10\n");
  const Result r = run_gui("--no-persist --size 320x240 --model '" + guitest::model_2d() + "' --script '" +
                           m_dir.file("s.txt") + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST_F(GuiHeadless, MistypedModelExitsAtOnce) {
  // No script, a mistyped bundled name or a bad file: exit 2 at once, the bundled names listed.
  write("bad.safetensors", "this is not a safetensors file");
  const auto t0 = std::chrono::steady_clock::now();
  Result r = run_gui("--no-persist --size 320x240 --model moon");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("moons"), std::string::npos) << "lists the bundled names: " << r.err;
  r = run_gui("--no-persist --size 320x240 --model '" + m_dir.file("bad.safetensors") + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("bad.safetensors"), std::string::npos) << r.err;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 60.0);
}

TEST_F(GuiHeadless, BadModelKeepsTheCurrentOne) {
  write("bad.safetensors", "this is not a safetensors file");
  write("s.txt", "set n 64\nset steps 5\nwait_complete 1000\nmodel " + m_dir.file("bad.safetensors") +
                     "\nwait_complete 1000\nexpect steps == 5\nexpect complete == 1\n");
  const Result r = run_gui("--no-persist --size 640x480 --model '" + guitest::model_2d() + "' --script '" +
                           m_dir.file("s.txt") + "'");
  // The script goes on with the current model (its expectations hold) and the run fails after it, naming the line.
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("script:4: model: "), std::string::npos) << "the load error is reported: " << r.out;
  EXPECT_NE(r.err.find("1 command failed, the first: script:4: model " + m_dir.file("bad.safetensors") + ": "),
            std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("expectation"), std::string::npos) << r.err;
}

TEST_F(GuiHeadless, SettingsPersistAndCorruptFileFallsBack) {
  const std::string cfg = m_dir.file("cfg");
  write("a.txt", "set steps 33\nset t_start 400\nframes 2\n");
  Result r = run_gui("--config-dir '" + cfg + "' --size 640x480 --n 64 --model '" + guitest::model_2d() +
                     "' --script '" + m_dir.file("a.txt") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(std::filesystem::exists(cfg + "/settings.json"));
  write("b.txt", "frames 1\nexpect steps == 33\nexpect t_start == 400\n");
  r = run_gui("--config-dir '" + cfg + "' --size 640x480 --n 64 --model '" + guitest::model_2d() + "' --script '" +
              m_dir.file("b.txt") + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;

  std::ofstream(cfg + "/settings.json") << "{ not json";
  write("c.txt", "frames 1\nexpect steps == 100\n");  // the default
  r = run_gui("--config-dir '" + cfg + "' --size 640x480 --n 64 --model '" + guitest::model_2d() + "' --script '" +
              m_dir.file("c.txt") + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.err.find("corrupt"), std::string::npos) << r.err;
}

TEST_F(GuiHeadless, ImageModelGridExport) {
  const std::string model = test::repo_root() + "/assets/models/digits8x8.safetensors";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "no bundled digits8x8 model yet";
  write("s.txt", "set n 48\nset steps 10\nset grid_cols 8\nwait_complete 2000\nset export_dir " + m_dir.path() +
                     "\nexport grid " + m_dir.file("grid.png") + "\n");
  const Result r = run_gui("--no-persist --size 800x600 --model '" + model + "' --script '" + m_dir.file("s.txt") + "'");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const guitest::Png g = guitest::read_png(m_dir.file("grid.png"));
  EXPECT_EQ(g.w, 8 * 9 * 8);  // 8 columns x (8 pixels + 1 gap) x scale 8
  EXPECT_EQ(g.h, 6 * 9 * 8);  // 48 samples / 8 columns = 6 rows
  EXPECT_GT(g.distinct_colors(), 10u);
}

}  // namespace
}  // namespace diffscope
