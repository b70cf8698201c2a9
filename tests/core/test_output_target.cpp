// test_output_target.cpp — what a write replaces (SEMANTICS §9, newcomer trial of session 6): through a symbolic
// link the link's target is written and the link kept; a FIFO (as a device such as /dev/null would be) is refused
// before anything is written, and stays what it was; a video into a missing folder is "cannot write", not a
// missing ffmpeg.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/errors.h"
#include "formats/video_writer.h"
#include "io_test_util.h"
#include "platform/atomic_write.h"
#include "platform/output_files.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

TEST(OutputTarget, WriteThroughALinkReplacesItsTargetAndKeepsTheLink) {
  test::TempDir d;
  fs::create_directory(d.file("tgt"));
  fs::create_symlink("tgt/real.bin", d.file("link.bin"));  // relative, dangling until written
  EXPECT_EQ(output_target(d.file("link.bin"), "--out"), d.file("tgt/real.bin"));
  write_file_atomic(d.file("link.bin"), "abc", "--out");
  EXPECT_TRUE(fs::is_symlink(d.file("link.bin")));
  EXPECT_EQ(read_all(d.file("tgt/real.bin")), "abc");
  write_file_atomic(d.file("link.bin"), "de", "--out");  // the link now points at an existing file
  EXPECT_TRUE(fs::is_symlink(d.file("link.bin")));
  EXPECT_EQ(read_all(d.file("tgt/real.bin")), "de");
  EXPECT_EQ(d.entries().size(), 2u);  // tgt, link.bin: no temporary file left
}

TEST(OutputTarget, AFifoIsRefusedAndKept) {
  test::TempDir d;
  ASSERT_EQ(::mkfifo(d.file("f.npy").c_str(), 0644), 0);
  try {
    write_file_atomic(d.file("f.npy"), "abc", "--out");
    FAIL() << "a FIFO was accepted";
  } catch (const InvalidInput& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("--out '" + d.file("f.npy") + "' is not a regular file"), std::string::npos) << m;
  }
  struct stat st {};
  ASSERT_EQ(::lstat(d.file("f.npy").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(d.entries().size(), 1u);
}

TEST(OutputTarget, ALinkLoopIsRefused) {
  test::TempDir d;
  fs::create_symlink("b", d.file("a"));
  fs::create_symlink("a", d.file("b"));
  EXPECT_THROW(output_target(d.file("a"), "--out"), InvalidInput);
}

TEST(OutputTarget, VideoIntoAMissingFolderSaysCannotWriteNotFfmpeg) {
  test::TempDir d;
  VideoOptions o;
  o.path = d.file("nodir/v.mp4");
  o.width = o.height = 64;
  try {
    VideoWriter w(o);
    FAIL() << "a video into a missing folder was started";
  } catch (const InvalidInput& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot write"), std::string::npos) << m;
    EXPECT_EQ(m.find("ffmpeg"), std::string::npos) << m;
  }
  EXPECT_TRUE(d.entries().empty());
}

TEST(OutputTarget, AFileInThePlaceOfAFolderIsNamed) {
  test::TempDir d;
  std::ofstream(d.file("afile")) << "x";
  fs::create_directory(d.file("dir"));
  EXPECT_EQ(file_in_the_way(d.file("afile")), d.file("afile"));
  EXPECT_EQ(file_in_the_way(d.file("afile/sub/deeper")), d.file("afile"));
  EXPECT_EQ(file_in_the_way(d.file("dir")), "");
  EXPECT_EQ(file_in_the_way(d.file("dir/missing/deeper")), "");
  EXPECT_EQ(file_in_the_way_text(d.file("afile")), "'" + d.file("afile") + "' is a file, not a folder");
  try {
    write_file_atomic(d.file("afile/sub/x.json"), "{}", "export");
    FAIL() << "written under a file";
  } catch (const InvalidInput& e) {
    EXPECT_EQ(std::string(e.what()), "export " + d.file("afile/sub/x.json") + ": cannot write ('" + d.file("afile") +
                                         "' is a file, not a folder)");
  }
}

}  // namespace
}  // namespace diffscope
