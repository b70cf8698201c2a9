// test_sample_noise.cpp — `sample --noise x_T.npy`: the file replaces the start noise only, so
// frame 0 of a --trajectory passed back as --noise gives the seed's run bit for bit (with ddpm, whose step
// noise still comes from --seed); other noise gives another result; its rows set n; bad files and
// --from-data are refused with exit 2 before anything is written.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "formats/npy.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

std::string sample_args(const std::string& sampler) {
  return "sample --backend cpu --model '" + guitest::model_2d() + "' --sampler " + sampler +
         " --steps 12 --t-start 500 --seed 7 ";
}

TEST(SampleNoise, TrajectoryFrameZeroAsNoiseReproducesTheSeedBitForBit) {
  test::TempDir dir, logs;
  for (const std::string sampler : {"ddim", "ddpm"}) {
    SCOPED_TRACE(sampler);
    guitest::Result r = guitest::run_cli(sample_args(sampler) + "--n 96 --out '" + dir.file("a.npy") +
                                             "' --trajectory '" + dir.file("t.npy") + "'",
                                         logs.path());
    ASSERT_EQ(r.code, 0) << r.err;
    const NpyFloat t = read_npy_float(dir.file("t.npy"), "t");
    ASSERT_EQ(t.shape.size(), 3u);
    const int64_t n = t.shape[1], dim = t.shape[2];
    write_npy_float(dir.file("x_T.npy"), {n, dim}, t.data.data(), "x_T");  // frame 0: the Philox start noise
    // float64 holds every float32 exactly: the same start state through the other accepted dtype.
    std::vector<double> wide(t.data.begin(), t.data.begin() + n * dim);
    write_npy_double(dir.file("x_T64.npy"), {n, dim}, wide.data(), "x_T64");

    for (const char* noise : {"x_T.npy", "x_T64.npy"}) {
      r = guitest::run_cli(sample_args(sampler) + "--noise '" + dir.file(noise) + "' --out '" + dir.file("b.npy") + "'",
                           logs.path());
      ASSERT_EQ(r.code, 0) << r.err;
      const NpyFloat a = read_npy_float(dir.file("a.npy"), "a"), b = read_npy_float(dir.file("b.npy"), "b");
      EXPECT_EQ(b.shape, a.shape);  // n from the file's rows (no --n given)
      EXPECT_EQ(0, std::memcmp(a.data.data(), b.data.data(), a.data.size() * sizeof(float))) << noise;
    }

    // Other start noise (the same rows negated) gives another result: the file is really used.
    for (int64_t i = 0; i < n * dim; ++i) wide[size_t(i)] = -wide[size_t(i)];
    write_npy_double(dir.file("neg.npy"), {n, dim}, wide.data(), "neg");
    r = guitest::run_cli(sample_args(sampler) + "--noise '" + dir.file("neg.npy") + "' --out '" + dir.file("c.npy") + "'",
                         logs.path());
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_NE(read_npy_float(dir.file("c.npy"), "c").data, read_npy_float(dir.file("a.npy"), "a").data);
  }
}

TEST(SampleNoise, BadNoiseIsRefusedBeforeAnythingIsWritten) {
  test::TempDir in, out, logs;
  std::vector<float> v(30, 0.5f);
  write_npy_float(in.file("d3.npy"), {10, 3}, v.data(), "d3");       // dim 3 for a dim-2 model
  write_npy_float(in.file("ok.npy"), {15, 2}, v.data(), "ok");
  write_npy_float(in.file("flat.npy"), {30}, v.data(), "flat");      // 1-D
  v[7] = std::numeric_limits<float>::quiet_NaN();
  write_npy_float(in.file("nan.npy"), {15, 2}, v.data(), "nan");
  test::write_bytes(in.file("junk.npy"), "not an npy file");
  const struct {
    std::string args, names;
  } cases[] = {{"--noise '" + in.file("d3.npy") + "'", "columns"},
               {"--noise '" + in.file("flat.npy") + "'", "--noise"},
               {"--noise '" + in.file("nan.npy") + "'", "not finite"},
               {"--noise '" + in.file("junk.npy") + "'", "--noise"},
               {"--noise '" + in.file("missing.npy") + "'", "--noise"},
               {"--noise '" + in.file("ok.npy") + "' --n 16", "--n = 16"},
               {"--noise '" + in.file("ok.npy") + "' --from-data", "--from-data"}};
  for (const auto& c : cases) {
    const guitest::Result r =
        guitest::run_cli(sample_args("ddim") + c.args + " --out '" + out.file("x.npy") + "'", logs.path());
    EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.names), std::string::npos) << r.err;
    EXPECT_TRUE(out.entries().empty()) << c.args;
  }
  // --n equal to the rows is accepted.
  const guitest::Result r = guitest::run_cli(
      sample_args("ddim") + "--noise '" + in.file("ok.npy") + "' --n 15 --out '" + out.file("x.npy") + "'", logs.path());
  EXPECT_EQ(r.code, 0) << r.err;
}

}  // namespace
}  // namespace diffscope
