// test_reported_io.cpp — issue 11 kinds "sidecar paths", "output collisions", "persisted settings" and
// "64-bit sizes", at the level of the core functions (the CLI tests run the same cases end to end):
// lossless paths in JSON (SEMANTICS §6), distinct outputs and all-or-none writes (§9), the settings range
// table, and the .npy size arithmetic of a 2^31-frame trajectory without allocating it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../test_paths.h"
#include "base/errors.h"
#include "base/ranges.h"
#include "formats/json_path.h"
#include "formats/npy.h"
#include "formats/npy_parse.h"
#include "io_test_util.h"
#include "platform/atomic_write.h"
#include "platform/output_files.h"
#include "session/persisted_ranges.h"
#include "session/settings_io.h"

namespace diffscope {
namespace {

using test::invalid_input_message;
using test::TempDir;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// ---- sidecar paths -------------------------------------------------------------------------------------

TEST(JsonPath, Base64IsRfc4648) {
  // RFC 4648 §10 test vectors.
  const char* const plain[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char* const coded[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(base64_encode(plain[i]), coded[i]);
    EXPECT_EQ(base64_decode(coded[i]), plain[i]);
  }
  EXPECT_THROW(base64_decode("Zm9"), InvalidInput);
  EXPECT_THROW(base64_decode("Zm9*"), InvalidInput);
}

TEST(JsonPath, Utf8ValidityFollowsRfc3629) {
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("caf\xE9"));          // Latin-1 e-acute
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));         // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));     // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_EQ(escape_invalid_utf8("/m/caf\xE9\xC3\xA9.st"), "/m/caf\\xE9\xC3\xA9.st");
}

TEST(JsonPath, AnyFileNameRoundTripsThroughJsonText) {
  // Every byte value 1..255 in a file name (0 cannot be in a Linux path), alone and in a mixed name.
  std::vector<std::string> names = {"/plain/moons.safetensors", "/tmp/mo\xE9ns.safetensors", "caf\xC3\xA9.png"};
  for (int b = 1; b < 256; ++b) names.push_back(std::string("x") + char(b) + "y");
  for (const std::string& p : names) {
    nlohmann::json j;
    put_path(j, "file", p);
    const std::string text = j.dump(2);  // would throw type_error 316 on invalid UTF-8
    std::string back;
    ASSERT_TRUE(get_path(nlohmann::json::parse(text), "file", &back));
    EXPECT_EQ(back, p);
    EXPECT_EQ(j.contains("file_base64"), !is_valid_utf8(p));
  }
}

TEST(SettingsIo, NonUtf8ModelPathSavesAndRestoresLosslessly) {
  TempDir dir;
  AppSettings s;
  s.sampling.model_path = dir.path() + "/mo\xE9ns.safetensors";
  s.export_dir = dir.path() + "/exports-\xFF";
  EXPECT_NO_THROW((void)to_json(s).dump());  // the GUI's autosave dumps this a second after a change
  std::string err;
  ASSERT_TRUE(save_app_settings(dir.file("settings.json"), s, &err)) << err;
  std::string note;
  const AppSettings back = load_app_settings(dir.file("settings.json"), &note);
  EXPECT_EQ(back.sampling.model_path, s.sampling.model_path);
  EXPECT_EQ(back.export_dir, s.export_dir);
  EXPECT_EQ(note, "");
}

// ---- persisted settings ---------------------------------------------------------------------------------

TEST(SettingsIo, ReportedCameraFileIsClamped) {
  // tests/data/reported/settings-range/settings.json: {"view": {"cam_x": 1e16, "cam_auto": false}} used to
  // stall the axis-grid loop at every start. The table's camera range is [-1e5, 1e5].
  std::string note;
  const AppSettings s = load_app_settings(test::data_path("reported/settings-range/settings.json"), &note);
  EXPECT_EQ(s.view.cam_x, 1e5);
  EXPECT_FALSE(s.view.cam_auto);
  EXPECT_TRUE(has(note, "view.cam_x = 1e+16 clamped to 100000")) << note;
}

