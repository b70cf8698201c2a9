// test_model_load.cpp — load_diffusion_model / load_mlp3 (SEMANTICS §1, §2, §5, §6): shapes and their
// orientation, dtypes of used tensors, schedule precedence, metadata, data samples, ignored tensors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "base/errors.h"
#include "formats/safetensors.h"
#include "io_test_util.h"
#include "model/model.h"
#include "model/model_load.h"
#include "test_paths.h"

namespace diffscope {
namespace {

using test::eps_net_builder;
using test::invalid_input_message;
using test::StBuilder;
using test::TempDir;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

DiffusionModel load_image(const StBuilder& b, const std::string& label = "m.safetensors") {
  return diffusion_model_from(SafetensorsFile::from_bytes(b.build(), label));
}

TEST(ModelLoad, ReadsDimsAndHiddenFromShapes) {
  TempDir dir;
  const std::string path = eps_net_builder(5, 16).write(dir.file("m.safetensors"));
  const DiffusionModel m = load_diffusion_model(path);
  EXPECT_EQ(m.path, path);
  EXPECT_EQ(m.net.dim, 5);
  EXPECT_EQ(m.net.hidden, 16);
  EXPECT_EQ(m.net.W1.size(), 16u * 6u);
  EXPECT_EQ(m.net.W3.size(), 5u * 16u);
  EXPECT_NO_THROW(m.net.validate());
  // No betas and no metadata: the default linear schedule, T = 1000.
  EXPECT_EQ(m.schedule.T, 1000);
  EXPECT_TRUE(has(m.schedule.source, "default linear")) << m.schedule.source;
  EXPECT_TRUE(m.warnings.empty());
  EXPECT_TRUE(m.ignored_tensors.empty());
  EXPECT_EQ(m.n_data, 0);
}

// A model whose matrices are all square (dim = 2, hidden = 3: W1 is 3x3, W2 is 3x3) must keep the
// (out, in) row-major layout: element (i, j) of the stored matrix is W[i * in + j]. The stored values
// are distinct (10 i + j + layer offset), so a transposed load cannot pass.
TEST(ModelLoad, SquareLayersKeepOutInOrientation) {
  const int dim = 2, hidden = 3;
  auto matrix = [](int rows, int cols, float offset) {
    std::vector<float> v;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) v.push_back(offset + 10.0f * i + j);
    return v;
  };
  StBuilder b;
  b.add_f32("eps_net.0.weight", {hidden, dim + 1}, matrix(hidden, dim + 1, 100.f))
      .add_f32("eps_net.0.bias", {hidden}, {1.f, 2.f, 3.f})
      .add_f32("eps_net.2.weight", {hidden, hidden}, matrix(hidden, hidden, 200.f))
      .add_f32("eps_net.2.bias", {hidden}, {4.f, 5.f, 6.f})
      .add_f32("eps_net.4.weight", {dim, hidden}, matrix(dim, hidden, 300.f))
      .add_f32("eps_net.4.bias", {dim}, {7.f, 8.f});
  const DiffusionModel m = load_image(b);
  for (int i = 0; i < hidden; ++i)
    for (int j = 0; j < hidden; ++j) {
      EXPECT_EQ(m.net.W2[i * hidden + j], 200.f + 10.f * i + j) << "W2(" << i << "," << j << ")";
      EXPECT_EQ(m.net.W1[i * (dim + 1) + j], 100.f + 10.f * i + j) << "W1(" << i << "," << j << ")";
    }
  EXPECT_EQ(m.net.W3[1 * hidden + 2], 312.f);  // row 1 (output dim 1), column 2 (hidden unit 2)
  EXPECT_EQ(m.net.b3, (std::vector<float>{7.f, 8.f}));
}

// A model file truncated (e.g. replaced while being copied) is refused, whatever the cut, and a
// model already loaded does not depend on the file any more (the file is read once).
TEST(ModelLoad, TruncatedFileRefusedAndLoadedModelIndependent) {
  TempDir dir;
  const std::string path = eps_net_builder(3, 5).write(dir.file("m.safetensors"));
  const DiffusionModel before = load_diffusion_model(path);
  const auto size = std::filesystem::file_size(path);
  for (uintmax_t cut : {size - 1, size / 2, uintmax_t{12}, uintmax_t{8}, uintmax_t{3}, uintmax_t{0}}) {
    std::filesystem::resize_file(path, cut);
    const std::string msg = invalid_input_message([&] { load_diffusion_model(path); });
    EXPECT_TRUE(has(msg, path + ": ")) << "cut at " << cut << ": " << msg;
  }
  EXPECT_EQ(before.net.W2, test::ramp(25, 3.0f));  // still the values that were loaded
}

TEST(ModelLoad, I64WeightRefusedNamingTensorAndDtype) {
  StBuilder b = eps_net_builder(2, 4);
  b.add("eps_net.0.weight", "I64", {4, 3}, std::string(4 * 3 * 8, '\0'));  // replaces the F32 entry
  EXPECT_EQ(invalid_input_message([&] { load_image(b, "model.safetensors"); }),
            "model.safetensors: tensor 'eps_net.0.weight' has dtype I64; valid: F64, F32, F16, BF16");
}

TEST(ModelLoad, MissingTensorRefusedWithExpectedShape) {
  StBuilder b = eps_net_builder(2, 8);
  b.header().erase("eps_net.2.weight");
  EXPECT_EQ(invalid_input_message([&] { load_image(b); }),
            "m.safetensors: missing tensor 'eps_net.2.weight' (expected shape (8, 8) = (hidden, hidden))");
  StBuilder c = eps_net_builder(2, 8);
  c.header().erase("eps_net.0.weight");
  EXPECT_TRUE(has(invalid_input_message([&] { load_image(c); }), "missing tensor 'eps_net.0.weight'"));
}

// SEMANTICS §2 "How a file says it", §6 "Keys that change the maths": the family keys are read (each family's
// prediction_type loads as that family); other codebases' names for them load only with their eps value and are
// otherwise refused naming prediction_type; an unknown value, a key of another family and a time input of another
// family are refused naming the key, the value and the valid values. The prediction-type report's files among them
// (a 2-16-16-2 network re-saved with each value) now load in their family.
TEST(ModelLoad, MetadataOfTheFamiliesIsReadAndOtherValuesRefused) {
  struct Case {
    const char* key;
    const char* value;
    bool loads;
  };
  const std::vector<Case> cases = {
      {"prediction_type", "epsilon", true},     {"prediction_type", "v_prediction", true},
      {"prediction_type", "sample", true},      {"prediction_type", "flow_prediction", true},
      {"prediction_type", "flow", true},        {"prediction_type", "edm", true},
      {"prediction_type", "velocity-ish", false},
      {"prediction_type", "", false},           {"parameterization", "eps", true},
      {"parameterization", "v", false},         {"parameterization", "x0", false},
      {"objective", "pred_noise", true},        {"objective", "pred_v", false},
      {"target", "noise", true},                {"target", "epsilon", true},
      {"target", "velocity", false},            {"model_type", "EPS", true},
      {"model_type", "V_PREDICTION", false},    {"model_type", "FLOW", false},
      {"sigma_data", "0.5", false},             {"time_input", "t/T", true},
      {"time_input", "sigma", false},           {"time_input", "t", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.key) + " = " + c.value);
    StBuilder b = eps_net_builder(2, 4);
    b.meta(c.key, c.value);
    if (c.loads) {
      const DiffusionModel m = load_image(b);
      EXPECT_EQ(m.metadata.at(c.key), c.value);
      if (std::string(c.key) == "prediction_type")
        EXPECT_EQ(std::string(family_name(m.family.family)),
                  std::string(c.value) == "flow_prediction" ? "flow" : std::string(c.value));
      continue;
    }
    const std::string msg = invalid_input_message([&] { load_image(b); });
    EXPECT_EQ(msg.rfind(std::string("m.safetensors: __metadata__ '") + c.key + "' = '" + c.value + "'", 0), 0u) << msg;
    EXPECT_TRUE(has(msg, "supported: ") || has(msg, "valid for epsilon: t/T, t") ||
                has(msg, "is read only by the edm family")) << msg;
  }
  // The same keys spelt another way say the same and are refused, not ignored (a newcomer trial's
  // `Prediction_Type = v_prediction` sampled as eps).
  for (const char* key : {"Prediction_Type", "predictionType", "prediction-type", "SIGMA_DATA", "timeInput"}) {
    SCOPED_TRACE(key);
    StBuilder b = eps_net_builder(2, 4);
    b.meta(key, "v_prediction");
    const std::string msg = invalid_input_message([&] { load_image(b); });
    EXPECT_EQ(msg.rfind(std::string("m.safetensors: __metadata__ '") + key + "' = 'v_prediction' reads as '", 0), 0u) << msg;
  }
  const std::string d = test::data_path("reported/prediction-type/");
  EXPECT_EQ(load_diffusion_model(d + "epsilon.safetensors").net.hidden, 16);
  EXPECT_EQ(load_diffusion_model(d + "v_prediction.safetensors").family.family, Family::VPrediction);
  EXPECT_EQ(load_diffusion_model(d + "sample.safetensors").family.family, Family::Sample);
  EXPECT_EQ(load_diffusion_model(d + "flow.safetensors").family.family, Family::Flow);
  const std::string msg = invalid_input_message([&] { load_diffusion_model(d + "unknown.safetensors"); });
  EXPECT_TRUE(has(msg, "__metadata__ 'prediction_type' = 'velocity-ish' is not a known value; supported: epsilon"))
      << msg;
}

