// test_words.cpp — the words of messages (base/words.h): a count with its noun in the right number, the edit
// distance and the nearest known name to a typo. Expected values worked out by hand.
#include <gtest/gtest.h>

#include <cstdlib>

#include "base/words.h"

namespace diffscope {
namespace {

TEST(Words, CountNounHasTheNumberOfItsCount) {  // "1 steps" in the GUI and the CLI
  EXPECT_EQ(count_noun(1, "step"), "1 step");
  EXPECT_EQ(count_noun(0, "step"), "0 steps");
  EXPECT_EQ(count_noun(2, "read-back"), "2 read-backs");
  EXPECT_EQ(count_noun(-1, "step"), "-1 steps");
  EXPECT_EQ(count_noun(1, "match", "matches"), "1 match");
  EXPECT_EQ(count_noun(3, "match", "matches"), "3 matches");
}

TEST(Words, EditDistanceCountsSingleByteEdits) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("set", "set"), 0u);
  EXPECT_EQ(edit_distance("sett", "set"), 1u);     // one deletion
  EXPECT_EQ(edit_distance("smaple", "sample"), 2u);  // two substitutions
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
}

TEST(Words, NearestNameIsWithinTwoEditsOrTheOnlyPrefix) {
  const std::vector<std::string> commands{"frames", "set", "screenshot", "schedule", "scheduler_config"};
  EXPECT_EQ(nearest_name("sett", commands), "set");
  EXPECT_EQ(nearest_name("frams", commands), "frames");
  EXPECT_EQ(nearest_name("screensho", commands), "screenshot");
  EXPECT_EQ(nearest_name("xyzzy", commands), "");
  EXPECT_EQ(nearest_name("scheduler_c", commands), "scheduler_config");  // the one name it begins
  EXPECT_EQ(nearest_name("sche", commands), "");                         // two names begin so: none
  EXPECT_EQ(nearest_name("scheduler_c", commands, ~size_t(0)), "");      // prefixes off
}

// A loader's error names its file first; a caller naming the file itself keeps only the rest (a newcomer trial's
// "--model = a.safetensors: a.safetensors: __metadata__ ...").
TEST(Words, AfterLabelDropsTheLabelTheMessageStartsWith) {
  EXPECT_EQ(after_label("/m/a.safetensors: __metadata__ x", "/m/a.safetensors"), "__metadata__ x");
  EXPECT_EQ(after_label("/m/a.safetensors: __metadata__ x", "/m/b.safetensors"), "/m/a.safetensors: __metadata__ x");
  EXPECT_EQ(after_label("/m/a.safetensors__metadata__", "/m/a.safetensors"), "/m/a.safetensors__metadata__");
  EXPECT_EQ(after_label("anything", ""), "anything");
}

TEST(Words, NumbersAsMessagesAndFilesShowThem) {
  EXPECT_EQ(short_number(0.000123456789), "0.000123457");  // %.6g
  EXPECT_EQ(short_number(1e6), "1e+06");
  EXPECT_EQ(short_number(2.5), "2.5");
  EXPECT_EQ(round_trip_number(0.1), "0.1");
  EXPECT_EQ(round_trip_number(0.0), "0");
  EXPECT_EQ(round_trip_number(1.0 / 3.0), "0.33333333333333331");  // %.15g does not read back: %.17g
  EXPECT_EQ(round_trip_number(2.5e-7), "2.5e-07");
  for (double v : {0.1, 1.0 / 3.0, 6.02214076e23, -1e-300, 123456789.123})
    EXPECT_EQ(std::strtod(round_trip_number(v).c_str(), nullptr), v) << v;
}

}  // namespace
}  // namespace diffscope

TEST(Words, SplitKeepsEveryPartBetweenTheSeparators) {
  EXPECT_EQ(diffscope::split("a,,b", ','), (std::vector<std::string>{"a", "", "b"}));
  EXPECT_EQ(diffscope::split("", ','), (std::vector<std::string>{""}));
  EXPECT_EQ(diffscope::split("ddim", ','), (std::vector<std::string>{"ddim"}));
  EXPECT_EQ(diffscope::split(",x,", ','), (std::vector<std::string>{"", "x", ""}));
  EXPECT_EQ(diffscope::split("rows=a cols=b", ' '), (std::vector<std::string>{"rows=a", "cols=b"}));
}