// Session 5's newcomer trial: a corrupt settings.json was replaced by the defaults (saved at exit) with no copy.
// Now it is renamed to settings.json.bad first (then .bad.2, never replacing an older one), byte for byte.
TEST(SettingsIo, CorruptFileIsKeptAsBadBeforeTheDefaults) {
  TempDir dir;
  auto read = [](const std::string& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  };
  const std::string path = dir.file("settings.json");
  const std::string first = "{\"sampling\": {\"steps\": 12,", second = "not json at all\n";
  test::write_bytes(path, first);
  std::string note;
  const AppSettings d = load_app_settings(path, &note);
  EXPECT_TRUE(d.sampling == AppSettings{}.sampling);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_EQ(read(path + ".bad"), first);
  EXPECT_NE(note.find("is corrupt"), std::string::npos) << note;
  EXPECT_NE(note.find("kept as " + path + ".bad"), std::string::npos) << note;
  test::write_bytes(path, second);
  note.clear();
  load_app_settings(path, &note);
  EXPECT_EQ(read(path + ".bad"), first);
  EXPECT_EQ(read(path + ".bad.2"), second);
  EXPECT_NE(note.find("kept as " + path + ".bad.2"), std::string::npos) << note;
  // A valid file with an ill-typed field is read (that field's default, a note) and left where it is.
  test::write_bytes(path, R"({"sampling": {"steps": "many"}})");
  note.clear();
  load_app_settings(path, &note);
  EXPECT_TRUE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".bad.3"));
}

TEST(SettingsIo, EveryPersistedNumberHasARangeAndIsClampedOnLoad) {
  // Generic over the file's fields: every number to_json writes has an entry in base/ranges.h, and a file
  // holding +-1e300 (or a float where an int is) for it loads inside that range.
  const nlohmann::json defaults = to_json(AppSettings{});
  int checked = 0;
  for (const auto& [section, fields] : defaults.items()) {
    for (const auto& [key, value] : fields.items()) {
      if (!value.is_number()) continue;
      const std::string name = section + "." + key;
      const PersistedRange* r = find_persisted_range(name);
      ASSERT_NE(r, nullptr) << name << " has no range in persisted_ranges()";
      if (name == "sampling.seed") continue;  // every uint64 is a seed
      for (double v : {1e300, -1e300, 1e16, -7.5}) {
        SCOPED_TRACE(name + " = " + std::to_string(v));
        nlohmann::json j = defaults;
        j[section][key] = v;
        const nlohmann::json back = to_json(app_settings_from_json(j, nullptr));
        const double got = back[section][key].get<double>();
        EXPECT_GE(got, r->lo);
        EXPECT_LE(got, r->hi);
      }
      ++checked;
    }
  }
  EXPECT_GE(checked, 19);
}

// ---- output collisions ------------------------------------------------------------------------------------

TEST(OutputFiles, CollisionsAfterNormalisationAreRefusedNamingBoth) {
  TempDir dir;
  const std::string d = dir.path();
  test::write_bytes(d + "/a.npy", "x");
  std::filesystem::create_symlink(d + "/a.npy", d + "/link.npy");
  std::filesystem::create_hard_link(d + "/a.npy", d + "/hard.npy");
  std::filesystem::create_directory(d + "/sub");
  const std::vector<std::pair<std::string, std::string>> same = {
      {d + "/a.npy", d + "/a.npy"},          {d + "/a.npy", d + "/./a.npy"},
      {d + "/a.npy", d + "/sub/../a.npy"},   {d + "/a.npy", d + "/link.npy"},
      {d + "/a.npy", d + "/hard.npy"},       {d + "/new.npy", d + "/sub/../new.npy"},
      {d + "/run.json", png_sidecar_path(d + "/run.png")}, {d + "/b.json", png_sidecar_path(d + "/b.json")},
  };
  for (const auto& [p, q] : same) {
    SCOPED_TRACE(p + " vs " + q);
    const std::string msg =  // p, q copied: a lambda may not capture structured bindings before C++20 (clang)
        invalid_input_message([p = p, q = q] { check_distinct_outputs({{"--out", p}, {"--trajectory", q}}); });
    EXPECT_TRUE(has(msg, "--out '" + p + "' and --trajectory '" + q + "' are the same file")) << msg;
  }
  EXPECT_NO_THROW(check_distinct_outputs({{"--out", d + "/a.npy"}, {"--png", d + "/a.png"},
                                          {"sidecar", png_sidecar_path(d + "/a.png")}, {"--t", d + "/sub/a.npy"}}));
  // Relative and absolute spellings of one file.
  const std::string cwd = std::filesystem::current_path().string();
  ASSERT_EQ(::chdir(d.c_str()), 0);
  const std::string msg = invalid_input_message([&] { check_distinct_outputs({{"--out", "a.npy"}, {"--png", d + "/a.npy"}}); });
  ASSERT_EQ(::chdir(cwd.c_str()), 0);
  EXPECT_TRUE(has(msg, "are the same file")) << msg;
}

