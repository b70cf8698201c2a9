// test_hardening.cpp — issue 6's faults, driven through the headless UI (Mesa EGL, CPU backend):
// script and command-line values accepted at every boundary of base/ranges.h's ranges and refused past it; exports to an unwritable place or a
// full disk (an error, nothing half-written, the session goes on); a model file replaced or truncated
// while loaded (the loaded model keeps working, reloading the broken file keeps the old one); a window
// minimised to 0x0 (no GL error); corrupt settings files (defaults with a note); malformed models picked
// in the UI (an error, the current model runs on).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "formats/sha256.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using guitest::Result;

class Hardening : public ::testing::Test {
 protected:
  test::TempDir m_dir, m_logs;

  std::string file(const std::string& name) const { return m_dir.file(name); }
  void write(const std::string& name, const std::string& text) { std::ofstream(file(name)) << text; }
  Result run_gui(const std::string& script, const std::string& args = "") {
    write("script.txt", script);
    Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 640x480 " + args + " --script '" +
                                    file("script.txt") + "'",
                                m_logs.path());
    if (r.code == 3 && r.err.find("EGL") != std::string::npos) ADD_FAILURE() << "no headless GL context: " << r.err;
    return r;
  }
  static nlohmann::json sidecar(const std::string& path) { return nlohmann::json::parse(guitest::slurp(path)); }
  // Names in `dir` (not recursive), sorted.
  static std::vector<std::string> names(const std::string& dir) {
    std::vector<std::string> v;
    for (const auto& e : fs::directory_iterator(dir)) v.push_back(e.path().filename().string());
    std::sort(v.begin(), v.end());
    return v;
  }
};

const std::string kModel = guitest::model_2d();

// ---------------------------------------------------------------------------------------------------------
// Ranges (SEMANTICS §3): script `set` lines and command-line values are accepted up to each boundary of
// base/ranges.h's ranges and refused (exit 2, the range named) one past it.

TEST_F(Hardening, ScriptValuesAcceptedAtEveryBoundary) {
  const std::string d = m_dir.path();
  const Result r = run_gui(
      "set n 50\nset t_start 0\nexpect t_start == 0\nexpect steps == 1\n"  // steps follow into [1, 1]
      "set t_start 999\nexpect t_start == 999\n"
      "set steps 1000\nexpect steps == 1000\n"
      "set steps 1\nexpect steps == 1\n"
      "set t_start 9\nset steps 10\nexpect steps == 10\n"
      "set n 1\nexpect n == 1\n"
      "set n 1000000\nexpect n == 1000000\nset n 64\nexpect n == 64\n"
      "set eta 1\nexport state " + d + "/eta_hi.npy\n"
      "set eta 0\nexport state " + d + "/eta_lo.npy\n"
      "expect gl_errors == 0\n",
      "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(sidecar(d + "/eta_hi.json")["eta"], 1.0);
  EXPECT_EQ(sidecar(d + "/eta_lo.json")["eta"], 0.0);
}

TEST_F(Hardening, ScriptValuesPastEveryBoundaryAreRefused) {
  struct Case {
    const char* script;
    const char* range;
  };
  for (const Case& c : {Case{"set t_start -1", "[0, T - 1]"}, Case{"set t_start 1000", "[0, 999]"},
                        Case{"set steps 1001", "[1, 1000]"}, Case{"set steps 0", "[1, t_start + 1]"},
                        Case{"set t_start 9\nset steps 11", "[1, 10]"}, Case{"set n 0", "[1, 1000000]"},
                        Case{"set n -5", "[1, 1000000]"}, Case{"set n 1000001", "[1, 1000000]"},
                        Case{"set eta 1.001", "[0, 1]"}, Case{"set eta -0.001", "[0, 1]"}}) {
    const Result r = run_gui(std::string("set n 16\n") + c.script + "\nframes 1\n", "--model '" + kModel + "'");
    EXPECT_EQ(r.code, 2) << c.script << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find(c.range), std::string::npos) << c.script << ": " << r.err;
    EXPECT_NE(r.err.find("script:"), std::string::npos) << "names the script line: " << r.err;
  }
}

