// test_app_model.cpp — the app's model (App::load_model) through the headless app: a model file replaced or
// truncated while loaded (the loaded model keeps working), malformed models or models of another prediction type
// picked in the UI (an error, the current model runs on), a saved model that no longer loads (the default, with a
// message), and t_start following the model's schedule (its top, or below the first t it cannot run).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/sha256.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using guitest::Result;

class AppModel : public guitest::AppFixture {};

const std::string kModel = guitest::model_2d();

TEST_F(AppModel, ModelFileReplacedWhileLoaded) {
  const std::string m = file("m.safetensors");
  fs::copy_file(kModel, m);
  const std::string sha = sha256_file(m);
  ASSERT_FALSE(sha.empty());
  // `export state` onto the model's own path replaces it (atomically: a new file) with an .npy.
  const Result r = run_gui("model " + m + "\nset n 64\nset steps 10\nset t_start 200\nwait_complete 5000\n"
                           "export state " + m + "\n"
                           "set seed 3\nwait_complete 5000\nexpect complete == 1\nexpect computed == 10\n"
                           "export snapshot " + file("after.png") + "\n"
                           "model " + m + "\nframes 2\nexpect steps == 10\nexpect complete == 1\n"
                           "set seed 4\nwait_complete 5000\nexpect computed == 10\n");
  EXPECT_EQ(r.code, 2) << r.out << r.err;  // the failed reload fails the run, after the script (its expectations hold)
  EXPECT_NE(r.err.find("1 command failed, the first: script:12: model " + m + ": "), std::string::npos) << r.err;
  EXPECT_NE(sha256_file(m), sha) << "the file was not replaced";
  EXPECT_NE(r.out.find("model: "), std::string::npos) << "reloading the broken file is an error: " << r.out;
  EXPECT_NE(r.out.find("still showing"), std::string::npos) << r.out;
  // The sidecar names the bytes that were loaded, not what the path holds now.
  EXPECT_EQ(sidecar(file("after.json"))["model"]["sha256"], sha);
}

