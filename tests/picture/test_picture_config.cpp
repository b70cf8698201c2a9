// test_picture_config.cpp — a sidecar reproduces its picture: a GUI snapshot taken after
// scrubbing, zooming with the wheel and changing the view equals `diffscope sample --config <its sidecar> --png`
// pixel for pixel (decoded RGB compared, CPU backend, Mesa in CI); a PNG restored with --restore shows the same
// frame and re-exports the same pixels; the sidecar's command line reproduces the .npy bit for bit; --config
// lets explicit flags win, names unknown keys and is covered by the output-collision rule; `sample --png`
// keeps the GUI's defaults (point size 3, alpha 0.6 at any n; every frame kept under the memory budget).
// Expected values: the other program's decoded pixels / bytes, and the defaults as documented in SEMANTICS §6.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

#include "gui_test_util.h"
#include "shell/compute_select.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

guitest::Result run_gui(const std::string& args, const std::string& script_text, const test::TempDir& dir,
                        const test::TempDir& logs, const std::string& env = "", const std::string& backend = "cpu") {
  const std::string script = dir.file("script_" + std::to_string(std::hash<std::string>()(args + script_text)) + ".txt");
  std::ofstream(script) << script_text;
  return guitest::run_cli("gui --headless --backend " + backend + " --no-persist --size 1024x700 " + args + " --script '" +
                              script + "'",
                          logs.path(), env);
}

nlohmann::json sidecar(const std::string& path) { return nlohmann::json::parse(guitest::slurp(path)); }

// The raw float32 payload of a .npy (the last n bytes of the file).
std::string npy_payload(const std::string& path, size_t bytes) {
  const std::string all = guitest::slurp(path);
  return all.size() >= bytes ? all.substr(all.size() - bytes) : "";
}

// The GUI run of these tests: moons-like 2D model, 400 samples, 25 ddim steps, eta 0.25, trails 5, field on.
const char* kRun =
    "set n 400\nset t_start 600\nset steps 25\nset seed 9\nset eta 0.25\nset trail_frames 5\nset point_size 5\n"
    "set point_alpha 0.8\nset show_field 1\nset export_size 240x180\nwait_complete 5000\n";

TEST(PictureConfig, GuiSnapshotEqualsSampleConfigPixelForPixel) {
  test::TempDir dir, logs;
  // Scrub back 11 frames, zoom twice with the wheel about a point right of the centre, change the view.
  guitest::Result r = run_gui("--model '" + guitest::model_2d() + "'",
                              std::string(kRun) + "key Left\nkey Left shift\nwheel 700 350 2\nset show_data 0\nset show_axes 0\n"
                                                  "export snapshot " + dir.file("g.png") + "\n",
                              dir, logs);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json g = sidecar(dir.file("g.json"));
  ASSERT_EQ(g["frame"], 25 - 11);
  ASSERT_EQ(g["view"]["cam_auto"], false) << "the wheel did not zoom";
  const guitest::Png a = guitest::read_png(dir.file("g.png"));
  ASSERT_EQ(a.w, 240);
  ASSERT_GT(a.distinct_colors(), 20u);

  for (const char* from : {"g.png", "g.json"}) {
    SCOPED_TRACE(from);
    const std::string png = dir.file(std::string("c_") + from + ".png");
    r = guitest::run_cli("sample --config '" + dir.file(from) + "' --out '" + dir.file("c.npy") + "' --png '" + png + "'",
                         logs.path());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err.find("unknown keys"), std::string::npos) << r.err;
    const guitest::Png b = guitest::read_png(png);
    ASSERT_EQ(b.w, a.w);
    ASSERT_EQ(b.h, a.h);
    size_t differ = 0;
    for (size_t i = 0; i < a.rgb.size(); ++i) differ += a.rgb[i] != b.rgb[i];
    EXPECT_EQ(differ, 0u) << "bytes differing between the GUI snapshot and sample --config " << from;
  }

  // The sidecar's command line alone reproduces the snapshot: its --png is the snapshot's own path (written again
  // here), --frame the shown frame, and every picture option of the view is on it.
  const std::string line = g["command_line"].get<std::string>();
  ASSERT_EQ(line.rfind("diffscope sample ", 0), 0u) << line;
  EXPECT_NE(line.find(" --frame 14 "), std::string::npos) << line;
  EXPECT_NE(line.find(" --png "), std::string::npos) << line;
  EXPECT_NE(line.find(" --point-size 5"), std::string::npos) << line;
  r = guitest::run_cli(line.substr(std::string("diffscope ").size()), logs.path());
  ASSERT_EQ(r.code, 0) << line << "\n" << r.err;
  EXPECT_TRUE(guitest::read_png(dir.file("g.png")).rgb == a.rgb) << "the command line's picture differs: " << line;

  // UI scale 1.5 (point sizes in pixels) and the automatic camera: the same.
  r = run_gui("--model '" + guitest::model_2d() + "'", std::string(kRun) + "export snapshot " + dir.file("s.png") + "\n",
              dir, logs, "DIFFSCOPE_UI_SCALE=1.5");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(sidecar(dir.file("s.json"))["view"]["ui_scale"], 1.5);
  r = guitest::run_cli("sample --config '" + dir.file("s.json") + "' --out '" + dir.file("d.npy") + "' --png '" +
                           dir.file("d.png") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(guitest::read_png(dir.file("s.png")).rgb == guitest::read_png(dir.file("d.png")).rgb);
}

