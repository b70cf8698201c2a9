// test_settings_schema.cpp — the one table of settings (SEMANTICS §6 "Settings keys"): every
// name (key or alias) names one setting; the old script names and the old settings-file names still work (with a
// note for set/--set); a settings file written before the schema loads into the same values; values typed by
// name round-trip through settings.json. Expected values are written out by hand from SEMANTICS §6.
#include <gtest/gtest.h>

#include <set>
#include <tuple>

#include "base/errors.h"
#include "session/settings_schema.h"

namespace diffscope {
namespace {

TEST(SettingsSchema, EveryNameIsOneSetting) {
  std::set<std::string> names;
  for (const SettingField& f : setting_fields()) {
    EXPECT_TRUE(names.insert(f.key).second) << f.key;
    for (const std::string& a : f.aliases) EXPECT_TRUE(names.insert(a).second) << a << " (alias of " << f.key << ")";
  }
  // The one name set of SEMANTICS §6 (the long names, and `n` as in --n and the sidecars).
  for (const char* k : {"n", "steps_per_launch", "memory_budget_mb", "trail_frames", "show_data", "show_field",
                        "follow_newest", "play_speed", "loop_resimulate", "image_grid_cols", "export_width"})
    EXPECT_NE(find_setting(k), nullptr) << k;
}

TEST(SettingsSchema, OldNamesAreAliasesWithANote) {
  const std::pair<const char*, const char*> old_new[] = {
      {"n_samples", "n"},         {"spl", "steps_per_launch"}, {"budget_mb", "memory_budget_mb"},
      {"trail", "trail_frames"},  {"data", "show_data"},       {"field", "show_field"},
      {"follow", "follow_newest"}, {"speed", "play_speed"},    {"loop", "loop_resimulate"},
      {"grid_cols", "image_grid_cols"}, {"camera_auto", "cam_auto"}, {"N", "n"}};
  for (const auto& [old_name, key] : old_new) {
    bool alias = false;
    const SettingField* f = find_setting(old_name, &alias);
    ASSERT_NE(f, nullptr) << old_name;
    EXPECT_EQ(std::string(f->key), key);
    EXPECT_TRUE(alias);
  }
  AppSettings s;
  std::string note;
  set_setting(s, "trail", "7", "", &note);
  set_setting(s, "spl", "3", "", &note);
  EXPECT_EQ(s.view.trail_frames, 7);
  EXPECT_EQ(s.sampling.steps_per_launch, 3);
  EXPECT_NE(note.find("'trail' is the old name of 'trail_frames'"), std::string::npos) << note;
  EXPECT_NE(note.find("'spl' is the old name of 'steps_per_launch'"), std::string::npos) << note;
  EXPECT_THROW(set_setting(s, "trail_frames", "65"), InvalidInput);  // [0, 64]
}

TEST(SettingsSchema, ASettingsFileOfTheOldNamesLoads) {
  // As written by the app before the schema (2026-11-30).
  const nlohmann::json old = nlohmann::json::parse(R"({
    "sampling": {"n_samples": 1234, "steps_per_launch": 4, "memory_budget_mb": 64},
    "view": {"trail_frames": 3, "cam_x": 0.5, "cam_auto": false},
    "export": {"dir": "/tmp/x", "width": 320, "height": 200, "image_grid_scale": 5}})");
  std::string note;
  const AppSettings s = settings_from_json(old, &note);
  EXPECT_EQ(note, "");
  EXPECT_EQ(s.sampling.n_samples, 1234);
  EXPECT_EQ(s.sampling.memory_budget_mb, 64);
  EXPECT_EQ(s.view.trail_frames, 3);
  EXPECT_EQ(s.view.cam_x, 0.5);
  EXPECT_FALSE(s.view.cam_auto);
  EXPECT_EQ(s.export_dir, "/tmp/x");
  EXPECT_EQ(s.export_width, 320);
  EXPECT_EQ(s.export_height, 200);
  EXPECT_EQ(s.image_grid_scale, 5);
  // Saved back with the new keys.
  const nlohmann::json j = settings_to_json(s);
  EXPECT_EQ(j["sampling"]["n"], 1234);
  EXPECT_EQ(j["export"]["export_width"], 320);
  EXPECT_FALSE(j["sampling"].contains("n_samples"));
}

// draw_mode takes primitives or splat (the default primitives); anything else names both and changes nothing.
TEST(SettingsSchema, DrawModeRefusesOtherNames) {
  AppSettings s;
  EXPECT_EQ(s.view.draw_mode, DrawMode::Primitives);
  try {
    set_setting(s, "draw_mode", "quads");
    FAIL() << "accepted draw_mode quads";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("valid: primitives, splat"), std::string::npos) << e.what();
  }
  EXPECT_EQ(s.view.draw_mode, DrawMode::Primitives);
}