// What `info` shows of a file that does not load: every problem, and what could still be read.
TEST(ModelLoad, InspectListsProblemsAndWhatItCouldRead) {
  StBuilder b = eps_net_builder(2, 8);
  b.header().erase("eps_net.4.bias");
  b.meta("prediction_type", "velocity-ish").meta("T", "500");
  const SafetensorsFile f = SafetensorsFile::from_bytes(b.build(), "m.safetensors");
  EXPECT_TRUE(has(invalid_input_message([&] { diffusion_model_from(f); }), "prediction_type"));
  std::vector<std::string> problems;
  const DiffusionModel m = inspect_diffusion_model(f, problems);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].rfind("__metadata__ 'prediction_type' = 'velocity-ish'", 0), 0u) << problems[0];
  EXPECT_EQ(problems[1], "missing tensor 'eps_net.4.bias' (expected shape (2,) = (dim,))");
  EXPECT_EQ(m.net.dim, 2);
  EXPECT_EQ(m.net.hidden, 8);
  EXPECT_EQ(m.schedule.T, 500);
  std::vector<std::string> none;  // a good file: no problem, the same model as the strict load
  const SafetensorsFile good = SafetensorsFile::from_bytes(eps_net_builder(2, 8).build(), "g.safetensors");
  EXPECT_EQ(inspect_diffusion_model(good, none).net.W3, diffusion_model_from(good).net.W3);
  EXPECT_TRUE(none.empty());
}

