// test_model_files_cli.cpp — model files, exports and configs the CLI is given that are not what they should be,
// through the diffscope binary (inputs from public bug reports: tests/data/reported/): each refusal exits 2 naming
// the key, the tensor or what the file is, and writes nothing; what is only unused (tensors of new dtypes) is ignored.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_fixture.h"
#include "formats/json_path.h"
#include "formats/npy.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using Result = test::CliResult;

class ModelFilesCli : public test::CliFixture {};

// Found by the public bug reports (tests/data/reported/).
// dup-key: duplicate keys are forbidden by the format; both files used to load with the last value winning
// (denoise gave -0.0100005).
TEST_F(ModelFilesCli, DuplicateKeysRefusedNamingTensorAndKey) {
  const std::string npys = " --x '" + reported("dup-key/x0.npy") + "' --t-start '" + reported("dup-key/t0.npy") +
                           "' --steps 1 --out '" + out("d.npy") + "'";
  expect_refused("info --model '" + reported("dup-key/dup_offsets.safetensors") + "'", 2,
                 {"tensor 'eps_net.4.bias': key 'data_offsets' appears twice"});
  expect_refused("denoise --model '" + reported("dup-key/dup_offsets.safetensors") + "'" + npys, 2,
                 {"tensor 'eps_net.4.bias': key 'data_offsets' appears twice"});
  expect_refused("denoise --model '" + reported("dup-key/dup_toplevel.safetensors") + "'" + npys, 2,
                 {"header names tensor 'eps_net.4.bias' twice"});
}

// Found by the public bug reports (tests/data/reported/).
// sidecar-paths (the JSON side): a model path with a Latin-1 byte used to make every JSON writer throw
// ("invalid UTF-8 byte", exit 1). info --json now writes it losslessly.
TEST_F(ModelFilesCli, NonUtf8ModelPathInJson) {
  test::TempDir in;
  const std::string model = in.file("mo\xE9ns.safetensors");
  fs::copy_file(reported("huge-trajectory/zero_d1_h4.safetensors"), model);
  const Result r = run("info --json --model '" + model + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  std::string back;
  ASSERT_TRUE(get_path(j, "model", &back));
  EXPECT_EQ(back, model);
  EXPECT_EQ(j["model"].get<std::string>(), in.path() + "/mo\\xE9ns.safetensors");
}

// Found by the public bug reports (tests/data/reported/).
// prediction-type: a 2-16-16-2 network saved with __metadata__ prediction_type v_prediction, sample, flow or a
// made-up value sampled as an eps model with exit 0, and info warned nothing. The families now run as what they say
// (SEMANTICS §2; their maths: tests/diffusion/test_family_table.cpp); a made-up value is refused on every CLI path
// naming the key, the value and what is supported: sample, denoise, a sidecar naming it (--config), and info, which
// still shows the file and says it cannot be sampled. denoise (t -> t - 1 on the VP schedule) refuses flow.
TEST_F(ModelFilesCli, ModelFamiliesRunAndUnknownPredictionTypesAreRefusedOnEveryCliPath) {
  const std::string npys = " --x '" + reported("new-dtypes/x.npy") + "' --t-start '" + reported("new-dtypes/t.npy") +
                           "' --steps 3 --out '" + out("d.npy") + "'";
  const std::string unknown = reported("prediction-type/unknown.safetensors");
  const std::vector<std::string> parts = {"__metadata__ 'prediction_type' = 'velocity-ish'", "supported: epsilon"};
  expect_refused("sample --model '" + unknown + "' --n 8 --steps 5 --out '" + out("x.npy") + "'", 2, parts);
  expect_refused("denoise --model '" + unknown + "'" + npys, 2, parts);
  test::TempDir in;
  std::ofstream(in.file("side.json")) << nlohmann::json{{"format", 2}, {"model", {{"file", unknown}}}, {"n", 8},
                                                        {"steps", 5}}.dump();
  expect_refused("sample --config '" + in.file("side.json") + "' --out '" + out("x.npy") + "'", 2, parts);
  const Result r = run("info --model '" + unknown + "'");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_TRUE(has(r.out, "  prediction_type = velocity-ish\n")) << r.out;
  EXPECT_TRUE(has(r.out, "problems:        cannot be sampled\n  " + parts[0])) << r.out;
  EXPECT_TRUE(has(r.err, unknown + " cannot be sampled: " + parts[0])) << r.err;
  for (const std::string value : {"epsilon", "v_prediction", "sample", "flow"}) {
    const std::string model = reported("prediction-type/" + value + ".safetensors");
    const Result ok = run("sample --model '" + model + "' --n 8 --steps 5 --out '" + out("x.npy") + "'");
    EXPECT_EQ(ok.code, 0) << value << ": " << ok.err;
    const Result d = run("denoise --model '" + model + "'" + npys);
    if (value == "flow") {
      EXPECT_EQ(d.code, 2) << d.err;
      EXPECT_TRUE(has(d.err, "denoise steps t -> t - 1 on the schedule")) << d.err;
    } else {
      EXPECT_EQ(d.code, 0) << value << ": " << d.err;
    }
  }
}

// Found by the public bug reports (tests/data/reported/).
// A model file (or any file that is not JSON text) given as an export printed nlohmann's parse error with the raw
// byte it stopped at. One line now says what the file is, without its bytes.
TEST_F(ModelFilesCli, FileThatIsNotAnExportSaysWhatItIs) {
  test::TempDir in;
  const std::string model = in.file("x.safetensors");
  fs::copy_file(reported("t-not-1000/t500.safetensors"), model);
  fs::copy_file(reported("new-dtypes/x.npy"), in.file("a.npy"));
  test::write_bytes(in.file("blob.json"), std::string("\x01\x02\xff\xfe binary", 10));
  test::write_bytes(in.file("latin1.json"), "{\"model\": \"mod\xe8le\"}");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {model, model + " is a model, not an export (open it with --model)"},
      {in.file("a.npy"), in.file("a.npy") + " is a NumPy array, not an export"},
      {in.file("blob.json"), in.file("blob.json") + ": not a diffscope sidecar (binary data, not JSON text)"},
      {in.file("latin1.json"), in.file("latin1.json") + ": not a diffscope sidecar (not UTF-8 text, which JSON is)"}};
  for (const auto& [file, part] : cases) {
    expect_refused("sample --config '" + file + "' --out '" + out("x.npy") + "'", 2, {"--config " + part});
    const Result r = run("sample --config '" + file + "' --out '" + out("x.npy") + "'");
    EXPECT_FALSE(has(r.err, "json.exception")) << r.err;
    EXPECT_FALSE(has(r.err, "last read")) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    for (unsigned char c : r.err) EXPECT_TRUE(c == '\n' || (c >= 0x20 && c < 0x7f)) << r.err;
  }
}

