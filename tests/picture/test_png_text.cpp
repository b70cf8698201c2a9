// test_png_text.cpp — every exported PNG carries its sidecar JSON in an iTXt chunk with the keyword
// `diffscope` (SEMANTICS §6): read back here with libpng's own reader (png_get_text) and compared
// byte for byte with the .json file beside it; `--no-png-text` leaves the chunk out.
#include <gtest/gtest.h>
#include <png.h>

#include <zlib.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <utility>
#include <vector>

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

// Other tools' rewrites of the `diffscope` chunk, as latin1-chunks/rewrite_chunk.py (reported cases) writes them:
// PNG chunks split and joined by hand (length, type, data, CRC-32 over type and data; PNG spec §5.3), zlib from
// zlib itself.
using Chunk = std::pair<std::string, std::string>;  // type, data

std::vector<Chunk> png_chunks(const std::string& png) {
  std::vector<Chunk> out;
  for (size_t i = 8; i + 12 <= png.size();) {
    const auto* p = reinterpret_cast<const unsigned char*>(png.data() + i);
    const size_t n = size_t(p[0]) << 24 | size_t(p[1]) << 16 | size_t(p[2]) << 8 | p[3];
    out.emplace_back(png.substr(i + 4, 4), png.substr(i + 8, n));
    i += 12 + n;
  }
  return out;
}

std::string be32(uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

std::string png_of(const std::vector<Chunk>& chunks) {
  std::string b = "\x89PNG\r\n\x1a\n";
  for (const auto& [type, data] : chunks) {
    const std::string td = type + data;
    b += be32(uint32_t(data.size())) + td +
         be32(uint32_t(crc32(0, reinterpret_cast<const Bytef*>(td.data()), uInt(td.size()))));
  }
  return b;
}

std::string zlib_compress(const std::string& s) {
  uLongf n = compressBound(uLong(s.size()));
  std::string out(n, '\0');
  EXPECT_EQ(compress(reinterpret_cast<Bytef*>(out.data()), &n, reinterpret_cast<const Bytef*>(s.data()), uLong(s.size())), Z_OK);
  out.resize(n);
  return out;
}

// UTF-8 text (code points <= U+00FF only) as ISO 8859-1 bytes.
std::string utf8_to_latin1(const std::string& u) {
  std::string out;
  for (size_t i = 0; i < u.size(); ++i) {
    const unsigned char c = u[i];
    if (c < 0x80) {
      out += char(c);
    } else {
      EXPECT_TRUE((c == 0xC2 || c == 0xC3) && i + 1 < u.size()) << "a code point above U+00FF at byte " << i;
      out += char(((c & 0x03) << 6) | (static_cast<unsigned char>(u[++i]) & 0x3F));
    }
  }
  return out;
}

// The export with its `diffscope` iTXt replaced by `chunk`, before IDAT or (after_idat) just before IEND.
std::string rewritten(const std::vector<Chunk>& chunks, const Chunk& chunk, bool after_idat) {
  std::vector<Chunk> body;
  for (const Chunk& c : chunks)
    if (!(c.first == "iTXt" && c.second.rfind(std::string("diffscope\0", 10), 0) == 0)) body.push_back(c);
  const Chunk iend = body.back();
  body.pop_back();
  size_t at = 0;
  while (at < body.size() && body[at].first != "IDAT") ++at;
  body.insert(after_idat ? body.end() : body.begin() + at, chunk);
  body.push_back(iend);
  return png_of(body);
}

// Reported case latin1-chunks: Pillow's add_text rewrites our iTXt as tEXt / zTXt in Latin-1 (PNG spec §11.3.4.3).
TEST(PngText, LatinOneAndForeignTextChunksReproduceTheRun) {
  test::TempDir dir, logs;
  const std::string model = dir.file("mod\xC3\xA8le.safetensors");  // "modèle", UTF-8
  std::filesystem::copy_file(guitest::model_2d(), model);
  guitest::Result r = guitest::run_cli("sample --backend cpu --model '" + model + "' --n 64 --steps 10 --t-start 400 "
                                       "--size 64x64 --out '" + dir.file("x.npy") + "' --png '" + dir.file("x.png") + "'",
                                       logs.path());
  ASSERT_EQ(r.code, 0) << r.err;
  const std::vector<Chunk> chunks = png_chunks(guitest::slurp(dir.file("x.png")));
  const std::string js = guitest::slurp(dir.file("x.json"));  // the same text as the iTXt chunk (test above)
  ASSERT_NE(js.find("mod\xC3\xA8le"), std::string::npos);
  const std::string kw("diffscope\0", 10);
  const std::vector<std::pair<std::string, std::string>> variants = {
      {"text_latin1", rewritten(chunks, {"tEXt", kw + utf8_to_latin1(js)}, false)},
      {"ztxt_latin1", rewritten(chunks, {"zTXt", kw + std::string(1, '\0') + zlib_compress(utf8_to_latin1(js))}, false)},
      {"itxt_compressed", rewritten(chunks, {"iTXt", kw + std::string("\1\0\0\0", 4) + zlib_compress(js)}, false)},
      {"itxt_after_idat", rewritten(chunks, {"iTXt", kw + std::string("\0\0\0\0", 4) + js}, true)},
  };
  const std::string want = guitest::slurp(dir.file("x.npy"));
  ASSERT_FALSE(want.empty());
  for (const auto& [name, bytes] : variants) {
    test::write_bytes(dir.file(name + ".png"), bytes);
    r = guitest::run_cli("sample --config '" + dir.file(name + ".png") + "' --out '" + dir.file(name + ".npy") + "'",
                         logs.path());
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    EXPECT_EQ(guitest::slurp(dir.file(name + ".npy")), want) << name;
  }

  // An iTXt holding Latin-1 bytes is ill-formed UTF-8: refused, saying so, never with the raw byte.
  test::write_bytes(dir.file("bad.png"),
                    rewritten(chunks, {"iTXt", kw + std::string("\0\0\0\0", 4) + utf8_to_latin1(js)}, false));
  r = guitest::run_cli("sample --config '" + dir.file("bad.png") + "' --out '" + dir.file("bad.npy") + "'", logs.path());
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not a diffscope sidecar"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("UTF-8"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\xE8'), std::string::npos) << "a raw byte in: " << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("bad.npy")));
}

}  // namespace
}  // namespace diffscope