TEST(ModelLoad, MismatchedShapeRefused) {
  StBuilder b = eps_net_builder(2, 8);
  b.add_f32("eps_net.4.weight", {8, 2}, std::vector<float>(16, 0.f));  // transposed (in, out)
  EXPECT_EQ(invalid_input_message([&] { load_image(b); }),
            "m.safetensors: tensor 'eps_net.4.weight' has shape (8, 2), expected (2, 8) = (dim, hidden)");
  StBuilder c = eps_net_builder(2, 8);
  c.add_f32("eps_net.2.bias", {7}, std::vector<float>(7, 0.f));
  EXPECT_TRUE(has(invalid_input_message([&] { load_image(c); }), "'eps_net.2.bias' has shape (7,), expected (8,)"));
  StBuilder d = eps_net_builder(2, 8);
  d.add_f32("eps_net.0.weight", {8, 1}, std::vector<float>(8, 0.f));  // dim would be 0
  EXPECT_TRUE(has(invalid_input_message([&] { load_image(d); }), "dim >= 1"));
}

TEST(ModelLoad, NonFiniteWeightRefused) {
  StBuilder b = eps_net_builder(2, 4);
  b.add_f32("eps_net.2.bias", {4}, {0.f, NAN, 0.f, 0.f});
  EXPECT_TRUE(has(invalid_input_message([&] { load_image(b); }), "'eps_net.2.bias' element 1 is nan"));
}

// F16 / BF16 / F64 weights are converted to float32 (values exactly representable: the conversion is exact).
TEST(ModelLoad, HalfAndDoubleWeightsConvert) {
  StBuilder b = eps_net_builder(1, 2);
  b.add("eps_net.0.bias", "F16", {2}, test::raw_bytes(std::vector<uint16_t>{0x3800, 0xBC00}))  // 0.5, -1
      .add("eps_net.2.bias", "BF16", {2}, test::raw_bytes(std::vector<uint16_t>{0x4040, 0x3E00}))  // 3, 0.125
      .add_f64("eps_net.4.bias", {1}, {-0.25});
  const DiffusionModel m = load_image(b);
  EXPECT_EQ(m.net.b1, (std::vector<float>{0.5f, -1.0f}));
  EXPECT_EQ(m.net.b2, (std::vector<float>{3.0f, 0.125f}));
  EXPECT_EQ(m.net.b3, (std::vector<float>{-0.25f}));
}