TEST_F(Hardening, CommandLineSetsAreRefusedToo) {
  for (const char* set : {"--set t_start=1000", "--set steps=1001", "--set n=0", "--set eta=1.5", "--set t_start=-1",
                          "--set steps=0", "--set eta=-1"}) {
    const Result r = run_gui("frames 1\n", "--model '" + kModel + "' " + set);
    EXPECT_EQ(r.code, 2) << set << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("out of range; valid: ["), std::string::npos) << set << ": " << r.err;
  }
}

TEST_F(Hardening, TStartClampFollowsTheLoadedModelsSchedule) {
  // A model with T = 50 (metadata, SEMANTICS §1): t_start clamps to 49 once it is loaded.
  const std::string t50 = test::eps_net_builder(2, 8).meta("T", "50").write(file("t50.safetensors"));
  const Result r = run_gui("set n 16\nset t_start 999\nexpect t_start == 999\nmodel " + t50 +
                               "\nframes 1\nexpect t_start == 49\nset t_start 49\nset steps 50\nexpect steps == 50\n",
                           "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  // and a script's t_start past the new model's T - 1 is refused, naming its range
  const Result r2 = run_gui("set n 16\nmodel " + t50 + "\nframes 1\nset t_start 50\n", "--model '" + kModel + "'");
  EXPECT_EQ(r2.code, 2) << r2.out << r2.err;
  EXPECT_NE(r2.err.find("[0, 49]"), std::string::npos) << r2.err;
}

// ---------------------------------------------------------------------------------------------------------
// Exports that cannot be written.

TEST_F(Hardening, UnwritableExportPathGivesErrorAndKeepsSession) {
  // Root ignores permission bits, so "unwritable" here is a path under a regular file (ENOTDIR) and /proc.
  write("blocker", "a file, not a folder");
  const std::string d = m_dir.path(), b = file("blocker");
  const Result r = run_gui(
      "set n 100\nset steps 12\nset t_start 300\nwait_complete 5000\nexpect computed == 12\n"
      "export snapshot " + b + "/x.png\nexport state " + b + "/x.npy\nexport trajectory " + b + "/t.npy\n"
      "export snapshot /proc/x.png\n"
      "set export_dir " + b + "/sub\nexport snapshot\nexport frames\n"
      // the session is untouched and the app keeps working
      "expect computed == 12\nexpect steps == 12\nexpect t_start == 300\nexpect complete == 1\n"
      "set export_dir " + d + "/good\nexport snapshot\nset seed 5\nwait_complete 5000\nexpect computed == 12\n"
      "expect gl_errors == 0\n",
      "--model '" + kModel + "'");
  // The script ran to its end (the good export exists), then the run failed naming the first bad export.
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("6 commands failed, the first: script:6: export snapshot: export " + b + "/x.png: cannot write"),
            std::string::npos)
      << r.err;
  size_t errors = 0;
  for (size_t p = r.out.find(": error: "); p != std::string::npos; p = r.out.find(": error: ", p + 1)) ++errors;
  EXPECT_EQ(errors, 6u) << r.out;  // each failed export reports its own error
  EXPECT_NE(r.out.find("export snapshot: error: export " + b + "/x.png: cannot write"), std::string::npos) << r.out;
  // Only the blocker, the script and the one good export (PNG + sidecar) exist.
  EXPECT_EQ(names(d), (std::vector<std::string>{"blocker", "good", "script.txt"}));
  EXPECT_EQ(names(d + "/good"), (std::vector<std::string>{"snapshot_0001.json", "snapshot_0001.png"}));
  EXPECT_EQ(guitest::slurp(b), "a file, not a folder");
}

TEST_F(Hardening, SidecarFailureRemovesTheExportedFile) {
  // x.json is a folder: the PNG (or .npy) is written, its sidecar cannot be; neither may stay behind.
  fs::create_directories(file("out/x.json"));
  fs::create_directories(file("out/s.json"));
  const std::string o = file("out");
  const Result r = run_gui("set n 64\nset steps 5\nwait_complete 5000\nexport snapshot " + o + "/x.png\n"
                           "export state " + o + "/s.npy\nexpect complete == 1\n",
                           "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("2 commands failed, the first: script:4: export snapshot:"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("export snapshot: error:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("export state: error:"), std::string::npos) << r.out;
  EXPECT_EQ(names(o), (std::vector<std::string>{"s.json", "x.json"})) << "half an export was left behind";
}

