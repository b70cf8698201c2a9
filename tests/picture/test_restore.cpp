// test_restore.cpp — `diffscope --restore file.png|file.json`: a GUI snapshot restored from its
// PNG's text chunk (or its .json) and re-exported is pixel-identical (CPU backend, Mesa in CI); a model whose
// path is gone is found among the bundled ones by its SHA-256; a PNG without the chunk opens with defaults
// and a note; a file that is no sidecar is refused with exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gui_test_util.h"
#include "picture/restore.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

guitest::Result run_gui(const std::string& args, const std::string& script_text, const test::TempDir& dir,
                        const test::TempDir& logs) {
  const std::string script = dir.file("script_" + std::to_string(std::hash<std::string>()(args)) + ".txt");
  std::ofstream(script) << script_text;
  return guitest::run_cli("gui --headless --backend cpu --no-persist --size 1024x700 " + args + " --script '" + script + "'",
                          logs.path());
}

TEST(Restore, SnapshotRestoredFromPngOrJsonReExportsPixelIdentical) {
  test::TempDir dir, logs;
  const std::string model = dir.file("my model.safetensors");  // a copy, removed below
  fs::copy_file(guitest::model_2d(), model);
  guitest::Result r = run_gui("--model '" + model + "'",
                              "set n 400\nset t_start 600\nset steps 25\nset seed 9\nset eta 0.25\nset trail 5\n"
                              "set data 0\nset point_size 5\nset camera 0.25,-0.5,1.75\nset export_size 200x150\n"
                              "wait_complete 5000\nexport snapshot " +
                                  dir.file("a.png") + "\n",
                              dir, logs);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const guitest::Png a = guitest::read_png(dir.file("a.png"));
  ASSERT_EQ(a.w, 200);

  for (const char* from : {"a.png", "a.json"}) {
    SCOPED_TRACE(from);
    const std::string out = dir.file(std::string("re_") + from + ".png");
    r = run_gui("--restore '" + dir.file(from) + "'", "wait_complete 5000\nexport snapshot " + out + "\n", dir, logs);
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.err.find("restore:"), std::string::npos) << r.err;  // nothing to note
    const guitest::Png b = guitest::read_png(out);
    EXPECT_EQ(b.w, 200);
    EXPECT_EQ(b.h, 150);
    EXPECT_TRUE(a.rgb == b.rgb) << "the restored snapshot differs";
    const auto ja = nlohmann::json::parse(guitest::slurp(dir.file("a.json")));
    const auto jb = nlohmann::json::parse(guitest::slurp(dir.file(std::string("re_") + from + ".json")));
    for (const char* k : {"n", "sampler", "eta", "steps", "t_start", "seed", "frame", "view"}) EXPECT_EQ(ja[k], jb[k]) << k;
  }

  // Dropped on a running window (the script's `restore`, the same code as the drop): after another run and
  // camera, the restored run re-exports the same pixels.
  r = run_gui("--model '" + guitest::model_2d() + "'",
              "set n 100\nset steps 7\nset camera 1,1,9\nwait_complete 5000\nrestore " + dir.file("a.png") +
                  "\nwait_complete 5000\nexport snapshot " + dir.file("dropped.png") + "\n",
              dir, logs);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("restore: restored " + dir.file("a.png")), std::string::npos) << r.out;
  EXPECT_TRUE(guitest::read_png(dir.file("dropped.png")).rgb == a.rgb) << "the dropped restore differs";

  // The model's path is gone: the bundled model with the same SHA-256 is opened, and a note says so.
  fs::remove(model);
  if (guitest::model_2d().find("assets/models") != std::string::npos) {
    r = run_gui("--restore '" + dir.file("a.png") + "'", "wait_complete 5000\nexport snapshot " + dir.file("c.png") + "\n",
                dir, logs);
    ASSERT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_NE(r.err.find("has its SHA-256"), std::string::npos) << r.err;
    EXPECT_TRUE(guitest::read_png(dir.file("c.png")).rgb == a.rgb);
  }
}

// A bundled model is stored by name as well as by path (a newcomer restored an export in another checkout): the
// sidecar has model.bundled and its command line says --model moons, which runs anywhere; a restore whose file is
// gone and whose SHA-256 no bundled model has (another version of the file) opens the bundled model of that name
// with a note; a sidecar without a SHA-256 says so in words (the note read "its SHA-256 : opened the default").
TEST(Restore, BundledModelIsStoredByNameAndFoundInAnotherCheckout) {
  const std::string moons = test::repo_root() + "/assets/models/moons.safetensors";
  if (!fs::exists(moons)) GTEST_SKIP() << "no bundled moons";
  test::TempDir dir, logs;
  const guitest::Result r = guitest::run_cli("sample --backend cpu --model moons --n 20 --steps 3 --out '" +
                                                 dir.file("x.npy") + "' --png '" + dir.file("m.png") + "' --size 64x64",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(guitest::slurp(dir.file("m.json")));
  EXPECT_EQ(j["model"]["bundled"], "moons");
  EXPECT_EQ(j["command_line"].get<std::string>().rfind("diffscope sample --model moons --n 20 ", 0), 0u)
      << j["command_line"];

  j["model"]["file"] = "/another/checkout/assets/models/moons.safetensors";
  j["model"]["sha256"] = std::string(64, '0');  // the bytes of another version of moons
  RestorePlan p = plan_restore(j);
  EXPECT_TRUE(fs::equivalent(p.model, moons)) << p.model;
  EXPECT_NE(p.note.find("opened the bundled 'moons', whose bytes differ from the export's (the export has SHA-256 " +
                        std::string(64, '0')),
            std::string::npos)
      << p.note;

  j["model"].erase("bundled");
  j["model"].erase("sha256");
  p = plan_restore(j);
  EXPECT_EQ(p.model, "");
  EXPECT_NE(p.note.find("is gone and no bundled model has its bytes (the export has no SHA-256): opened the default"),
            std::string::npos)
      << p.note;
  EXPECT_EQ(p.note.find(" :"), std::string::npos) << p.note;
}

TEST(Restore, OldPngAndNonSidecarFiles) {
  test::TempDir dir, logs;
  // A PNG without the chunk (written with --no-png-text) is read through its .json sidecar beside it, with a note;
  // without that sidecar it is not a diffscope export: exit 2.
  guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + guitest::model_2d() + "' --n 50 --steps 3 --out '" +
                                           dir.file("x.npy") + "' --png '" + dir.file("old.png") + "' --size 64x64 --no-png-text",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  r = run_gui("--model '" + guitest::model_2d() + "' --restore '" + dir.file("old.png") + "'", "frames 1\n", dir, logs);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("carries no diffscope settings: read from its sidecar " + dir.file("old.json")), std::string::npos)
      << r.err;
  std::filesystem::remove(dir.file("old.json"));
  r = run_gui("--model '" + guitest::model_2d() + "' --restore '" + dir.file("old.png") + "'", "frames 1\n", dir, logs);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("carries no diffscope settings and has no sidecar " + dir.file("old.json")), std::string::npos)
      << r.err;
  std::ofstream(dir.file("bad.json")) << "[1, 2";
  r = run_gui("--restore '" + dir.file("bad.json") + "'", "frames 1\n", dir, logs);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--restore"), std::string::npos) << r.err;
  std::ofstream(dir.file("fake.png")) << "not a png";
  r = run_gui("--restore '" + dir.file("fake.png") + "'", "frames 1\n", dir, logs);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("not a PNG"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace diffscope