// File betas (F64) take precedence; T is their length; the other buffers are only compared.
TEST(ModelLoad, FileBetasDefineTheSchedule) {
  std::vector<double> betas = {0.1, 0.2, 0.3, 0.4};
  std::vector<double> abar = {0.9, 0.9 * 0.8, 0.9 * 0.8 * 0.7, 0.9 * 0.8 * 0.7 * 0.6};
  StBuilder b = eps_net_builder(2, 4);
  b.add_f64("betas", {4}, betas).add_f64("alphas_cumprod", {4}, abar).meta("T", "4");
  const DiffusionModel m = load_image(b);
  EXPECT_EQ(m.schedule.T, 4);
  EXPECT_EQ(m.schedule.source, "file betas (F64)");
  EXPECT_EQ(m.schedule.betas, betas);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  EXPECT_TRUE(m.ignored_tensors.empty());
}

TEST(ModelLoad, DisagreeingScheduleBufferWarns) {
  StBuilder b = eps_net_builder(2, 4);
  b.add_f32("betas", {3}, {0.1f, 0.2f, 0.3f})
      .add_f32("coef_eps", {3}, {1.f, 1.f, 1.f})
      .add_f32("alphas", {5}, {1.f, 1.f, 1.f, 1.f, 1.f})
      .meta("T", "1000");
  const DiffusionModel m = load_image(b);
  EXPECT_EQ(m.schedule.T, 3);
  EXPECT_EQ(m.schedule.source, "file betas (F32)");
  // betas as float32: 0.1f is not 0.1, and the recomputation starts from the stored float32 value.
  EXPECT_EQ(m.schedule.betas[0], static_cast<double>(0.1f));
  ASSERT_EQ(m.warnings.size(), 3u);
  std::string all;
  for (const auto& w : m.warnings) all += w + "\n";
  EXPECT_TRUE(has(all, "__metadata__ T = 1000 disagrees with betas of length 3")) << all;
  EXPECT_TRUE(has(all, "'coef_eps' differs from the float64 recomputation")) << all;
  EXPECT_TRUE(has(all, "'alphas' has 5 values but T = 3")) << all;
}

// F16 schedule buffers are refused with the reason.
TEST(ModelLoad, F16ScheduleBuffersRefused) {
  StBuilder b = eps_net_builder(2, 4);
  b.add("betas", "F16", {2}, test::raw_bytes(std::vector<uint16_t>{0x1400, 0x2000}));
  std::string msg = invalid_input_message([&] { load_image(b); });
  EXPECT_TRUE(has(msg, "m.safetensors: schedule tensor 'betas' has dtype F16; valid: F64, F32")) << msg;
  EXPECT_TRUE(has(msg, "coef_eps infinite")) << msg;
  StBuilder c = eps_net_builder(2, 4);
  c.add("alphas_cumprod", "BF16", {2}, test::raw_bytes(std::vector<uint16_t>{0x3F80, 0x3F80}));
  msg = invalid_input_message([&] { load_image(c); });
  EXPECT_TRUE(has(msg, "'alphas_cumprod' has dtype BF16")) << msg;
}

TEST(ModelLoad, BadFileBetasRefused) {
  StBuilder b = eps_net_builder(2, 4);
  b.add_f64("betas", {3}, {0.1, 1.5, 0.2});
  EXPECT_TRUE(has(invalid_input_message([&] { load_image(b); }), "m.safetensors: file betas (F64): betas[1] = 1.5"));
  StBuilder c = eps_net_builder(2, 4);
  c.add_f64("betas", {1, 2}, {0.1, 0.2});
  EXPECT_TRUE(has(invalid_input_message([&] { load_image(c); }), "'betas' has shape (1, 2), expected (T,)"));
}

TEST(ModelLoad, MetadataSchedule) {
  StBuilder b = eps_net_builder(2, 4);
  b.meta("T", "50").meta("schedule", "cosine").meta("dataset", "moons");
  DiffusionModel m = load_image(b);
  EXPECT_EQ(m.schedule.T, 50);
  EXPECT_TRUE(has(m.schedule.source, "metadata cosine")) << m.schedule.source;
  EXPECT_EQ(m.metadata.at("dataset"), "moons");

  StBuilder c = eps_net_builder(2, 4);
  c.meta("T", "10").meta("beta_start", "0.001").meta("beta_end", "0.1");
  m = load_image(c);
  EXPECT_EQ(m.schedule.T, 10);
  EXPECT_DOUBLE_EQ(m.schedule.betas[0], 0.001);
  EXPECT_DOUBLE_EQ(m.schedule.betas[9], 0.1);
  EXPECT_TRUE(has(m.schedule.source, "metadata linear")) << m.schedule.source;
}

