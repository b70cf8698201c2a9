// test_family_cli.cpp — the model-family options of the CLI (SEMANTICS §2 "Model families", §3 "Noise-level lists
// of the families", §6 sidecars): --prediction-type, --sigmas, --flow-shift and --flow-mu reach the sampling
// request as Python's keywords do; bad values exit 2 naming the option, the value and the valid values, and write
// nothing; `info` shows the convention line and the family keys; a sidecar records the run's family and each kept
// frame's noise level, and `--config` of it reproduces the run (an older sidecar runs with today's default, epsilon).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "cli_fixture.h"
#include "formats/npy.h"
#include "python/sample_request.h"

namespace diffscope {
namespace {

using Result = test::CliResult;

class FamilyCli : public test::CliFixture {
 protected:
  const std::string m_golden = test::data_path("golden/d2_h256.safetensors");  // names no prediction_type
  const std::string m_mixture = test::repo_root() + "/assets/models/gaussians8-exact.safetensors";
  // A sidecar of the mixture's run (16 samples, 6 steps, seed 5) with `keys` runs as the flags without them: the
  // same bytes, and stderr does not name `quiet`.
  void expect_sidecar_runs_as_plain(const nlohmann::json& keys, const std::string& quiet) {
    test::TempDir in;
    nlohmann::json j{{"model", {{"file", m_mixture}}}, {"n", 16}, {"steps", 6}, {"seed", 5}};
    j.update(keys);
    std::ofstream(in.file("side.json")) << j.dump();
    const Result a = run("sample --config '" + in.file("side.json") + "' --out '" + out("a.npy") + "'");
    ASSERT_EQ(a.code, 0) << a.err;
    const Result b = run("sample --model '" + m_mixture + "' --n 16 --steps 6 --seed 5 --out '" + out("b.npy") + "'");
    ASSERT_EQ(b.code, 0) << b.err;
    EXPECT_EQ(slurp(out("a.npy")), slurp(out("b.npy")));
    EXPECT_FALSE(has(a.err, quiet)) << a.err;
  }
  std::string sample_args(const std::string& extra) {
    return "sample --model '" + m_golden + "' --n 8 --out '" + out("x.npy") + "' " + extra;
  }
};

// The CLI's flags and Python's keywords give the same request fields.
TEST_F(FamilyCli, FamilyOptionsReachTheRequestAsPythonsKeywordsDo) {
  const SampleRequest cli = cli::sample_request_of({"--model", "m.safetensors", "--out", "x.npy", "--prediction-type",
                                                    "v_prediction", "--sigmas", "14.6,5.2,0.5", "--flow-shift", "3",
                                                    "--flow-mu", "-0.5"});
  python::SampleArgs a;
  a.prediction_type = Family::VPrediction;
  a.sigmas = {14.6, 5.2, 0.5};
  a.flow_shift = 3.0;
  a.flow_mu = -0.5;
  const SampleRequest py = python::sample_request(a);
  EXPECT_EQ(cli.prediction_type, std::optional<Family>(Family::VPrediction));
  EXPECT_EQ(cli.sigmas, (std::vector<double>{14.6, 5.2, 0.5}));
  EXPECT_EQ(cli.flow_shift, std::optional<double>(3.0));
  EXPECT_EQ(cli.flow_mu, std::optional<double>(-0.5));
  EXPECT_EQ(cli.prediction_type, py.prediction_type);
  EXPECT_EQ(cli.sigmas, py.sigmas);
  EXPECT_EQ(cli.flow_shift, py.flow_shift);
  EXPECT_EQ(cli.flow_mu, py.flow_mu);
  // "flow_prediction" (diffusers' name) reads as flow; unset options stay unset
  const SampleRequest flow = cli::sample_request_of({"--model", "m", "--out", "x.npy", "--prediction-type", "flow_prediction"});
  EXPECT_EQ(flow.prediction_type, std::optional<Family>(Family::Flow));
  EXPECT_TRUE(flow.sigmas.empty());
  EXPECT_FALSE(flow.flow_shift.has_value());
  EXPECT_FALSE(flow.flow_mu.has_value());
}

// Each bad value: exit 2, one message naming the option, the value and the valid values; nothing written.
TEST_F(FamilyCli, BadFamilyValuesExit2NamingTheOption) {
  const std::string valid = "valid: finite numbers, strictly decreasing, > 0 but the last (which may be 0)";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--prediction-type x0", "--prediction-type = 'x0' is not a known value; supported: epsilon, sample, "
                               "v_prediction, flow (or flow_prediction), edm"},
      {"--sigmas 14.6,abc,0", "--sigmas[1] = 'abc' is not a number; " + valid},
      {"--sigmas 14.6,,0", "--sigmas[1] = '' is not a number; " + valid},
      {"--sigmas 1,2,0", "--sigmas: value 1 = 2 is out of range; valid: strictly decreasing levels (below 1)"},
      {"--sigmas 3,0,0", "--sigmas: value 1 = 0 is out of range; valid: > 0 (only the last level may be 0)"},
      {"--sigmas 3,-1", "--sigmas: value 1 = -1 is out of range; valid: finite levels >= 0"},
      {"--sigmas 3,nan,0", "--sigmas: value 1 = nan is out of range; valid: finite levels >= 0"},
      {"--sigmas inf,1", "--sigmas: value 0 = inf is out of range; valid: finite levels >= 0"},
      {"--sigmas 0", "--sigmas: value 0 = 0 is out of range; valid: at least one level > 0"},
      {"--sigmas ''", "--sigmas is empty; valid: a list such as 14.6,5.2,0 or @FILE"},
      {"--sigmas 14.6,5.2,0 --steps 3", "--steps = 3 disagrees with --sigmas (2 steps); valid: 2 (or leave it out)"},
      {"--flow-shift 0", "--flow-shift = 0 is out of range; valid: > 0"},
      {"--flow-shift -2", "--flow-shift = -2 is out of range; valid: > 0"},
      {"--flow-shift inf", "--flow-shift = inf is out of range; valid: > 0"},
      {"--flow-mu inf", "--flow-mu = inf is not finite; valid: a finite number"},
      {"--flow-shift abc", "--flow-shift = 'abc' is not a number"},
  };
  for (const auto& [extra, message] : cases) expect_refused(sample_args(extra), 2, {message});
}

