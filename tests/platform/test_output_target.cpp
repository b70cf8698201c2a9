// test_output_target.cpp — what a write replaces (SEMANTICS §9; platform/atomic_write.h, platform/output_files.h): through a
// symbolic link the link's target is written and the link kept; a FIFO (as a device such as /dev/null would be) is
// refused before anything is written, and stays what it was; a video into a missing folder is "cannot write", not a
// missing ffmpeg; two outputs that are one file are refused naming both; a set of files is written all or none.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "base/errors.h"
#include "formats/video_writer.h"
#include "io_test_util.h"
#include "platform/atomic_write.h"
#include "platform/output_files.h"

namespace diffscope {
namespace {

namespace fs = std::filesystem;
using test::invalid_input_message;
using test::TempDir;

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

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

// Found by the public bug reports (tests/data/reported/): "output collisions".
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

// Found by the public bug reports (tests/data/reported/): "output collisions".
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

}  // namespace
}  // namespace diffscope