TEST(SettingsSchema, ValuesSetByNameRoundTripThroughTheFile) {
  AppSettings s;
  const std::pair<const char*, const char*> values[] = {
      {"n", "777"},          {"sampler", "heun"},     {"spacing", "karras"},  {"eta", "0.125"},
      {"steps", "33"},       {"t_start", "500"},      {"seed", "18446744073709551615"},
      {"precision", "bf16"}, {"backend", "cpu"},      {"from_data", "1"},     {"memory_budget_mb", "99"},
      {"trail_frames", "9"}, {"show_data", "0"},      {"show_field", "1"},    {"show_axes", "0"},
      {"field_x0", "1"},     {"field_grid", "10"},    {"point_size", "4.5"},  {"point_alpha", "0.25"},
      {"camera", "1.5,-2,0.75"}, {"export_size", "300x200"}, {"image_grid_scale", "3"},
      {"view_mode", "both"}, {"density_scale", "linear"}, {"density_bin_px", "7"}, {"density_contours", "0"},
      {"draw_mode", "splat"}};
  for (const auto& [k, v] : values) set_setting(s, k, v);
  std::string note;
  const AppSettings back = settings_from_json(nlohmann::json::parse(settings_to_json(s).dump()), &note);
  EXPECT_EQ(note, "");
  EXPECT_EQ(settings_to_json(back), settings_to_json(s));
  EXPECT_EQ(back.sampling.seed, 18446744073709551615ull);
  EXPECT_EQ(back.view.cam_y, -2.0);
  EXPECT_FALSE(back.view.cam_auto);
  EXPECT_FALSE(back.view.show_axes);
  EXPECT_EQ(back.export_height, 200);
  EXPECT_EQ(back.view.view_mode, ViewMode::Both);
  EXPECT_EQ(back.view.density_scale, DensityScale::Linear);
  EXPECT_EQ(back.view.density_bin_px, 7);
  EXPECT_FALSE(back.view.density_contours);
  EXPECT_EQ(back.view.draw_mode, DrawMode::Splat);
  EXPECT_TRUE(same_sampling(back.sampling, s.sampling));
  SamplingSettings other = s.sampling;
  other.eta = 0.5;
  other.steps_per_launch = 2;
  EXPECT_FALSE(same_sampling(other, s.sampling));
  EXPECT_EQ(describe_sampling_differences(other, s.sampling), "eta 0.5 (asked 0.125), steps_per_launch 2 (asked 10)");
}