TEST(ModelLoad, MetadataNumbersParsedStrictly) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"T", "12abc"}, {"T", ""}, {"T", "1e3"}, {"T", "99999999999"}, {"beta_start", "0.1x"}, {"beta_end", "nan"}};
  for (const auto& [k, v] : bad) {
    StBuilder b = eps_net_builder(2, 4);
    b.meta(k, v);
    const std::string msg = invalid_input_message([&] { load_image(b); });
    EXPECT_TRUE(has(msg, "__metadata__ '" + k + "' = '" + v + "'")) << msg;
  }
  StBuilder b = eps_net_builder(2, 4);
  b.meta("schedule", "quadratic");
  EXPECT_TRUE(has(invalid_input_message([&] { load_image(b); }), "'schedule' = 'quadratic' (valid: linear, cosine)"));
  StBuilder c = eps_net_builder(2, 4);
  c.meta("T", "1");
  EXPECT_TRUE(has(invalid_input_message([&] { load_image(c); }), "T = 1 is out of range"));
}

TEST(ModelLoad, DataSamplesAndIgnoredTensors) {
  StBuilder b = eps_net_builder(2, 4);
  b.add_f32("data_samples", {3, 2}, {1, 2, 3, 4, 5, 6})
      .add("step_count", "I64", {1}, std::string(8, '\0'))
      .add("flags", "BOOL", {2}, std::string(2, '\0'))
      .add_f32("ema.eps_net.0.weight", {1}, {0.f});
  const DiffusionModel m = load_image(b);
  EXPECT_EQ(m.n_data, 3);
  EXPECT_EQ(m.data_samples, (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(m.ignored_tensors, (std::vector<std::string>{"ema.eps_net.0.weight", "flags", "step_count"}));

  StBuilder c = eps_net_builder(2, 4);
  c.add_f32("data_samples", {2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_TRUE(has(invalid_input_message([&] { load_image(c); }), "'data_samples' has shape (2, 3), expected (N, 2)"));
}

TEST(EpsNetValidate, SizesMustMatch) {
  EpsNet n;
  n.dim = 2;
  n.hidden = 3;
  n.W1.assign(9, 0.f);
  n.b1.assign(3, 0.f);
  n.W2.assign(9, 0.f);
  n.b2.assign(3, 0.f);
  n.W3.assign(6, 0.f);
  n.b3.assign(2, 0.f);
  EXPECT_NO_THROW(n.validate());
  n.W3.assign(5, 0.f);
  EXPECT_EQ(invalid_input_message([&] { n.validate(); }), "eps-network: W3 has 5 values, expected 6 = dim*hidden");
  n.dim = 0;
  EXPECT_TRUE(has(invalid_input_message([&] { n.validate(); }), "dim = 0"));
}

StBuilder mlp3_builder(int d0, int d1, int d2, int d3) {
  StBuilder b;
  b.add_f32("fc1.weight", {d1, d0}, test::ramp(d1 * d0, 1.f))
      .add_f32("fc2.weight", {d2, d1}, test::ramp(d2 * d1, 2.f))
      .add_f32("fc3.weight", {d3, d2}, test::ramp(d3 * d2, 3.f));
  return b;
}

TEST(Mlp3Load, OddSizesLoad) {
  TempDir dir;
  const std::string path = mlp3_builder(7, 33, 5, 3).write(dir.file("w.safetensors"));
  const Mlp3Weights w = load_mlp3(path);
  EXPECT_EQ(w.d0, 7);
  EXPECT_EQ(w.d1, 33);
  EXPECT_EQ(w.d2, 5);
  EXPECT_EQ(w.d3, 3);
  EXPECT_EQ(w.W1.size(), 33u * 7u);
  EXPECT_EQ(w.W2[1 * 33 + 4], 2.f + 0.125f * 37 / 64);  // row 1, column 4 of the (5, 33) matrix
  EXPECT_EQ(w.W3.size(), 3u * 5u);
}

TEST(Mlp3Load, BiasRefused) {
  StBuilder b = mlp3_builder(4, 3, 2, 1);
  b.add_f32("fc2.bias", {2}, {0.f, 0.f});
  EXPECT_TRUE(has(invalid_input_message([&] { mlp3_from(SafetensorsFile::from_bytes(b.build(), "w")); }),
                  "w: tensor 'fc2.bias' found, but the 3-layer MLP has no bias"));
}

TEST(Mlp3Load, ShapesMustChain) {
  StBuilder b;
  b.add_f32("fc1.weight", {3, 4}, std::vector<float>(12, 0.f))
      .add_f32("fc2.weight", {2, 4}, std::vector<float>(8, 0.f))
      .add_f32("fc3.weight", {1, 2}, std::vector<float>(2, 0.f));
  EXPECT_EQ(invalid_input_message([&] { mlp3_from(SafetensorsFile::from_bytes(b.build(), "w")); }),
            "w: tensor 'fc2.weight' has shape (2, 4), expected (d2, 3) = (d2, d1) to follow fc1.weight (3, 4)");
  StBuilder c = mlp3_builder(4, 3, 2, 1);
  c.header().erase("fc3.weight");
  EXPECT_TRUE(has(invalid_input_message([&] { mlp3_from(SafetensorsFile::from_bytes(c.build(), "w")); }),
                  "missing tensor 'fc3.weight'"));
}

}  // namespace
}  // namespace diffscope

namespace diffscope {
namespace {

// Files written by safetensors.torch.save_file(module.state_dict()) from the reference module
// (tests/data/golden, tools/make_golden.py) load as is: dims and hidden from the shapes, T and the
// schedule from the float32 `betas`, the stored float32 buffers within 1e-5 of the float64 recomputation.
TEST(ModelLoadGolden, TorchWrittenFileLoads) {
  const DiffusionModel m = load_diffusion_model(test::data_path("golden/ref_d64_h256.safetensors"));
  EXPECT_EQ(m.net.dim, 64);
  EXPECT_EQ(m.net.hidden, 256);
  EXPECT_EQ(m.schedule.T, 1000);
  EXPECT_EQ(m.schedule.source, "file betas (F32)");
  EXPECT_EQ(m.schedule.betas[0], static_cast<double>(1e-4f));
  EXPECT_NEAR(m.schedule.alphas_cumprod[999], 4.0358e-05, 0.0001e-05);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  EXPECT_TRUE(m.ignored_tensors.empty());
}

// The F16 / BF16 copies of the same weights: each value is the float32 weight rounded to half precision
// (relative rounding error at most 2^-11 for F16 normals, 2^-8 for BF16; F16 subnormals 2^-25 absolute).
TEST(ModelLoadGolden, HalfPrecisionCopiesMatchFloat32Weights) {
  const DiffusionModel ref = load_diffusion_model(test::data_path("golden/ref_d64_h256.safetensors"));
  const DiffusionModel f16 = load_diffusion_model(test::data_path("golden/ref_d64_h256_f16.safetensors"));
  const DiffusionModel bf16 = load_diffusion_model(test::data_path("golden/ref_d64_h256_bf16.safetensors"));
  auto within = [](const std::vector<float>& a, const std::vector<float>& b, double rel, double abs) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (std::abs(static_cast<double>(a[i]) - b[i]) > rel * std::abs(static_cast<double>(a[i])) + abs) return false;
    return true;
  };
  for (const auto* half : {&f16, &bf16}) {
    const bool is_f16 = half == &f16;
    const double rel = is_f16 ? std::ldexp(1.0, -11) : std::ldexp(1.0, -8);
    const double abs = is_f16 ? std::ldexp(1.0, -25) : 0.0;
    EXPECT_TRUE(within(ref.net.W1, half->net.W1, rel, abs)) << (is_f16 ? "F16" : "BF16");
    EXPECT_TRUE(within(ref.net.W2, half->net.W2, rel, abs)) << (is_f16 ? "F16" : "BF16");
    EXPECT_TRUE(within(ref.net.W3, half->net.W3, rel, abs)) << (is_f16 ? "F16" : "BF16");
    EXPECT_TRUE(within(ref.net.b3, half->net.b3, rel, abs)) << (is_f16 ? "F16" : "BF16");
    EXPECT_NE(ref.net.W2, half->net.W2);  // rounded: not a float32 copy
    EXPECT_EQ(half->schedule.source, "file betas (F32)");
  }
}

}  // namespace
}  // namespace diffscope
