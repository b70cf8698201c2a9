// test_json_bounded.cpp — hostile nesting in the JSON files we read (sidecars, scheduler configs, settings): a
// clear refusal, never a stack overflow. Expected values: the limit as documented (formats/json_bounded.h) and the
// nesting of hand-built texts.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "base/errors.h"
#include "diffusion/scheduler_config.h"
#include "formats/json_bounded.h"
#include "formats/sidecar_file.h"
#include "io_test_util.h"
#include "session/settings_io.h"

namespace diffscope {
namespace {

std::string nested_objects(int depth) {
  std::string s;
  for (int i = 0; i < depth; ++i) s += "{\"a\":";
  s += "1";
  s += std::string(static_cast<size_t>(depth), '}');
  return s;
}

TEST(JsonBounded, NestingUpToTheLimitParsesBeyondItIsRefused) {
  EXPECT_EQ(parse_json_bounded(nested_objects(kMaxJsonDepth)).size(), 1u);
  EXPECT_THROW(parse_json_bounded(nested_objects(kMaxJsonDepth + 1)), std::exception);
  EXPECT_THROW(parse_json_bounded("[" + std::string(1000, '[') + std::string(1001, ']')), std::exception);
  EXPECT_THROW(parse_json_bounded("{\"a\": 1"), std::exception);  // still refuses invalid JSON
}

// 100,000 nested objects (600 KB): the sidecar reader used by --config and --restore crashed on it (SIGSEGV).
TEST(JsonBounded, DeepSidecarSchedulerConfigAndSettingsAreRefusedCleanly) {
  test::TempDir dir;
  const std::string deep = dir.file("deep.json");
  std::ofstream(deep) << nested_objects(100000);
  std::string note;
  try {
    read_sidecar(deep, &note, "--config");
    FAIL() << "a 100,000-deep sidecar was accepted";
  } catch (const InvalidInput& e) {
    EXPECT_NE(std::string(e.what()).find("not a diffscope sidecar (nested deeper than 64 levels)"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(load_scheduler_config(deep), InvalidInput);
  note.clear();
  load_app_settings(deep, &note);  // a corrupt settings file: the defaults, and a note
  EXPECT_NE(note.find("is corrupt (nested deeper than 64 levels)"), std::string::npos) << note;
}

}  // namespace
}  // namespace diffscope