// --sigmas @FILE: a text file (one number a line, blank lines skipped) or a .npy of shape (N,); its faults name the
// file and the line.
TEST_F(FamilyCli, SigmasFromAFileAreCheckedLikeTheList) {
  test::TempDir in;
  std::ofstream(in.file("bad.txt")) << "14.6\n\n5.2\nfive\n0\n";
  std::ofstream(in.file("up.txt")) << "1\n2\n";
  const std::vector<int64_t> shape{2, 2};
  const std::vector<double> four{4, 3, 2, 1};
  write_npy_double(in.file("two_d.npy"), shape, four.data(), "test");
  const std::string missing = in.file("missing.txt");
  expect_refused(sample_args("--sigmas @" + in.file("bad.txt")), 2,
                 {"--sigmas @" + in.file("bad.txt") + " line 4 = 'five' is not a number"});
  expect_refused(sample_args("--sigmas @" + in.file("up.txt")), 2, {"--sigmas: value 1 = 2 is out of range"});
  expect_refused(sample_args("--sigmas @" + in.file("two_d.npy")), 2,
                 {"--sigmas @" + in.file("two_d.npy") + " has 2 dimensions; valid: a .npy of shape (N,)"});
  expect_refused(sample_args("--sigmas @" + missing), 2, {"--sigmas @" + missing + ": cannot be read"});
}

// denoise takes --prediction-type as sample does: the family of a file that names none (a note), refused when the
// file names another; a family denoise cannot step (flow, edm) is refused naming it.
TEST_F(FamilyCli, DenoiseTakesThePredictionType) {
  const std::string npys = " --x '" + test::data_path("golden/d2_h256_s16_x.npy") + "' --t-start '" +
                           test::data_path("golden/d2_h256_s16_t_start.npy") + "' --steps 2 --out '" + out("y.npy") + "'";
  const std::string v_file = reported("prediction-type/v_prediction.safetensors");
  expect_refused("denoise --model '" + m_golden + "'" + npys + " --prediction-type velocity", 2,
                 {"--prediction-type = 'velocity' is not a known value; supported: epsilon"});
  expect_refused("denoise --model '" + m_golden + "'" + npys + " --prediction-type flow", 2,
                 {"a flow model with time input T*s does not run there; valid: --prediction-type epsilon, sample or "
                  "v_prediction"});
  expect_refused("denoise --model '" + v_file + "'" + npys + " --prediction-type epsilon", 2,
                 {"--prediction-type = epsilon contradicts the model file, whose prediction_type is v_prediction; "
                  "valid: v_prediction or leave it out"});
  const Result v = run("denoise --model '" + m_golden + "'" + npys + " --prediction-type v_prediction");
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_TRUE(has(v.err, "note: the model file names no prediction_type: it runs as v_prediction")) << v.err;
  const Result same = run("denoise --model '" + v_file + "'" + npys + " --prediction-type v_prediction");
  EXPECT_EQ(same.code, 0) << same.err;
}