// Found by the public bug reports (tests/data/reported/).
// info on a file missing one tensor failed outright; it now prints what it can read (metadata, tensors, schedule)
// and the problem, exit 2 (text and JSON).
TEST_F(ModelFilesCli, InfoShowsWhatItCanOfAFileMissingATensor) {
  test::TempDir in;
  test::StBuilder b = test::eps_net_builder(2, 8);
  b.header().erase("eps_net.4.bias");
  b.add("step", "I64", {1}, std::string(8, '\0')).meta("dataset", "moons");
  const std::string model = b.write(in.file("m.safetensors"));
  Result r = run("info --model '" + model + "'");
  EXPECT_EQ(r.code, 2);
  for (const char* part : {"dim:             2\n", "hidden:          8\n", "T:               1000\n",
                           "schedule:        default linear", "  dataset = moons\n", "  step: I64 (1,)\n",
                           "problems:        cannot be sampled\n  missing tensor 'eps_net.4.bias' (expected shape (2,) = (dim,))\n"})
    EXPECT_TRUE(has(r.out, part)) << part << " in " << r.out;
  EXPECT_TRUE(has(r.err, "cannot be sampled: missing tensor 'eps_net.4.bias'")) << r.err;
  r = run("info --json --model '" + model + "'");
  EXPECT_EQ(r.code, 2);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["dim"], 2);
  EXPECT_EQ(j["T"], 1000);
  EXPECT_EQ(j["t_start_max_usable"], 999);
  ASSERT_EQ(j["problems"].size(), 1u);
  EXPECT_EQ(j["problems"][0], "missing tensor 'eps_net.4.bias' (expected shape (2,) = (dim,))");
}

// Found by the public bug reports (tests/data/reported/).
// new-dtypes: an unused tensor of F4, F6_E2M3/F6_E3M2, C64 or F8_E4M3FNUZ/F8_E5M2FNUZ made the whole file refused
// ("unknown dtype 'F4'"). It is ignored (SEMANTICS §6), listed by info with its dtype, and denoise gives plain's
// result bit for bit.
TEST_F(ModelFilesCli, UnusedTensorsOfNewDtypesAreIgnored) {
  const std::string args = " --x '" + reported("new-dtypes/x.npy") + "' --t-start '" + reported("new-dtypes/t.npy") +
                           "' --steps 3 --out '";
  Result r = run("denoise --model '" + reported("new-dtypes/plain.safetensors") + "'" + args + out("plain.npy") + "'");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<float> plain = read_npy_float(out("plain.npy"), "plain").data;
  const std::vector<std::pair<std::string, std::string>> files = {
      {"extra_f4", "  packed_fp4: F4 (2, 8)\n"},
      {"extra_f6", "  mx_fp6a: F6_E2M3 (4, 4)\n  mx_fp6b: F6_E3M2 (4, 4)\n"},
      {"extra_c64", "  complex: C64 (3,)\n"},
      {"extra_fnuz", "  q1: F8_E4M3FNUZ (4,)\n  q2: F8_E5M2FNUZ (4,)\n"}};
  for (const auto& [name, listed] : files) {
    const std::string model = reported("new-dtypes/" + name + ".safetensors");
    r = run("info --model '" + model + "'");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(has(r.out, "ignored tensors: \n" + listed)) << r.out;
    r = run("denoise --model '" + model + "'" + args + out(name + ".npy") + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(read_npy_float(out(name + ".npy"), name).data, plain) << name;
  }
}

}  // namespace
}  // namespace diffscope
