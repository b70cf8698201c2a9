// test_json_path.cpp — file paths in JSON text (formats/json_path.h, SEMANTICS §6): any file name, UTF-8 or not,
// round-trips through a sidecar or the settings file; base64 by RFC 4648, UTF-8 validity by RFC 3629.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/errors.h"
#include "formats/json_path.h"

namespace diffscope {
namespace {

// Found by the public bug reports (tests/data/reported/): "sidecar paths".
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

// Found by the public bug reports (tests/data/reported/): "sidecar paths".
TEST(JsonPath, Utf8ValidityFollowsRfc3629) {
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  EXPECT_FALSE(is_valid_utf8("caf\xE9"));          // Latin-1 e-acute
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));         // overlong '/'
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));     // a surrogate
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_EQ(escape_invalid_utf8("/m/caf\xE9\xC3\xA9.st"), "/m/caf\\xE9\xC3\xA9.st");
}

// Found by the public bug reports (tests/data/reported/): "sidecar paths".
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

}  // namespace
}  // namespace diffscope
