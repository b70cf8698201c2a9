// test_headless_edges.cpp — small edges of `gui --headless` from a newcomer trial: a script saved
// with a UTF-8 byte-order mark runs (the mark used to make its first command "unknown"); `--screenshot ""` is
// refused, exit 2 (it used to write nothing and exit 0).
#include <gtest/gtest.h>

#include <fstream>

#include "gui_test_util.h"

namespace diffscope {
namespace {

TEST(HeadlessEdges, ScriptWithAByteOrderMarkRuns) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("s.txt"), std::ios::binary) << "\xEF\xBB\xBF" "frames 2\nexpect frame >= 0\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 320x240 --model '" +
                                                 guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                             logs.path());
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_EQ(r.err.find("unknown command"), std::string::npos) << r.err;
}

TEST(HeadlessEdges, EmptyScreenshotNameIsRefused) {
  test::TempDir logs;
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --screenshot ''", logs.path());
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("--screenshot: is empty; valid: a .png, .jpg or .jpeg path"), std::string::npos) << r.err;
}

// An export folder that is a file is named as a file (it said "cannot be created" / "Not a directory").
TEST(HeadlessEdges, AnExportFolderThatIsAFileIsNamedAsAFile) {
  test::TempDir dir, logs;
  std::ofstream(dir.file("afile")) << "not a folder";
  std::ofstream(dir.file("s.txt")) << "set n 50\nset steps 3\nwait_complete 5000\nset export_dir " << dir.file("afile")
                                   << "\nexport snapshot\nexport snapshot " << dir.file("afile/s.png") << "\n";
  const guitest::Result r = guitest::run_cli("gui --headless --backend cpu --no-persist --size 320x240 --model '" +
                                                 guitest::model_2d() + "' --script '" + dir.file("s.txt") + "'",
                                             logs.path());
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("export folder " + dir.file("afile") + ": '" + dir.file("afile") + "' is a file, not a folder"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find(dir.file("afile/s.png") + ": cannot write ('" + dir.file("afile") + "' is a file, not a folder)"),
            std::string::npos) << r.out;
}

}  // namespace
}  // namespace diffscope
