// test_video_writer.cpp — formats/video_writer.h with fake ffmpeg programs (tests/data/ffmpeg/, $DIFFSCOPE_FFMPEG):
// an ffmpeg that dies is reported by how it ended ("ffmpeg exited N: <its last lines>", "ffmpeg was killed by
// signal S"), its stderr is kept where a full output disk cannot lose it, and nothing is left beside the output.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/errors.h"
#include "formats/video_writer.h"
#include "io_test_util.h"
#include "test_paths.h"

namespace diffscope {
namespace {

// $DIFFSCOPE_FFMPEG set for one scope.
class FfmpegOverride {
 public:
  explicit FfmpegOverride(const std::string& program) {
    if (const char* old = std::getenv("DIFFSCOPE_FFMPEG")) m_old = old, m_had = true;
    ::setenv("DIFFSCOPE_FFMPEG", program.c_str(), 1);
  }
  ~FfmpegOverride() {
    if (m_had) ::setenv("DIFFSCOPE_FFMPEG", m_old.c_str(), 1);
    else ::unsetenv("DIFFSCOPE_FFMPEG");
  }

 private:
  std::string m_old;
  bool m_had = false;
};

// Feeds 64x64 frames to the fake until the encode fails; the error's message ("" when it did not fail).
std::string encode_error(const std::string& fake, const std::string& out) {
  const FfmpegOverride env(test::data_path("ffmpeg/" + fake));
  try {
    VideoWriter w(VideoOptions{out, 64, 64, 30, false, "--video", false});
    const std::vector<uint8_t> frame(64 * 64 * 4, 128);
    for (int i = 0; i < 200; ++i) w.add_frame(frame.data());  // 3.2 MB: more than the pipe holds
    w.finish();
  } catch (const InvalidInput& e) {
    return e.what();
  }
  return "";
}

// Reported case ffmpeg-dies: the fake kills itself with SIGKILL after 5 KB.
TEST(VideoWriter, AnFfmpegKilledBySignalIsNamedAsSuch) {
  test::TempDir dir;
  const std::string msg = encode_error("ffmpeg_killed", dir.file("v.mp4"));
  EXPECT_NE(msg.find("--video " + dir.file("v.mp4") + ": ffmpeg was killed by signal " + std::to_string(SIGKILL)),
            std::string::npos) << msg;
  EXPECT_EQ(msg.find("Broken pipe"), std::string::npos) << msg;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(VideoWriter, AnFfmpegThatExitsIsReportedWithItsStatusAndLastLines) {
  test::TempDir dir;
  const std::string msg = encode_error("ffmpeg_dies", dir.file("v.mp4"));
  EXPECT_NE(msg.find("ffmpeg exited 1: [rawvideo] simulated: Conversion failed! (encoder crashed after frame 0)"),
            std::string::npos) << msg;
  EXPECT_TRUE(dir.entries().empty());
}

// On a full disk ffmpeg's own words ("No space left on device") reach the message: its stderr is not a file
// beside the output (where the full disk would lose it).
TEST(VideoWriter, FullDiskWordsReachTheMessageAndTheLogIsNotBesideTheOutput) {
  test::TempDir dir;
  const std::string msg = encode_error("ffmpeg_disk_full", dir.file("v.mp4"));
  EXPECT_NE(msg.find("ffmpeg exited 1: "), std::string::npos) << msg;
  EXPECT_NE(msg.find("Error writing trailer: No space left on device"), std::string::npos) << msg;
  const size_t at = msg.find("stderr: ");
  ASSERT_NE(at, std::string::npos) << msg;
  EXPECT_NE(msg.compare(at + 8, dir.path().size(), dir.path()), 0) << "ffmpeg's stderr is beside the output: " << msg;
  EXPECT_TRUE(dir.entries().empty());
}

TEST(VideoWriter, StatusAndLastLinesText) {
  EXPECT_EQ(ffmpeg_status_text(1 << 8), "ffmpeg exited 1");  // W_EXITCODE(1, 0)
  EXPECT_EQ(ffmpeg_status_text(SIGKILL), "ffmpeg was killed by signal 9 (SIGKILL)");
  EXPECT_EQ(last_lines("a\n\nb\r\nc\nd\ne\n", 3), "c | d | e");
  EXPECT_EQ(last_lines("bad \xE8 byte\n"), "bad \\xE8 byte");
  // A terminal escape in the child's stderr (a newcomer trial's fake ffmpeg coloured the rest of the line red).
  EXPECT_EQ(last_lines("\x1b[31m red\n"), "\\x1B[31m red");
}

}  // namespace
}  // namespace diffscope