// The comparison grid's keys (SEMANTICS §10 "The grid in the window"): kept in the file in the spec's text form,
// a bad spec or metric refused naming the key's value, a bad spec in the file ignored with a note.
TEST(SettingsSchema, GridKeysRoundTripAndRefuseBadValues) {
  AppSettings s;
  set_setting(s, "grid", "cols=steps:5,10  rows=sampler:ddim,heun");
  set_setting(s, "grid_show", "1");
  set_setting(s, "grid_metric", "displacement");
  set_setting(s, "grid_sort", "1");
  set_setting(s, "grid_align", "step");
  EXPECT_EQ(s.view.grid, "rows=sampler:ddim,heun cols=steps:5,10");
  std::string note;
  const AppSettings back = settings_from_json(nlohmann::json::parse(settings_to_json(s).dump()), &note);
  EXPECT_EQ(note, "");
  EXPECT_EQ(settings_to_json(back), settings_to_json(s));
  EXPECT_TRUE(back.view.grid_show && back.view.grid_sort);
  EXPECT_EQ(back.view.grid_align, "step");
  set_setting(s, "grid", "off");
  EXPECT_EQ(s.view.grid, "");
  for (const auto& [k, v, part] : {std::tuple<const char*, const char*, const char*>{"grid", "rows=steps:5,5", "value '5' is given twice"},
                                   {"grid", "rows=colour:1", "'colour'"},
                                   {"grid_metric", "speed", "'speed' is not a metric"},
                                   {"grid_align", "time", "'time' is not valid"}}) {
    try {
      set_setting(s, k, v);
      ADD_FAILURE() << k << " " << v << " accepted";
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
  const AppSettings bad = settings_from_json(nlohmann::json::parse(R"({"view": {"grid": "rows=steps:0"}})"), &note);
  EXPECT_EQ(bad.view.grid, "");
  EXPECT_NE(note.find("ignored field 'grid'"), std::string::npos) << note;
}

// Float settings are written as typed (a newcomer saw point_alpha 0.30000001192 in a sidecar): the JSON text is
// the shortest that reads back as the same float, and a double that is not a float's value is left alone.
TEST(SettingsSchema, FloatSettingsAreWrittenAsTyped) {
  AppSettings s;
  set_setting(s, "point_alpha", "0.3");
  set_setting(s, "point_size", "4.1");
  set_setting(s, "play_speed", "0.7");
  const nlohmann::json j = settings_to_json(s);
  EXPECT_EQ(j["view"]["point_alpha"].dump(), "0.3");
  EXPECT_EQ(j["view"]["point_size"].dump(), "4.1");
  EXPECT_EQ(j["view"]["play_speed"].dump(), "0.7");
  std::string note;
  const AppSettings back = settings_from_json(nlohmann::json::parse(j.dump()), &note);
  EXPECT_EQ(note, "");
  EXPECT_EQ(back.view.point_alpha, 0.3f);
  EXPECT_EQ(back.view.point_size, 4.1f);
  EXPECT_EQ(float_as_typed(1.1f), 1.1);
  EXPECT_EQ(float_as_typed(0.6f), 0.6);
  EXPECT_EQ(float_as_typed(16777217.0f), 16777216.0);  // 2^24 + 1 is not a float: the float's own value
}

// The model-family rows (SEMANTICS §6): prediction_type ("from_file" or a family), flow_shift ("from_file" or a
// number in [0.001, 1000]) and field_quantity (eps, x0, output, score); field_x0 is the old switch's shorthand.
TEST(SettingsSchema, FamilyRowsParseRefuseAndRoundTrip) {
  AppSettings s;
  nlohmann::json j = settings_to_json(s);
  EXPECT_EQ(j["sampling"]["prediction_type"], "from_file");
  EXPECT_EQ(j["sampling"]["flow_shift"], "from_file");
  EXPECT_EQ(j["view"]["field_quantity"], "eps");
  EXPECT_FALSE(j["view"].contains("field_x0"));
  const std::pair<const char*, Family> families[] = {{"epsilon", Family::Epsilon}, {"sample", Family::Sample},
                                                     {"v_prediction", Family::VPrediction}, {"flow", Family::Flow},
                                                     {"flow_prediction", Family::Flow}, {"edm", Family::Edm}};
  for (const auto& [text, f] : families) {
    set_setting(s, "prediction_type", text);
    ASSERT_TRUE(s.sampling.prediction_type) << text;
    EXPECT_EQ(*s.sampling.prediction_type, f) << text;
  }
  set_setting(s, "prediction_type", "from_file");
  EXPECT_FALSE(s.sampling.prediction_type);
  try {
    set_setting(s, "prediction_type", "x0", "set prediction_type");
    ADD_FAILURE() << "x0 is not a prediction_type";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()).rfind("set prediction_type = 'x0' is not valid; valid: from_file, epsilon", 0), 0u)
        << e.what();
  }
  set_setting(s, "flow_shift", "3");
  EXPECT_EQ(s.sampling.flow_shift, 3.0);
  set_setting(s, "flow_shift", "0.001");
  set_setting(s, "flow_shift", "1000");
  for (const char* bad : {"0", "-1", "1000.5", "nan", "inf", "three"}) {
    try {
      set_setting(s, "flow_shift", bad, "--set flow_shift");
      ADD_FAILURE() << bad;
    } catch (const InvalidInput& e) {
      EXPECT_NE(std::string(e.what()).find("--set flow_shift = "), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("from_file or a number in [0.001, 1000]"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(s.sampling.flow_shift, 1000.0);  // a refused value changes nothing
  set_setting(s, "flow_shift", "from_file");
  EXPECT_FALSE(s.sampling.flow_shift);
  const std::pair<const char*, FieldQuantity> quantities[] = {
      {"eps", FieldQuantity::Eps}, {"x0", FieldQuantity::X0}, {"output", FieldQuantity::Output},
      {"score", FieldQuantity::Score}};
  for (const auto& [text, q] : quantities) {
    set_setting(s, "field_quantity", text);
    EXPECT_EQ(s.view.field_quantity, q) << text;
  }
  EXPECT_THROW(set_setting(s, "field_quantity", "v"), InvalidInput);
  set_setting(s, "field_x0", "1");
  EXPECT_EQ(s.view.field_quantity, FieldQuantity::X0);
  set_setting(s, "field_x0", "0");
  EXPECT_EQ(s.view.field_quantity, FieldQuantity::Eps);
  // Through the file: the values set, and the file's tolerant reading (a shift clamped into its range, with a note).
  set_setting(s, "prediction_type", "v_prediction");
  set_setting(s, "flow_shift", "2.5");
  set_setting(s, "field_quantity", "score");
  std::string note;
  const AppSettings back = settings_from_json(nlohmann::json::parse(settings_to_json(s).dump()), &note);
  EXPECT_EQ(note, "");
  EXPECT_EQ(back.sampling.prediction_type, Family::VPrediction);
  EXPECT_EQ(back.sampling.flow_shift, 2.5);
  EXPECT_EQ(back.view.field_quantity, FieldQuantity::Score);
  EXPECT_TRUE(same_sampling(back.sampling, s.sampling));
  SamplingSettings other = s.sampling;
  other.flow_shift.reset();
  EXPECT_EQ(describe_sampling_differences(other, s.sampling), "flow_shift from_file (asked 2.5)");
  j = settings_to_json(s);
  j["sampling"]["flow_shift"] = -4;
  j["sampling"]["prediction_type"] = "x0";
  note.clear();
  const AppSettings clamped = settings_from_json(j, &note);
  EXPECT_EQ(clamped.sampling.flow_shift, 0.001);
  EXPECT_FALSE(clamped.sampling.prediction_type);  // an unknown family keeps the default
  EXPECT_NE(note.find("flow_shift = -4 clamped to 0.001"), std::string::npos) << note;
  EXPECT_NE(note.find("prediction_type"), std::string::npos) << note;
}

TEST(SettingsSchema, OneSizeParser) {
  int w = 0, h = 0;
  parse_size_wxh("--size", "640x480", &w, &h);
  EXPECT_EQ(w, 640);
  EXPECT_EQ(h, 480);
  parse_size_wxh("--size", "17,16384", &w, &h);  // a sidecar's [w, h] as text
  EXPECT_EQ(w, 17);
  try {
    parse_size_wxh("--size", "15x20", &w, &h);
    ADD_FAILURE() << "15x20 accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("--size = 15x20 is not valid; want WxH with W and H in [16, 16384]"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace diffscope