TEST_F(AppModel, ModelFileTruncatedInPlaceWhileLoaded) {
  // The test truncates the file (same inode) while the app runs frames; the app must not notice until it
  // reloads the file, which then fails and keeps the loaded model.
  const std::string m = file("m.safetensors");
  fs::copy_file(kModel, m);
  write("script.txt", "model " + m + "\nset n 64\nset steps 10\nset t_start 200\nwait_complete 5000\nprint\n"
                      "frames 600\nset seed 9\nwait_complete 5000\nexpect computed == 10\n"
                      "model " + m + "\nframes 2\nexpect complete == 1\nexpect steps == 10\n");
  const std::string out = logs.file("bg.out"), err = logs.file("bg.err");
  const std::string cmd = "'" + test::cli_binary() + "' gui --headless --backend cpu --no-persist --size 320x240 "
                          "--script '" + file("script.txt") + "' >'" + out + "' 2>'" + err + "' </dev/null";
  std::thread app([&] {
    const int status = std::system(cmd.c_str());
    // exit 2: the failed reload of the truncated file (the script's expectations hold)
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << guitest::slurp(out) << guitest::slurp(err);
    EXPECT_EQ(guitest::slurp(err).find("expectation"), std::string::npos) << guitest::slurp(err);
  });
  bool truncated = false;
  for (int i = 0; i < 6000 && !truncated; ++i) {  // up to 60 s for the first run to finish
    if (guitest::slurp(out).find("\"complete\": 1") != std::string::npos) {
      fs::resize_file(m, 100);
      truncated = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  app.join();
  ASSERT_TRUE(truncated) << guitest::slurp(out) << guitest::slurp(err);
  const std::string o = guitest::slurp(out);
  EXPECT_NE(o.find("model: "), std::string::npos) << "the truncated file must be refused on reload: " << o;
  EXPECT_EQ(o.find("failed"), std::string::npos) << o;
}

TEST_F(AppModel, MalformedModelsPickedInTheUi) {
  const std::string bytes = guitest::slurp(kModel);
  test::write_bytes(file("half.safetensors"), bytes.substr(0, bytes.size() / 2));
  test::write_bytes(file("header_only.safetensors"), bytes.substr(0, 8));
  test::write_bytes(file("empty.safetensors"), "");
  // a network whose middle layer does not fit the first (SEMANTICS §2 shapes)
  test::StBuilder bad = test::eps_net_builder(2, 8);
  bad.add_at("eps_net.2.weight", "F32", {8, 7}, 0, 8 * 7 * 4);
  bad.write(file("shapes.safetensors"));
  fs::create_directories(file("folder.safetensors"));
  const std::vector<std::string> bad_files = {"half.safetensors", "header_only.safetensors", "empty.safetensors",
                                              "shapes.safetensors", "folder.safetensors", "missing.safetensors"};
  std::string script = "set n 64\nset steps 6\nset t_start 100\nwait_complete 5000\n";
  for (const auto& f : bad_files)
    script += "model " + file(f) + "\nframes 2\nexpect steps == 6\nexpect complete == 1\nexpect computed == 6\n";
  script += "set seed 11\nwait_complete 5000\nexpect computed == 6\nmodel digits8x8\nwait_complete 20000\nprint\n";
  const Result r = run_gui(script, "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;  // every refused model counts; the expectations between them hold
  EXPECT_NE(r.err.find(std::to_string(bad_files.size()) + " commands failed, the first: script:5: model " +
                       file("half.safetensors") + ": "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("expectation"), std::string::npos) << r.err;
  size_t errors = 0;
  for (size_t p = r.out.find(": model: "); p != std::string::npos; p = r.out.find(": model: ", p + 1)) ++errors;
  EXPECT_EQ(errors, bad_files.size()) << r.out;
  EXPECT_NE(r.out.find("\"complete\": 1"), std::string::npos) << r.out;
}

// prediction-type in the app: the model picker, a dropped file and a script's `model` line all load through
// App::load_model, and `restore` of a sidecar naming such a model does too. A made-up prediction_type shows the
// error naming the key and the value; the current model keeps running.
TEST_F(AppModel, ModelOfAnUnknownPredictionTypeRefusedWhileTheCurrentOneRuns) {
  const std::string v = test::data_path("reported/prediction-type/unknown.safetensors");
  write("side.json", nlohmann::json{{"format", 2}, {"model", {{"file", v}}}, {"n", 64}}.dump());
  const std::string script = "set n 64\nset steps 6\nset t_start 100\nwait_complete 5000\nmodel " + v +
                             "\nframes 2\nexpect complete == 1\nexpect computed == 6\nrestore " + file("side.json") +
                             "\nframes 2\nset seed 3\nwait_complete 5000\nexpect computed == 6\n";
  const Result r = run_gui(script, "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  // both the model line and the restore failed (the restore's model error is the second failure), and the
  // expectations between them held: the current model kept running
  EXPECT_NE(r.err.find("2 commands failed, the first: script:5: model " + v +
                       ": __metadata__ 'prediction_type' = 'velocity-ish'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(v + ": " + v), std::string::npos) << "the path named twice: " << r.err;
  EXPECT_EQ(r.err.find("expectation(s) failed"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("supported: epsilon"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(still showing "), std::string::npos) << r.out;
}

// A file of another family (SEMANTICS §2) loads and runs in its family in the app, by a script's `model` line and
// by `restore`: v_prediction keeps t_start a timestep; a flow file makes it an index into its list (0).
TEST_F(AppModel, ModelsOfEveryFamilyLoadAndRunInTheirFamily) {
  const std::string dir = test::data_path("reported/prediction-type/");
  const std::string v = dir + "v_prediction.safetensors", flow = dir + "flow.safetensors";
  write("side.json", nlohmann::json{{"format", 2}, {"model", {{"file", v}}}, {"n", 64}}.dump());
  const std::string script = "set n 64\nset steps 6\nset t_start 100\nwait_complete 5000\nmodel " + v +
                             "\nwait_complete 5000\nexpect computed == 6\nexpect t_start == 100\nrestore " +
                             file("side.json") + "\nwait_complete 5000\nexpect computed == 6\nmodel " + flow +
                             "\nwait_complete 5000\nexpect t_start == 0\nexpect complete == 1\n";
  const Result r = run_gui(script, "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

// t-not-1000 in the app: the default t_start is the model's top (SEMANTICS §3). A model of T = 20000 (sigma
// overflows float32 from t = 18726) starts at 18725 where it used to start at 999; picking it while at the top of
// moons' range goes to its top, and back; a t_start typed on the command line, set by the user or restored from a
// sidecar is kept.
TEST_F(AppModel, DefaultTStartIsTheModelsTop) {
  const std::string big = test::data_path("reported/schedule-underflow/lin_T20000.safetensors");
  const std::string run = "set n 16\nset steps 4\nframes 2\n";
  Result r = run_gui(run + "expect t_start == 18725\n", "--model '" + big + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  r = run_gui(run + "expect t_start == 700\n", "--model '" + big + "' --t-start 700");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  write("side.json", nlohmann::json{{"format", 2}, {"model", {{"file", big}}}, {"t_start", 999}, {"n", 16},
                                    {"steps", 4}}.dump());
  r = run_gui(run + "expect t_start == 999\nmodel " + big + "\nframes 2\nexpect t_start == 18725\nmodel " + kModel +
                  "\nframes 2\nexpect t_start == 999\nset t_start 500\nframes 1\nmodel " + big +
                  "\nframes 2\nexpect t_start == 500\nmodel " + kModel + "\nframes 2\nset t_start 999\nframes 1\n"
                  "restore " + file("side.json") + "\nframes 2\nexpect t_start == 999\n",
              "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

// Found by a newcomer trial.
// A truncated model named by settings.json: the window used to open with no model ("(none)", steps 0).
TEST_F(AppModel, SavedModelThatDoesNotLoadFallsBackToTheDefault) {
  const std::string cfg = dir.file("cfg"), bad = dir.file("truncated.safetensors");
  fs::create_directories(cfg);
  const std::string whole = guitest::slurp(test::repo_root() + "/assets/models/moons.safetensors");
  ASSERT_GT(whole.size(), 100u);
  test::write_bytes(bad, whole.substr(0, 100));
  std::ofstream(cfg + "/settings.json") << nlohmann::json({{"sampling", {{"model_path", bad}}}}).dump();
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg +
                                                 "' --script '" + script("frames 3\nexpect steps == 100\n") + "'",
                                             logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_TRUE(has(r.err, "model: model " + bad + " from the settings could not be loaded: ")) << r.err;
  EXPECT_TRUE(has(r.err, "(showing the default model instead)")) << r.err;
}

// Found by the public bug reports (tests/data/reported/).
// schedule-underflow in the GUI: the session clamps t_start below the first t whose sigma leaves float32
// (t = 25 for 120 betas of 0.999: abar[25] = 1e-78 < 1 / FLT_MAX^2) and runs there, finitely, instead of
// showing all-NaN samples.
TEST_F(AppModel, UnderflowingScheduleRunsBelowTheFirstUnusableT) {
  const guitest::Result r = guitest::run_cli(
      "gui --headless --backend cpu --size 320x240 --n 32 --no-persist --model '" +
          test::data_path("reported/schedule-underflow/underflow_betas.safetensors") + "' --script '" +
          script("frames 40\nexpect t_start == 24\nexpect computed >= 1\nexport state " + dir.file("s.npy") + "\n") +
          "'",
      logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("export state: " + dir.file("s.npy")), std::string::npos) << r.out;  // finite, so written
}

}  // namespace
}  // namespace diffscope