// info of a file whose prediction_type could not be read shows no convention (the problem says why).
TEST_F(FamilyCli, InfoOfAnUnreadableFamilyShowsNoConvention) {
  const Result r = run("info --model '" + reported("prediction-type/unknown.safetensors") + "'");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.out, "convention:      (not read: see problems)\n")) << r.out;
  const Result j = run("info --json --model '" + reported("prediction-type/unknown.safetensors") + "'");
  EXPECT_EQ(j.code, 2) << j.err;
  EXPECT_TRUE(nlohmann::json::parse(j.out).at("prediction_type").is_null()) << j.out;
}

// A family value of a --config sidecar of the wrong type is refused naming the sidecar and its key.
TEST_F(FamilyCli, ConfigFamilyValuesAreChecked) {
  test::TempDir in;
  const auto side = [&](const nlohmann::json& extra) {
    nlohmann::json j{{"format", 3}, {"model", {{"file", m_golden}}}, {"n", 8}, {"steps", 4}};
    j.update(extra);
    std::ofstream(in.file("side.json")) << j.dump();
    return "sample --config '" + in.file("side.json") + "' --out '" + out("x.npy") + "'";
  };
  const std::string at = "--config " + in.file("side.json") + ": ";
  // prediction_type and flow_shift are settings rows too (session/settings_schema.h: "from_file" is their unset)
  const std::string families = "valid: from_file, epsilon, sample, v_prediction, flow (or flow_prediction), edm";
  expect_refused(side({{"prediction_type", 5}}), 2, {at + "prediction_type = '5' is not valid; " + families});
  expect_refused(side({{"prediction_type", "x0"}}), 2, {at + "prediction_type = 'x0' is not valid; " + families});
  expect_refused(side({{"sigmas", "14.6,0"}}), 2, {at + "sigmas = \"14.6,0\" is not valid; valid: a list of numbers"});
  expect_refused(side({{"sigmas", {3.0, 5.0}}}), 2, {at + "sigmas: value 1 = 5 is out of range"});
  expect_refused(side({{"flow_shift", 0}}), 2, {at + "flow_shift = 0 is out of range; valid: from_file or a number"});
  expect_refused(side({{"flow_mu", "x"}}), 2, {at + "flow_mu = \"x\" is not valid; valid: a finite number"});
}

// info: the convention line and the family keys (a file that names no family is epsilon, time input t/T).
TEST_F(FamilyCli, InfoShowsTheConvention) {
  const Result text = run("info --model '" + m_mixture + "'");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_TRUE(has(text.out, "convention:      epsilon: x_t = sqrt(abar) x0 + sqrt(1 - abar) eps, noise at t = T - 1; "
                            "time input t/T (T = 1000) (the file names no prediction_type: --prediction-type may set it)\n"))
      << text.out;
  const Result json = run("info --json --model '" + m_mixture + "'");
  ASSERT_EQ(json.code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("prediction_type"), "epsilon");
  EXPECT_EQ(j.at("prediction_type_in_file"), false);
  EXPECT_EQ(j.at("time_input"), "t/T");
  EXPECT_FALSE(j.contains("sigma_data"));
  EXPECT_FALSE(j.contains("flow_shift"));
  // a flow file: its family, time input and shift
  const Result flow = run("info --json --model '" + reported("prediction-type/flow.safetensors") + "'");
  ASSERT_EQ(flow.code, 0) << flow.err;
  const nlohmann::json f = nlohmann::json::parse(flow.out);
  EXPECT_EQ(f.at("prediction_type"), "flow");
  EXPECT_EQ(f.at("prediction_type_in_file"), true);
  EXPECT_EQ(f.at("time_input"), "T*s");
  EXPECT_EQ(f.at("flow_shift"), 1.0);
  EXPECT_EQ(f.at("flow_velocity"), "eps_minus_x0");
  EXPECT_EQ(f.at("convention"), "flow: x_s = (1 - s) x0 + s eps, velocity eps - x0, noise at s = 1; time input T*s (T = 1000)");
}

// An older sidecar (format 2: no family keys) runs as today: epsilon, the model's own list.
TEST_F(FamilyCli, OlderSidecarRunsWithTodaysDefaults) {
  expect_sidecar_runs_as_plain({{"format", 2}, {"sampler", "ddim"}}, "prediction_type");
}

// A sidecar's "from_file" (the app's exports write it for an unset prediction_type or flow_shift) runs as unset.
TEST_F(FamilyCli, ConfigFromFileValuesAreUnset) {
  expect_sidecar_runs_as_plain({{"format", 3}, {"prediction_type", "from_file"}, {"flow_shift", "from_file"}}, "flow_shift");
}

