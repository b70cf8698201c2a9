// test_script_args.cpp — the words of a headless script line (session/script_args.h): blanks split, double quotes keep
// blanks and '#', '#' outside quotes starts a comment; numbers are read strictly with their range; a word left over
// is an error. Expected words and messages written out by hand from the rules in script_args.h.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "base/errors.h"
#include "session/script_args.h"

namespace diffscope {
namespace {

using Words = std::vector<std::string>;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

TEST(ScriptArgs, WordsSplitOnBlanksQuotesKeepThem) {
  EXPECT_EQ(script_words("set export_dir /a/sp ace"), (Words{"set", "export_dir", "/a/sp", "ace"}));
  EXPECT_EQ(script_words("set export_dir \"/a/sp ace\""), (Words{"set", "export_dir", "/a/sp ace"}));
  EXPECT_EQ(script_words("  frames\t3  # a comment"), (Words{"frames", "3"}));
  EXPECT_EQ(script_words("model \"/m/a#b c.safetensors\" # x"), (Words{"model", "/m/a#b c.safetensors"}));
  EXPECT_EQ(script_words("screenshot /a/b#c"), (Words{"screenshot", "/a/b"}));  // '#' outside quotes: a comment
  EXPECT_EQ(script_words("set export_dir \"\""), (Words{"set", "export_dir", ""}));
  EXPECT_EQ(script_words("x \"a \\\"q\\\" \\\\ b\""), (Words{"x", "a \"q\" \\ b"}));
  EXPECT_EQ(script_words("x pre\"mid dle\"post"), (Words{"x", "premid dlepost"}));
  EXPECT_EQ(script_words("# only a comment"), Words{});
  EXPECT_EQ(script_words(""), Words{});
  const std::string open = error_of([] { script_words("model \"/a/b c"); });
  EXPECT_NE(open.find("column 7 is not closed"), std::string::npos) << open;
}

TEST(ScriptArgs, IntegersAreStrictAndRangeChecked) {
  const IntRange r{0, 1000000};
  auto read = [&](const std::string& w) {
    ScriptArgs a("frames", {w});
    return a.integer("N", r);
  };
  EXPECT_EQ(read("0"), 0);
  EXPECT_EQ(read("1000000"), 1000000);
  std::string m = error_of([&] { read("abc"); });
  EXPECT_NE(m.find("frames: N = 'abc' is not an integer; valid: an integer in [0, 1000000]"), std::string::npos) << m;
  m = error_of([&] { read("-1"); });
  EXPECT_NE(m.find("frames: N = -1 is out of range; valid: an integer in [0, 1000000]"), std::string::npos) << m;
  m = error_of([&] { read("1000001"); });
  EXPECT_NE(m.find("out of range"), std::string::npos) << m;
  m = error_of([&] { read("99999999999999999"); });
  EXPECT_NE(m.find("frames: N = 99999999999999999 is out of range"), std::string::npos) << m;
  m = error_of([&] { read("999999999999999999999999"); });  // past int64: out of range, not wrapped
  EXPECT_NE(m.find("out of range"), std::string::npos) << m;
  for (const char* bad : {"1e3", "3.5", "12x", ""}) EXPECT_NE(error_of([&] { read(bad); }).find("not an integer"), std::string::npos) << bad;
  ScriptArgs none("frames", {});
  EXPECT_EQ(none.integer_or("N", r, 1), 1);
  EXPECT_NE(error_of([&] { none.integer("N", r); }).find("frames: missing N [0, 1000000]"), std::string::npos);
}

TEST(ScriptArgs, RealsAreFiniteAndRangeChecked) {
  auto read = [](const std::string& w) {
    ScriptArgs a("wheel", {w});
    return a.real("CLICKS", {-1000, 1000});
  };
  EXPECT_EQ(read("-2.5"), -2.5);
  EXPECT_EQ(read("1000"), 1000);
  for (const char* bad : {"nan", "inf", "x", "1.5y"})
    EXPECT_NE(error_of([&] { read(bad); }).find("is not a finite number"), std::string::npos) << bad;
  EXPECT_NE(error_of([&] { read("1000.5"); }).find("wheel: CLICKS = 1000.5 is out of range; valid: a number in [-1000, 1000]"),
            std::string::npos);
}

TEST(ScriptArgs, AWordLeftOverIsAnErrorNamingIt) {
  ScriptArgs a("set", {"export_dir", "/a/sp", "ace"});
  EXPECT_EQ(a.word("KEY"), "export_dir");
  EXPECT_EQ(a.word("VALUE"), "/a/sp");
  const std::string m = error_of([&] { a.end(); });
  EXPECT_NE(m.find("set: unexpected extra word 'ace'"), std::string::npos) << m;
  EXPECT_NE(m.find("double quotes"), std::string::npos) << m;
  ScriptArgs b("print", {});
  EXPECT_EQ(error_of([&] { b.end(); }), "");
  EXPECT_EQ(b.word_or("PATH", "fallback"), "fallback");
  ScriptArgs c("print", {"a", "b"});
  EXPECT_NE(error_of([&] { c.end(); }).find("print: unexpected extra words 'a' 'b'"), std::string::npos);
}

TEST(ScriptArgs, AChoiceIsOneOfItsOptionsNamingThem) {
  ScriptArgs a("bench", {"gpu", "tpu"});
  EXPECT_EQ(a.choice("BACKEND", {"cpu", "gpu"}), "gpu");
  EXPECT_EQ(error_of([&] { a.choice_or("BACKEND", {"cpu", "gpu"}, "cpu"); }),
            "bench: BACKEND = 'tpu' is not valid; valid: one of: cpu gpu");
  ScriptArgs none("bench", {});
  EXPECT_EQ(none.choice_or("BACKEND", {"cpu", "gpu"}, "cpu"), "cpu");
}

// A describing reader records what a parser asks for, in order, with ranges and defaults, and stops at end().
TEST(ScriptArgs, DescribingRecordsEachArgumentAndStopsAtEnd) {
  ScriptArgs a = ScriptArgs::describing("drag");
  bool ended = false;
  try {
    EXPECT_EQ(a.real("FROM", {-1, 2}), -1.0);
    EXPECT_EQ(a.integer_or("FRAMES", {1, 10000}, 8), 8);
    EXPECT_EQ(a.choice_or("BUTTON", {"down", "up"}, ""), "");
    EXPECT_EQ(a.word("PATH"), "");
    a.end();
  } catch (const ScriptArgs::Described&) {
    ended = true;
  }
  EXPECT_TRUE(ended);
  const std::vector<ScriptArgSpec>& d = a.described();
  ASSERT_EQ(d.size(), 4u);
  EXPECT_EQ(d[0].what, "FROM");
  EXPECT_EQ(d[0].valid, "a number in [-1, 2]");
  EXPECT_FALSE(d[0].optional);
  EXPECT_EQ(d[1].valid, "an integer in [1, 10000]");
  EXPECT_TRUE(d[1].optional);
  EXPECT_EQ(d[1].fallback, "8");
  EXPECT_EQ(d[2].valid, "one of: down up");
  EXPECT_EQ(d[3].what, "PATH");
  EXPECT_EQ(d[3].valid, "");
}

}  // namespace
}  // namespace diffscope
