// test_script_ranges.cpp — the ranges of base/ranges.h in the headless app (SEMANTICS §3): script `set` lines and
// command-line values are accepted up to each boundary and refused (exit 2, the range named) one past it; the
// t_start range follows the loaded model's schedule.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using guitest::Result;

class ScriptRanges : public guitest::AppFixture {};

const std::string kModel = guitest::model_2d();

TEST_F(ScriptRanges, ScriptValuesAcceptedAtEveryBoundary) {
  const std::string d = dir.path();
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

TEST_F(ScriptRanges, ScriptValuesPastEveryBoundaryAreRefused) {
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

TEST_F(ScriptRanges, CommandLineSetsAreRefusedToo) {
  for (const char* set : {"--set t_start=1000", "--set steps=1001", "--set n=0", "--set eta=1.5", "--set t_start=-1",
                          "--set steps=0", "--set eta=-1"}) {
    const Result r = run_gui("frames 1\n", "--model '" + kModel + "' " + set);
    EXPECT_EQ(r.code, 2) << set << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("out of range; valid: ["), std::string::npos) << set << ": " << r.err;
  }
}

TEST_F(ScriptRanges, TStartClampFollowsTheLoadedModelsSchedule) {
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

// The model-family keys (SEMANTICS §6): prediction_type, flow_shift and field_quantity by `set`; on a flow list
// t_start is an index in [0, steps - 1] (0 by default, and after loading a flow model); bad values exit 2.
TEST_F(ScriptRanges, FamilyKeysBySetAndTStartAsAListIndex) {
  const std::string flow = test::eps_net_builder(2, 8).meta("prediction_type", "flow").write(file("flow.safetensors"));
  const Result r = run_gui(
      "set n 16\nset steps 20\nexpect t_start == 999\nset prediction_type flow\nexpect t_start == 0\n"
      "set t_start 19\nexpect t_start == 19\nset flow_shift 3\nset field 1\nset field_quantity score\n"
      "set field_quantity output\nset prediction_type from_file\nexpect t_start == 999\n"
      "model " + flow + "\nframes 1\nexpect t_start == 0\nset t_start 7\nexpect t_start == 7\n"
      "set prediction_type epsilon\nexpect t_start == 7\nmodel " + kModel + "\nframes 1\nexpect t_start == 999\n"
      "expect gl_errors == 0\n",
      "--model '" + kModel + "'");
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  struct Case {
    const char* script;
    const char* message;
  };
  for (const Case& c : {Case{"set flow_shift 0", "from_file or a number in [0.001, 1000]"},
                        Case{"set flow_shift 1001", "from_file or a number in [0.001, 1000]"},
                        Case{"set prediction_type x0", "valid: from_file, epsilon"},
                        Case{"set field_quantity v", "valid: eps, x0, output, score"},
                        Case{"set prediction_type flow\nset t_start 20", "[0, 19]"},
                        Case{"set prediction_type edm\nset steps 1001", "[1, 1000]"}}) {
    const Result b = run_gui(std::string("set n 16\nset steps 20\n") + c.script + "\nframes 1\n", "--model '" + kModel + "'");
    EXPECT_EQ(b.code, 2) << c.script << "\n" << b.out << b.err;
    EXPECT_NE(b.err.find(c.message), std::string::npos) << c.script << ": " << b.err;
  }
}

}  // namespace
}  // namespace diffscope
