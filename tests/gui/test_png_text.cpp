// test_png_text.cpp — every exported PNG carries its sidecar JSON in an iTXt chunk with the keyword
// `diffscope` (issue 16.2, SEMANTICS §6): read back here with libpng's own reader (png_get_text) and compared
// byte for byte with the .json file beside it; `--no-png-text` leaves the chunk out.
#include <gtest/gtest.h>
#include <png.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "gui_test_util.h"

namespace diffscope {
namespace {

struct PngText {
  std::string text;
  int compression = -99;  // PNG_ITXT_COMPRESSION_NONE etc.
};

// The text chunks of a PNG file by keyword, read with libpng (PNG 1.2 spec §4.2.3: tEXt, zTXt, iTXt).
std::map<std::string, PngText> read_png_texts(const std::string& path) {
  std::map<std::string, PngText> out;
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return out;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png_create_info_struct(png);
  png_infop end = png_create_info_struct(png);
  if (setjmp(png_jmpbuf(png)) == 0) {
    png_init_io(png, f);
    png_read_png(png, info, PNG_TRANSFORM_IDENTITY, nullptr);  // pixels and every chunk up to IEND
    for (png_infop i : {info, end}) {
      png_textp t = nullptr;
      const int n = png_get_text(png, i, &t, nullptr);
      for (int k = 0; k < n; ++k)
        out[t[k].key] = {std::string(t[k].text, t[k].compression >= 1 ? t[k].itxt_length : t[k].text_length),
                         t[k].compression};
    }
  }
  png_destroy_read_struct(&png, &info, &end);
  std::fclose(f);
  return out;
}

TEST(PngText, CliPngCarriesItsSidecar) {
  test::TempDir dir, logs;
  const std::string base = "sample --backend cpu --model '" + guitest::model_2d() +
                           "' --n 300 --steps 10 --t-start 400 --seed 3 --size 96x64 --out '" + dir.file("x.npy") + "' ";
  guitest::Result r = guitest::run_cli(base + "--png '" + dir.file("p.png") + "'", logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto texts = read_png_texts(dir.file("p.png"));
  ASSERT_EQ(texts.count("diffscope"), 1u);
  EXPECT_EQ(texts.at("diffscope").compression, PNG_ITXT_COMPRESSION_NONE);  // iTXt, uncompressed
  const std::string sidecar = guitest::slurp(dir.file("p.json"));
  ASSERT_FALSE(sidecar.empty());
  EXPECT_EQ(texts.at("diffscope").text, sidecar);
  EXPECT_EQ(nlohmann::json::parse(texts.at("diffscope").text)["seed"].get<int>(), 3);

  r = guitest::run_cli(base + "--png '" + dir.file("q.png") + "' --no-png-text", logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(read_png_texts(dir.file("q.png")).empty());
  EXPECT_EQ(guitest::read_png(dir.file("q.png")).rgb, guitest::read_png(dir.file("p.png")).rgb);
}

TEST(PngText, GuiSnapshotAndFrameSequenceCarryTheirSidecars) {
  test::TempDir dir, logs;
  const std::string d = dir.path();
  std::ofstream(dir.file("s.txt")) << "set n 300\nset t_start 400\nset steps 6\nwait_complete 5000\n"
                                      "set export_dir " << d << "/exports\nset export_size 96x64\n"
                                      "export snapshot " << d << "/snap.png\nexport frames\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 1024x700 --model '" +
                                                 guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                             logs.path());
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const auto snap = read_png_texts(dir.file("snap.png"));
  ASSERT_EQ(snap.count("diffscope"), 1u);
  EXPECT_EQ(snap.at("diffscope").text, guitest::slurp(dir.file("snap.json")));
  const std::string seq = d + "/exports/frames_0001";
  const auto frame0 = read_png_texts(seq + "/frame_00000.png");
  ASSERT_EQ(frame0.count("diffscope"), 1u);
  auto j = nlohmann::json::parse(frame0.at("diffscope").text);
  EXPECT_EQ(j["frame"].get<int>(), 0);
  EXPECT_EQ(j["png"], "frame_00000.png");
  j.erase("frame");  // the rest is the sequence's sidecar
  j.erase("png");
  auto seq_json = nlohmann::json::parse(guitest::slurp(seq + "/sequence.json"));
  seq_json.erase("frame");
  EXPECT_EQ(j, seq_json);
}

}  // namespace
}  // namespace diffscope