TEST(PictureConfig, RestoreShowsTheSameFrameAndReExportsTheSamePixels) {
  test::TempDir dir, logs;
  guitest::Result r = run_gui("--model '" + guitest::model_2d() + "'",
                              std::string(kRun) + "key Left shift\nwheel 600 300 -1\nexport snapshot " + dir.file("a.png") + "\n",
                              dir, logs);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ASSERT_EQ(sidecar(dir.file("a.json"))["frame"], 15);
  r = run_gui("--restore '" + dir.file("a.png") + "'", "wait_complete 5000\nexpect frame == 15\nexport snapshot " +
                                                            dir.file("b.png") + "\n",
              dir, logs);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(sidecar(dir.file("b.json"))["frame"], 15);
  EXPECT_TRUE(guitest::read_png(dir.file("a.png")).rgb == guitest::read_png(dir.file("b.png")).rgb);
  // Restored into a window of another shape (1800 x 600: its 2D pane is wider than the 240 x 180 export, 1024 x
  // 700's is narrower, so an export camera taken from the new pane would show another region): the restored
  // camera keeps the pane aspect it was set in for exports, so the re-export is the same picture.
  r = run_gui("--restore '" + dir.file("a.png") + "'", "size 1800 600\nwait_complete 5000\nexpect frame == 15\n"
                                                         "export snapshot " + dir.file("c.png") + "\n",
              dir, logs);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(guitest::read_png(dir.file("a.png")).rgb == guitest::read_png(dir.file("c.png")).rgb);
  // Dropped on a running window (the script's `restore`): the same frame too.
  r = run_gui("--model '" + guitest::model_2d() + "'",
              "set n 50\nset steps 4\nwait_complete 5000\nrestore " + dir.file("a.png") +
                  "\nwait_complete 5000\nexpect frame == 15\nexpect playing == 0\n",
              dir, logs);
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

TEST(PictureConfig, CopiedCommandLineReproducesTheNpyBitForBit) {
  test::TempDir dir, logs;
  guitest::Result r = run_gui("--model '" + guitest::model_2d() + "'",
                              std::string(kRun) + "export state " + dir.file("state.npy") + "\n", dir, logs);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  std::string line = sidecar(dir.file("state.json"))["command_line"].get<std::string>();
  ASSERT_EQ(line.rfind("diffscope sample ", 0), 0u) << line;
  // The export's own file is the line's --out: it is written again, from another folder.
  EXPECT_NE(line.find(" --out " + dir.file("state.npy")), std::string::npos) << line;
  const size_t bytes = 400 * 2 * sizeof(float);
  const std::string gui = npy_payload(dir.file("state.npy"), bytes);
  ASSERT_EQ(gui.size(), bytes);
  std::filesystem::remove(dir.file("state.npy"));
  line = "cd '" + logs.path() + "' && '" + test::cli_binary() + "'" + line.substr(std::string("diffscope").size()) +
         " >'" + logs.file("o") + "' 2>&1";
  ASSERT_EQ(std::system(line.c_str()), 0) << guitest::slurp(logs.file("o"));
  EXPECT_TRUE(gui == npy_payload(dir.file("state.npy"), bytes)) << "the command line's .npy differs from the GUI's state";
}

// A CLI run from one folder with a relative model path, re-run with --config from another folder at --frame 50: the
// sidecar stores the model by its absolute path, --out holds frame 50's state (the first run's trajectory slice),
// and the new sidecar's command_line names every output and picture option, reproducing both files from a third
// folder.
TEST(PictureConfig, ConfigFromAnotherFolderWritesTheFramesStateAndItsCommandLineReproducesTheRun) {
  test::TempDir a, b, c, logs;
  fs::copy_file(test::data_path("golden/d2_h256.safetensors"), a.file("m.safetensors"));  // no bundled model's bytes
  const int n = 64, steps = 100, dim = 2;
  guitest::Result r = guitest::run_cli("sample --backend cpu --model m.safetensors --n 64 --steps 100 --t-start 999 "
                                       "--size 64x64 --out x.npy --png x.png --trajectory t.npy",
                                       logs.path(), "cd '" + a.path() + "' &&");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json first = sidecar(a.file("x.json"));
  EXPECT_EQ(first["model"]["file"], a.file("m.safetensors"));
  r = guitest::run_cli("sample --config '" + a.file("x.json") + "' --frame 50 --point-size 4 --out x50.npy --png x50.png",
                       logs.path(), "cd '" + b.path() + "' &&");
  ASSERT_EQ(r.code, 0) << r.err;
  // Frame 50 of the trajectory (101, 64, 2): the slice [50] of the first run's file.
  const size_t frame_bytes = size_t(n) * dim * sizeof(float);
  const std::string traj = npy_payload(a.file("t.npy"), (steps + 1) * frame_bytes);
  ASSERT_EQ(traj.size(), (steps + 1) * frame_bytes);
  const std::string x50 = npy_payload(b.file("x50.npy"), frame_bytes);
  EXPECT_TRUE(x50 == traj.substr(50 * frame_bytes, frame_bytes)) << "--out is not frame 50's state";
  EXPECT_FALSE(x50 == npy_payload(a.file("x.npy"), frame_bytes)) << "--out is the final state";

  const nlohmann::json j = sidecar(b.file("x50.json"));
  EXPECT_EQ(j["frame"], 50);
  const std::string line = j["command_line"].get<std::string>();
  for (const std::string& part : {" --model " + a.file("m.safetensors") + " ", std::string(" --out x50.npy"),
                                  std::string(" --frame 50"), std::string(" --png x50.png"), std::string(" --size 64x64"),
                                  std::string(" --point-size 4")})
    EXPECT_NE(line.find(part), std::string::npos) << part << " missing from: " << line;
  const std::string cmd = "cd '" + c.path() + "' && '" + test::cli_binary() + "'" +
                          line.substr(std::string("diffscope").size()) + " >'" + logs.file("o") + "' 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << guitest::slurp(logs.file("o"));
  EXPECT_EQ(guitest::slurp(c.file("x50.npy")), guitest::slurp(b.file("x50.npy")));
  EXPECT_TRUE(guitest::read_png(c.file("x50.png")).rgb == guitest::read_png(b.file("x50.png")).rgb);
}

TEST(PictureConfig, ConfigFlagsWinUnknownKeysAreNamedOutputsMayNotCollide) {
  test::TempDir dir, logs;
  const std::string m = guitest::model_2d();
  guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + m + "' --n 60 --steps 5 --t-start 300 --seed 4 --out '" +
                                           dir.file("a.npy") + "' --png '" + dir.file("a.png") + "' --size 64x48",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = sidecar(dir.file("a.json"));
  j["frobnicate"] = 1;
  j["view"]["wibble"] = true;
  std::ofstream(dir.file("cfg.json")) << j.dump();
  r = guitest::run_cli("sample --config '" + dir.file("cfg.json") + "' --seed 5 --point-size 7 --out '" + dir.file("b.npy") +
                           "' --png '" + dir.file("b.png") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("unknown keys ignored: frobnicate, wibble"), std::string::npos) << r.err;
  const nlohmann::json b = sidecar(dir.file("b.json"));
  EXPECT_EQ(b["seed"], 5);                   // the flag
  EXPECT_EQ(b["n"], 60);                     // the config
  EXPECT_EQ(b["steps"], 5);
  EXPECT_EQ(b["t_start"], 300);
  EXPECT_EQ(b["export_width"], 64);
  EXPECT_EQ(b["view"]["point_size"], 7.0);   // the flag
  // --config is an input: an output over it is refused before any work, nothing written.
  r = guitest::run_cli("sample --config '" + dir.file("cfg.json") + "' --out '" + dir.file("c.npy") + "' --png '" +
                           dir.file("cfg.png") + "'",
                       logs.path());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--config"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.file("c.npy")));
}

TEST(PictureConfig, DefaultViewSnapshotEqualsSamplePngWithTheRunsValues) {
  // No --config: the run's values as flags, and the window pane's aspect for the automatic camera.
  test::TempDir dir, logs;
  guitest::Result r = run_gui("--model '" + guitest::model_2d() + "'",
                              "set n 400\nset t_start 600\nset steps 25\nset seed 9\nset trail_frames 12\n"
                              "set export_size 240x180\nwait_complete 5000\nexport snapshot " + dir.file("g.png") + "\n",
                              dir, logs);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json g = sidecar(dir.file("g.json"));
  ASSERT_EQ(g["view"]["cam_auto"], true);
  r = guitest::run_cli("sample --backend cpu --model '" + guitest::model_2d() + "' --n 400 --t-start 600 --steps 25 --seed 9 "
                       "--size 240x180 --camera-aspect " + g["view"]["camera_aspect"].dump() + " --out '" +
                           dir.file("c.npy") + "' --png '" + dir.file("c.png") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(guitest::read_png(dir.file("g.png")).rgb == guitest::read_png(dir.file("c.png")).rgb);
}

TEST(PictureConfig, SamplePngKeepsTheGuiDefaultsAtEveryN) {
  test::TempDir dir, logs;
  // Above 20,000 samples the CLI used to draw points of 2 px at alpha 0.35 and keep every ceil(steps/48)-th
  // frame; the GUI keeps 3 px, 0.6 and every frame within its 1024 MB budget (SEMANTICS §6, settings defaults).
  const guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + guitest::model_2d() +
                                                 "' --n 20001 --steps 100 --t-start 99 --out '" + dir.file("x.npy") +
                                                 "' --png '" + dir.file("p.png") + "' --size 64x64",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = sidecar(dir.file("p.json"));
  EXPECT_EQ(j["format"], 3);
  EXPECT_EQ(j["view"]["point_size"], 3.0);
  EXPECT_FLOAT_EQ(j["view"]["point_alpha"].get<float>(), 0.6f);
  EXPECT_EQ(j["view"]["trail_frames"], 12);
  EXPECT_EQ(j["trajectory_stride"], 1);
  EXPECT_EQ(j["frame"], 100);
}

// The same on CUDA (the H200): the GUI's CUDA path and `sample --config` (backend cuda from the sidecar) draw
// the start noise with the same device kernel, so the state, the command line's .npy and the picture agree bit
// for bit, and both evaluate the field arrows with the eps-field kernel.
TEST(PictureConfig, CudaGuiSnapshotAndCommandLineMatchTheCli) {
  if (!shell::cuda_available()) GTEST_SKIP() << "no CUDA device";
  test::TempDir dir, logs;
  guitest::Result r = run_gui("--model '" + guitest::model_2d() + "'",
                              "set n 4096\nset t_start 999\nset steps 100\nset seed 3\nset export_size 320x240\n"
                              "wait_complete 5000\nexport state " + dir.file("state.npy") +
                                  "\nkey Left shift\nwheel 700 350 2\nset trail_frames 7\nset show_field 1\nexport snapshot " +
                                  dir.file("g.png") + "\n",
                              dir, logs, "", "cuda");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  ASSERT_EQ(sidecar(dir.file("g.json"))["backend"].get<std::string>().rfind("cuda", 0), 0u);
  r = guitest::run_cli("sample --config '" + dir.file("g.png") + "' --out '" + dir.file("c.npy") + "' --png '" +
                           dir.file("c.png") + "'",
                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(guitest::read_png(dir.file("g.png")).rgb == guitest::read_png(dir.file("c.png")).rgb)
      << "the CUDA GUI snapshot differs from sample --config --png";
  std::string line = sidecar(dir.file("state.json"))["command_line"].get<std::string>();
  const size_t bytes = 4096 * 2 * sizeof(float);
  const std::string gui = npy_payload(dir.file("state.npy"), bytes);
  std::filesystem::remove(dir.file("state.npy"));
  line = "cd '" + dir.path() + "' && '" + test::cli_binary() + "'" + line.substr(std::string("diffscope").size()) +
         " >'" + logs.file("o") + "' 2>&1";
  ASSERT_EQ(std::system(line.c_str()), 0) << guitest::slurp(logs.file("o"));
  EXPECT_TRUE(gui == npy_payload(dir.file("state.npy"), bytes)) << "the command line's .npy differs from the CUDA GUI's state";
}

}  // namespace
}  // namespace diffscope
