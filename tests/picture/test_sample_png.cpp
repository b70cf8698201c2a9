// test_sample_png.cpp — `diffscope sample ... --png out.png --size WxH`: the run is
// rendered through EGL (Mesa here) into a PNG of that size that is not blank, with a sidecar naming the
// model's SHA-256 and the settings (SEMANTICS §6), any file name included; a bad --size is refused with exit 2 before
// any work.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>

#include "formats/json_path.h"
#include "formats/sha256.h"
#include "gui_test_util.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

TEST(SamplePng, RendersTheRunWithSidecar) {
  test::TempDir dir, logs;
  const std::string model = guitest::model_2d();
  const guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + model +
                                                 "' --n 800 --steps 20 --t-start 600 --seed 5 --out '" +
                                                 dir.file("x.npy") + "' --png '" + dir.file("p.png") +
                                                 "' --size 320x240",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const guitest::Png p = guitest::read_png(dir.file("p.png"));
  EXPECT_EQ(p.w, 320);
  EXPECT_EQ(p.h, 240);
  EXPECT_GT(p.distinct_colors(), 20u);
  EXPECT_GT(p.non_background(), 0.002);
  const auto j = nlohmann::json::parse(guitest::slurp(dir.file("p.json")));
  EXPECT_EQ(j["model"]["sha256"].get<std::string>(), sha256_file(model));
  EXPECT_EQ(j["steps"].get<int>(), 20);
  EXPECT_EQ(j["t_start"].get<int>(), 600);
  EXPECT_EQ(j["seed"].get<int>(), 5);
  EXPECT_EQ(j["n"].get<int>(), 800);
  EXPECT_EQ(j["sampler"], "ddim");
  EXPECT_EQ(j["export_width"].get<int>(), 320);
}

// An image model's picture shows a 12 x 12 grid by default: with 256 samples that is samples 0-143, and the PNG
// has no caption, so stderr says so and names the columns that show all (ceil(sqrt(256)) = 16); with those, or
// with n <= 144, no note.
TEST(SamplePng, ImageGridThatHidesSamplesIsNoted) {
  const std::string digits = test::repo_root() + "/assets/models/digits8x8.safetensors";
  if (!std::filesystem::exists(digits)) GTEST_SKIP() << "no bundled digits8x8";
  test::TempDir dir, logs;
  auto run = [&](int n, const std::string& extra) {
    return guitest::run_cli("sample --backend cpu --model '" + digits + "' --n " + std::to_string(n) +
                                " --steps 2 --out '" + dir.file("x.npy") + "' --png '" + dir.file("p.png") +
                                "' --size 200x100 " + extra,
                            logs.path());
  };
  guitest::Result r = run(256, "");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("note: the image grid shows samples 0-143 of 256 (12 x 12; the scatter beside it shows all); "
                       "--image-grid-cols 16 shows every one"),
            std::string::npos)
      << r.err;
  r = run(256, "--image-grid-cols 16");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("image grid"), std::string::npos) << r.err;
  r = run(144, "");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("image grid"), std::string::npos) << r.err;
}

// `sample` with a picture into a fresh folder: (the result, the folder's entries afterwards).
std::pair<guitest::Result, std::vector<std::string>> sample_png(const std::string& png_name, const std::string& extra) {
  test::TempDir dir, logs;
  const guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + guitest::model_2d() +
                                                 "' --n 10 --steps 2 --out '" + dir.file("x.npy") + "' --png '" +
                                                 dir.file(png_name) + "' " + extra,
                                             logs.path());
  return {r, dir.entries()};
}

TEST(SamplePng, BadSizeIsRefused) {
  const auto [r, written] = sample_png("p.png", "--size 12x99999");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--size"), std::string::npos) << r.err;
  EXPECT_TRUE(written.empty());
}

TEST(SamplePng, ANameNotEndingInPngIsRefused) {
  // `--png a.jpg` wrote PNG bytes into a .jpg; now exit 2 before any work, nothing written.
  const auto [r, written] = sample_png("a.jpg", "");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("a.jpg: the picture is written as PNG"), std::string::npos) << r.err;
  EXPECT_TRUE(written.empty());
}

// Found by the public bug reports (tests/data/reported/).
TEST(SamplePng, SidecarTakesAnyFileName) {
  test::TempDir dir, logs;
  const std::string model = dir.file("mo\xE9ns.safetensors");
  fs::copy_file(guitest::model_2d(), model);
  const std::string png = dir.file("p\xE9.png");
  const guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + model +
                                                 "' --n 50 --steps 5 --t-start 200 --out '" + dir.file("x.npy") +
                                                 "' --png '" + png + "' --size 64x48",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(guitest::slurp(dir.file("p\xE9.json")));
  std::string back;
  ASSERT_TRUE(get_path(j["model"], "file", &back));
  EXPECT_EQ(back, model);
  ASSERT_TRUE(get_path(j, "png", &back));
  EXPECT_EQ(back, "p\xE9.png");
  EXPECT_EQ(j["model"]["file"].get<std::string>(), dir.path() + "/mo\\xE9ns.safetensors");
}

}  // namespace
}  // namespace diffscope