// --write-scheduler-config writes the run's family: a v_prediction run's config says prediction_type v_prediction;
// a flow run's is FlowMatchEuler's with the run's shift, which --scheduler-config runs again bit for bit; a typed
// --sigmas list has none (exit 2, nothing written).
TEST_F(FamilyCli, WrittenSchedulerConfigSaysTheFamily) {
  const std::string v_file = reported("prediction-type/v_prediction.safetensors");
  const Result v = run("sample --model '" + v_file + "' --n 8 --steps 5 --spacing linspace --out '" + out("v.npy") +
                       "' --write-scheduler-config '" + out("v.json") + "'");
  ASSERT_EQ(v.code, 0) << v.err;
  const nlohmann::json vj = nlohmann::json::parse(slurp(out("v.json")));
  EXPECT_EQ(vj.at("prediction_type"), "v_prediction");
  EXPECT_EQ(vj.at("_class_name"), "DDIMScheduler");
  const Result f = run("sample --model '" + reported("prediction-type/flow.safetensors") + "' --n 8 --steps 5 "
                       "--flow-shift 3 --sampler flow-euler --out '" + out("f.npy") + "' --write-scheduler-config '" +
                       out("f.json") + "'");
  ASSERT_EQ(f.code, 0) << f.err;
  const nlohmann::json fj = nlohmann::json::parse(slurp(out("f.json")));
  EXPECT_EQ(fj.at("_class_name"), "FlowMatchEulerDiscreteScheduler");
  EXPECT_EQ(fj.at("shift"), 3.0);
  // the written config runs the same list again: the same bytes, and its own config written back is the same
  const Result back = run("sample --model '" + reported("prediction-type/flow.safetensors") + "' --n 8 --steps 5 "
                          "--sampler flow-euler --scheduler-config '" + out("f.json") + "' --out '" + out("g.npy") +
                          "' --write-scheduler-config '" + out("g.json") + "'");
  ASSERT_EQ(back.code, 0) << back.err;
  EXPECT_EQ(slurp(out("f.npy")), slurp(out("g.npy")));
  EXPECT_EQ(nlohmann::json::parse(slurp(out("g.json"))), fj);
  for (const char* name : {"v.npy", "v.json", "f.npy", "f.json", "g.npy", "g.json"}) std::filesystem::remove(out(name));
  expect_refused("sample --model '" + v_file + "' --n 8 --sigmas 14.6,1,0 --out '" + out("x.npy") +
                     "' --write-scheduler-config '" + out("c.json") + "'",
                 2, {"--write-scheduler-config " + out("c.json") + ": a typed --sigmas list has no diffusers scheduler "
                     "config"});
}

#ifdef DIFFSCOPE_HAVE_GUI
// A sidecar records the run's family (prediction_type, time_input), the typed list and each kept frame's noise
// level; --config of it runs the same family and list again: the same bytes.
TEST_F(FamilyCli, SidecarWithAFamilyReproducesTheRun) {
  const std::string base = "sample --model '" + m_mixture + "' --n 16 --seed 4 --prediction-type v_prediction "
                           "--sigmas 40,6,1.5,0.25 --trajectory-stride 2 --size 64x48";
  const Result r = run(base + " --out '" + out("a.npy") + "' --png '" + out("a.png") + "'");
  if (r.code == 3) GTEST_SKIP() << r.err;
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(slurp(out("a.json")));
  EXPECT_EQ(j.at("format"), 3);
  EXPECT_EQ(j.at("prediction_type"), "v_prediction");
  EXPECT_EQ(j.at("time_input"), "t/T");
  EXPECT_EQ(j.at("sigmas"), (std::vector<double>{40, 6, 1.5, 0.25}));
  // 4 levels and the final 0: 4 steps, frames 0, 2 and 4 kept; VE sigma S is abar = 1 / (1 + S^2)
  ASSERT_TRUE(j.contains("levels")) << j.dump(1);
  EXPECT_EQ(j["levels"].at("frames"), (std::vector<int>{0, 2, 4}));
  const std::vector<double> abar = j["levels"].at("vp_abar");
  ASSERT_EQ(abar.size(), 3u);
  EXPECT_NEAR(abar[0], 1.0 / (1.0 + 40.0 * 40.0), 1e-12);
  EXPECT_NEAR(abar[1], 1.0 / (1.0 + 1.5 * 1.5), 1e-12);
  EXPECT_EQ(abar[2], 1.0);
  EXPECT_TRUE(has(j.at("command_line").get<std::string>(), "--prediction-type v_prediction --sigmas '40,6,1.5,0.25'"))
      << j.at("command_line");
  const Result again = run("sample --config '" + out("a.json") + "' --out '" + out("b.npy") + "'");
  ASSERT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(slurp(out("a.npy")), slurp(out("b.npy")));
}
#endif

}  // namespace
}  // namespace diffscope