TEST(AtomicFileSet, AllOrNone) {
  TempDir dir;
  AtomicFileSet set;
  set.add(dir.file("first.npy"), "--out", "one");
  set.add(dir.file("no-such-folder/second.npy"), "--trajectory", "two");
  const std::string msg = invalid_input_message([&] { set.commit(); });
  EXPECT_TRUE(has(msg, "--trajectory")) << msg;
  EXPECT_TRUE(dir.entries().empty());  // neither the first file nor a temporary file is left
  // A folder where the second file goes: refused before the first is renamed into place.
  std::filesystem::create_directory(dir.file("second.json"));
  AtomicFileSet folder;
  folder.add(dir.file("first.png"), "--png", "png");
  folder.add(dir.file("second.json"), "the sidecar of --png", "{}");
  EXPECT_TRUE(has(invalid_input_message([&] { folder.commit(); }), "it is a folder"));
  EXPECT_EQ(dir.entries(), (std::vector<std::string>{"second.json"}));
  std::filesystem::remove(dir.file("second.json"));
  AtomicFileSet ok;
  const std::string data = "0123456789";
  ok.add(dir.file("a"), "--out", "head:", data.data(), data.size());
  ok.add(dir.file("b"), "--png", "b");
  ok.commit();
  std::ifstream f(dir.file("a"));
  std::string a;
  std::getline(f, a);
  EXPECT_EQ(a, "head:0123456789");
  EXPECT_EQ(dir.entries().size(), 2u);
}

// ---- 64-bit sizes ---------------------------------------------------------------------------------------

TEST(NpySizes, TrajectoryOf2To31FramesIn64Bits) {
  // denoise --steps 2147483647 --trajectory: shape (S + 1, B, dim) = (2147483648, 1, 1) float32. The header is
  // NumPy's: magic (6) + version (2) + length (2) + dict + padding + '\n' to a multiple of 64 (format.py).
  const std::vector<int64_t> shape{2147483648LL, 1, 1};
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2147483648, 1, 1), }";
  const uint64_t header = (10 + dict.size() + 1 + 63) / 64 * 64;
  EXPECT_EQ(npy_header("<f4", shape).size(), header);
  EXPECT_TRUE(has(npy_header("<f4", shape), "(2147483648, 1, 1)"));
  EXPECT_EQ(npy_file_bytes(shape, 4), header + 8589934592ULL);
  // Just below 2^64 bytes: 2^31 (2^31 - 1) float32 = 2^64 - 2^33.
  const std::vector<int64_t> big{2147483648LL, 2147483647LL};
  EXPECT_EQ(npy_file_bytes(big, 4) - npy_header("<f4", big).size(), 18446744065119617024ULL);
  // Overflow of 64 bits is refused, not wrapped.
  EXPECT_THROW(npy_file_bytes({4294967296LL, 4294967296LL}, 4), InvalidInput);
  EXPECT_THROW(npy_file_bytes({-1, 2}, 4), InvalidInput);
}

TEST(NpySizes, OutputsThatDoNotFitTheFileSystemAreRefusedBeforeAnyWork) {
  TempDir dir;
  // 1 EB cannot be free anywhere; the message names the argument and the size.
  try {
    check_output_space({{"--trajectory", dir.file("t.npy"), 1ULL << 60}, {"--out", dir.file("o.npy"), 128}});
    ADD_FAILURE() << "expected ResourceUnavailable";
  } catch (const ResourceUnavailable& e) {
    EXPECT_TRUE(has(e.what(), "--trajectory '" + dir.file("t.npy") + "'")) << e.what();
  }
  EXPECT_NO_THROW(check_output_space({{"--out", dir.file("o.npy"), 128}}));
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
}  // namespace diffscope