// A 64 KiB tmpfs: a real ENOSPC. Mounting needs CAP_SYS_ADMIN; the test skips where that is not allowed.
class FullDisk : public Hardening {
 protected:
  std::string m_mnt;
  bool m_mounted = false;
  void SetUp() override {
    m_mnt = file("full");
    fs::create_directories(m_mnt);
    const std::string cmd = "mount -t tmpfs -o size=64k diffscope-full '" + m_mnt + "' 2>/dev/null";
    m_mounted = std::system(cmd.c_str()) == 0;
  }
  void TearDown() override {
    if (m_mounted) std::system(("umount '" + m_mnt + "'").c_str());
  }
};

TEST_F(FullDisk, ExportToFullDiskLeavesNothingAndAppGoesOn) {
  if (!m_mounted) GTEST_SKIP() << "cannot mount a tmpfs here (needs CAP_SYS_ADMIN)";
  // trajectory: 41 frames x 2000 rows x 2 x 4 bytes = 656 KB > 64 KiB; state: 16 KB fits.
  const Result r = run_gui("set n 2000\nset t_start 400\nset steps 40\nwait_complete 20000\n"
                           "export trajectory " + m_mnt + "/t.npy\nexpect complete == 1\nexpect computed == 40\n"
                           "export state " + m_mnt + "/s.npy\n",
                           "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;  // the failed trajectory export, after the script's end
  EXPECT_NE(r.err.find("1 command failed, the first: script:5: export trajectory:"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("export trajectory: error: export " + m_mnt + "/t.npy: cannot write (No space left on device)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("export state: " + m_mnt + "/s.npy"), std::string::npos) << r.out;
  EXPECT_EQ(names(m_mnt), (std::vector<std::string>{"s.json", "s.npy"})) << "no temporary or partial file";
}

// ---------------------------------------------------------------------------------------------------------
// The model file changes under the running app.

TEST_F(Hardening, ModelFileReplacedWhileLoaded) {
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

TEST_F(Hardening, ModelFileTruncatedInPlaceWhileLoaded) {
  // The test truncates the file (same inode) while the app runs frames; the app must not notice until it
  // reloads the file, which then fails and keeps the loaded model.
  const std::string m = file("m.safetensors");
  fs::copy_file(kModel, m);
  write("script.txt", "model " + m + "\nset n 64\nset steps 10\nset t_start 200\nwait_complete 5000\nprint\n"
                      "frames 600\nset seed 9\nwait_complete 5000\nexpect computed == 10\n"
                      "model " + m + "\nframes 2\nexpect complete == 1\nexpect steps == 10\n");
  const std::string out = m_logs.file("bg.out"), err = m_logs.file("bg.err");
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

// ---------------------------------------------------------------------------------------------------------
// A minimised window: 0x0 framebuffer (and degenerate 0xH, Wx0, 1x1) for many frames.

TEST_F(Hardening, MinimisedWindowHasNoGlErrors) {
  const std::string d = m_dir.path();
  const Result r = run_gui("set n 300\nset steps 30\nset t_start 400\nset field 1\nset trail 8\nframes 2\n"
                           "size 0 0\nframes 30\nexpect gl_errors == 0\n"
                           "set steps 20\nkey Space\nkey Right\nframes 10\n"
                           "export snapshot " + d + "/min.png\n"
                           "size 0 480\nframes 5\nsize 640 0\nframes 5\nsize 1 1\nframes 5\n"
                           "model digits8x8\nsize 0 0\nframes 10\nsize 1 1\nframes 3\n"
                           "expect gl_errors == 0\n"
                           "size 640 480\nwait_complete 20000\nexpect gl_errors == 0\nprint\n",
                           "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("GL error"), std::string::npos) << r.err;
  // The export made while minimised renders at its own size.
  const guitest::Png png = guitest::read_png(d + "/min.png");
  EXPECT_EQ(png.w, 1024);
  EXPECT_GT(png.non_background(), 0.0005);
}

// ---------------------------------------------------------------------------------------------------------
// Settings files that are not what we wrote: defaults, with a note; the app runs.

TEST_F(Hardening, CorruptSettingsFilesFallBackWithANote) {
  struct Case {
    std::string name, bytes, note;
  };
  const std::vector<Case> cases = {
      {"empty", "", "corrupt"},
      {"binary", std::string("\x00\xff\xfe\x01garbage\x80", 12), "corrupt"},
      {"truncated", "{\"sampling\": {\"steps\": 33, \"t_st", "corrupt"},
      {"array", "[1, 2, 3]", "not a JSON object"},
      {"ill-typed", "{\"sampling\": {\"steps\": \"many\", \"n_samples\": [1]}}", "ill-typed field 'steps'"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string cfg = file("cfg_" + c.name);
    fs::create_directories(cfg);
    std::ofstream(cfg + "/settings.json", std::ios::binary) << c.bytes;
    write("s.txt", "frames 2\nexpect steps == 100\nexpect t_start == 999\nset steps 7\nframes 1\n");
    const Result r = guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg +
                                          "' --model '" + kModel + "' --script '" + file("s.txt") + "'",
                                      m_logs.path());
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.err.find(c.note), std::string::npos) << r.err;
    // On exit the app writes a good file again, with what was set in this session.
    const nlohmann::json j = nlohmann::json::parse(guitest::slurp(cfg + "/settings.json"));
    EXPECT_EQ(j["sampling"]["steps"], 7) << j.dump();
  }
  // Out-of-range values in a well-formed file are clamped like typed ones.
  const std::string cfg = file("cfg_range");
  fs::create_directories(cfg);
  std::ofstream(cfg + "/settings.json") << "{\"sampling\": {\"t_start\": 123456, \"steps\": -3, \"eta\": 7}}";
  write("s.txt", "frames 1\nexpect t_start == 999\nexpect steps == 1\n");
  const Result r = guitest::run_cli("gui --headless --backend cpu --size 320x240 --n 32 --config-dir '" + cfg +
                                        "' --model '" + kModel + "' --script '" + file("s.txt") + "'",
                                    m_logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
}

// ---------------------------------------------------------------------------------------------------------
// Malformed models picked in the UI: each is refused with an error; the current model keeps running.

TEST_F(Hardening, MalformedModelsPickedInTheUi) {
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
// App::load_model, and `restore` of a sidecar naming such a model does too. Each shows the error naming the key and
// the value; the current model keeps running.
TEST_F(Hardening, ModelOfAnotherPredictionTypeRefusedWhileTheCurrentOneRuns) {
  const std::string v = test::data_path("reported/prediction-type/v_prediction.safetensors");
  write("side.json", nlohmann::json{{"format", 2}, {"model", {{"file", v}}}, {"n", 64}}.dump());
  const std::string script = "set n 64\nset steps 6\nset t_start 100\nwait_complete 5000\nmodel " + v +
                             "\nframes 2\nexpect complete == 1\nexpect computed == 6\nrestore " + file("side.json") +
                             "\nframes 2\nset seed 3\nwait_complete 5000\nexpect computed == 6\n";
  const Result r = run_gui(script, "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  // both the model line and the restore failed (the restore's model error is the second failure), and the
  // expectations between them held: the current model kept running
  EXPECT_NE(r.err.find("2 commands failed, the first: script:5: model " + v +
                       ": __metadata__ 'prediction_type' = 'v_prediction'"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(v + ": " + v), std::string::npos) << "the path named twice: " << r.err;
  EXPECT_EQ(r.err.find("expectation(s) failed"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("supported: epsilon"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(still showing "), std::string::npos) << r.out;
}

// t-not-1000 in the app: the default t_start is the model's top (SEMANTICS §3). A model of T = 20000 (sigma
// overflows float32 from t = 18726) starts at 18725 where it used to start at 999; picking it while at the top of
// moons' range goes to its top, and back; a t_start typed on the command line, set by the user or restored from a
// sidecar is kept.
TEST_F(Hardening, DefaultTStartIsTheModelsTop) {
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

}  // namespace
}  // namespace diffscope
