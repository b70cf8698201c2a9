// test_settings_io.cpp — the GUI's settings file (session/settings_io.h): saved and restored losslessly (any path),
// every persisted number clamped into its range of base/ranges.h on load, a corrupt file kept as settings.json.bad.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/ranges.h"
#include "io_test_util.h"
#include "session/persisted_ranges.h"
#include "session/settings_io.h"
#include "test_paths.h"

namespace diffscope {
namespace {

using test::TempDir;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Found by the public bug reports (tests/data/reported/): "sidecar paths".
TEST(SettingsIo, NonUtf8ModelPathSavesAndRestoresLosslessly) {
  TempDir dir;
  AppSettings s;
  s.sampling.model_path = dir.path() + "/mo\xE9ns.safetensors";
  s.export_dir = dir.path() + "/exports-\xFF";
  EXPECT_NO_THROW((void)to_json(s).dump());  // the GUI's autosave dumps this every frame
  std::string err;
  ASSERT_TRUE(save_app_settings(dir.file("settings.json"), s, &err)) << err;
  std::string note;
  const AppSettings back = load_app_settings(dir.file("settings.json"), &note);
  EXPECT_EQ(back.sampling.model_path, s.sampling.model_path);
  EXPECT_EQ(back.export_dir, s.export_dir);
  EXPECT_EQ(note, "");
}

// Found by the public bug reports (tests/data/reported/): "persisted settings".
TEST(SettingsIo, ReportedCameraFileIsClamped) {
  // tests/data/reported/settings-range/settings.json: {"view": {"cam_x": 1e16, "cam_auto": false}} used to
  // stall the axis-grid loop at every start. The table's camera range is [-1e5, 1e5].
  std::string note;
  const AppSettings s = load_app_settings(test::data_path("reported/settings-range/settings.json"), &note);
  EXPECT_EQ(s.view.cam_x, 1e5);
  EXPECT_FALSE(s.view.cam_auto);
  EXPECT_TRUE(has(note, "view.cam_x = 1e+16 clamped to 100000")) << note;
}

// Found by the public bug reports (tests/data/reported/): "persisted settings".
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

// Found by a newcomer trial: a corrupt settings.json was replaced by the defaults (saved at exit) with no copy.
// It is renamed to settings.json.bad first (then .bad.2, never replacing an older one), byte for byte.
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

}  // namespace
}  // namespace diffscope
